//! `--sasl-mechanism gssapi`: Kerberos v5 with the ticket cache `kinit` filled, or with
//! `--sasl-keytab` and `--sasl-principal`; the server principal is `zookeeper/<host>` unless
//! `--sasl-service`, `--sasl-server-principal` or `--sasl-canonicalize` say otherwise.

use clap::ValueEnum;
use zk_session::ClientBuilder;

use crate::{security::Security, Failure};

/// `--sasl-mechanism`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mechanism {
    /// DIGEST-MD5 with --sasl-user and a password
    #[default]
    DigestMd5,
    /// Kerberos v5: the ticket cache (kinit), or --sasl-keytab with --sasl-principal
    Gssapi,
}

/// `--sasl-canonicalize`: how a server's host becomes part of its principal.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Canonicalize {
    /// As krb5.conf says (dns_canonicalize_hostname, rdns), like the Java client's default
    #[default]
    Krb5,
    /// The host exactly as written in --server
    AsWritten,
}

#[cfg(feature = "gssapi")]
pub fn gssapi(builder: ClientBuilder, s: &Security) -> Result<ClientBuilder, Failure> {
    use zk_session::{GssapiConfig, HostnameCanonicalization, SaslConfig};

    let mut config = GssapiConfig::new().canonicalization(match s.sasl_canonicalize {
        Canonicalize::Krb5 => HostnameCanonicalization::Krb5Config,
        Canonicalize::AsWritten => HostnameCanonicalization::AsWritten,
    });
    if let Some(principal) = &s.sasl_principal {
        config = config.principal(principal);
    }
    if let Some(keytab) = &s.sasl_keytab {
        config = config.keytab(keytab);
    }
    if let Some(service) = &s.sasl_service {
        config = config.service_name(service);
    }
    if let Some(principal) = &s.sasl_server_principal {
        config = config.server_principal(principal);
    }
    Ok(builder.sasl(SaslConfig::gssapi(config)))
}

#[cfg(not(feature = "gssapi"))]
pub fn gssapi(_: ClientBuilder, _: &Security) -> Result<ClientBuilder, Failure> {
    Err(Failure::usage(
        "this zk was built without Kerberos (cargo feature `gssapi`)".into(),
    ))
}
