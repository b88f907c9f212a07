//! TLS and SASL: the global options that secure the connection, made into client settings.
//! Without the cargo features `tls`/`sasl` the options still parse, and using one is a clear
//! usage error rather than an unknown flag.

use std::path::{Path, PathBuf};

use clap::Args;
use zk_session::ClientBuilder;

use crate::{
    kerberos::{self, Canonicalize, Mechanism},
    Failure,
};

/// Where the SASL password comes from when `--sasl-password-file` is not given.
pub const PASSWORD_ENV: &str = "ZK_SASL_PASSWORD";

/// The connection's security. The SASL password is deliberately no argument: any user of the
/// machine can read a process's arguments (ps, /proc/PID/cmdline), while its environment and a
/// mode-600 file are its owner's alone.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "TLS and SASL (secured ensembles)")]
pub struct Security {
    /// Connect with TLS, trusting the CA certificates in this PEM file (repeatable)
    #[arg(long = "tls-ca", value_name = "FILE", global = true)]
    pub tls_ca: Vec<PathBuf>,
    /// Present this client certificate (PEM) to the server. ZooKeeper's combined PEM key
    /// store may be given to both --tls-cert and --tls-key
    #[arg(long, value_name = "FILE", global = true, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM, unencrypted)
    #[arg(long, value_name = "FILE", global = true, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Check server certificates against NAME instead of each host of --server
    #[arg(long, value_name = "NAME", global = true)]
    pub tls_server_name: Option<String>,
    /// Accept any name in a server certificate signed by a trusted CA (dangerous: anyone with
    /// a certificate from those CAs can pose as the server)
    #[arg(long, global = true, conflicts_with = "tls_server_name")]
    pub tls_insecure_skip_name_check: bool,
    /// Authenticate with SASL DIGEST-MD5 as USER (a user of the server's JAAS file)
    #[arg(long, value_name = "USER", global = true)]
    pub sasl_user: Option<String>,
    /// The SASL password: the first line of FILE, else $ZK_SASL_PASSWORD (never an argument,
    /// which other users could read with ps)
    #[arg(long, value_name = "FILE", global = true, requires = "sasl_user")]
    pub sasl_password_file: Option<PathBuf>,
    /// The SASL mechanism: digest-md5 (--sasl-user) or gssapi (Kerberos)
    #[arg(long, value_enum, value_name = "MECHANISM", global = true)]
    pub sasl_mechanism: Option<Mechanism>,
    /// Kerberos: the client principal, such as alice@EXAMPLE.COM (default: the ticket
    /// cache's)
    #[arg(long, value_name = "PRINCIPAL", global = true)]
    pub sasl_principal: Option<String>,
    /// Kerberos: get tickets from this keytab (with --sasl-principal) instead of kinit's cache
    #[arg(long, value_name = "FILE", global = true)]
    pub sasl_keytab: Option<PathBuf>,
    /// Kerberos: the service part of the server principal (default zookeeper)
    #[arg(long, value_name = "NAME", global = true)]
    pub sasl_service: Option<String>,
    /// Kerberos: the whole server principal, for every server
    #[arg(long, value_name = "PRINCIPAL", global = true)]
    pub sasl_server_principal: Option<String>,
    /// Kerberos: how a server's host becomes part of its principal
    #[arg(long, value_enum, value_name = "HOW", global = true, default_value_t)]
    pub sasl_canonicalize: Canonicalize,
}

impl Security {
    fn wants_tls(&self) -> bool {
        !self.tls_ca.is_empty()
            || self.tls_cert.is_some()
            || self.tls_server_name.is_some()
            || self.tls_insecure_skip_name_check
    }

    /// Kerberos options were given: the mechanism is GSSAPI even if not named.
    pub fn wants_gssapi(&self) -> bool {
        self.sasl_mechanism == Some(Mechanism::Gssapi)
            || (self.sasl_mechanism.is_none()
                && (self.sasl_principal.is_some() || self.sasl_keytab.is_some()))
    }
}

/// `builder` with TLS and SASL as the options say. A bad TLS file or name, or a SASL user
/// without a password, is a usage error.
pub fn apply(mut builder: ClientBuilder, s: &Security) -> Result<ClientBuilder, Failure> {
    if s.wants_tls() {
        builder = tls(builder, s)?;
    }
    if s.wants_gssapi() {
        if s.sasl_user.is_some() {
            return Err(Failure::usage(
                "--sasl-user is for DIGEST-MD5; Kerberos takes --sasl-principal".into(),
            ));
        }
        return kerberos::gssapi(builder, s);
    }
    if let Some(user) = &s.sasl_user {
        let password = password(s.sasl_password_file.as_deref(), std::env::var(PASSWORD_ENV))?;
        builder = sasl(builder, user, &password)?;
    }
    Ok(builder)
}

#[cfg(feature = "tls")]
fn tls(builder: ClientBuilder, s: &Security) -> Result<ClientBuilder, Failure> {
    use zk_session::{ServerNameCheck, TlsConfig};

    let mut config = TlsConfig::builder();
    for ca in &s.tls_ca {
        config = config.ca_file(ca);
    }
    if let (Some(cert), Some(key)) = (&s.tls_cert, &s.tls_key) {
        config = config.client_cert_files(cert, key);
    }
    let check = match (&s.tls_server_name, s.tls_insecure_skip_name_check) {
        (Some(name), _) => ServerNameCheck::Name(name.clone()),
        (None, true) => ServerNameCheck::DangerousAnyName,
        (None, false) => ServerNameCheck::ConnectHost,
    };
    let config = config
        .server_name(check)
        .build()
        .map_err(|e| Failure::usage(format!("TLS options: {e}")))?;
    Ok(builder.tls(config))
}

#[cfg(not(feature = "tls"))]
fn tls(_: ClientBuilder, _: &Security) -> Result<ClientBuilder, Failure> {
    Err(Failure::usage(
        "this zk was built without TLS (cargo feature `tls`)".into(),
    ))
}

#[cfg(feature = "sasl")]
fn sasl(builder: ClientBuilder, user: &str, password: &str) -> Result<ClientBuilder, Failure> {
    Ok(builder.sasl(zk_session::SaslConfig::digest_md5(user, password)))
}

#[cfg(not(feature = "sasl"))]
fn sasl(_: ClientBuilder, _: &str, _: &str) -> Result<ClientBuilder, Failure> {
    Err(Failure::usage(
        "this zk was built without SASL (cargo feature `sasl`)".into(),
    ))
}

/// The password: the first line of `file` when given, else the environment variable.
fn password(
    file: Option<&Path>,
    env: Result<String, std::env::VarError>,
) -> Result<String, Failure> {
    if let Some(file) = file {
        let text = std::fs::read_to_string(file)
            .map_err(|e| Failure::usage(format!("--sasl-password-file {}: {e}", file.display())))?;
        return Ok(text.lines().next().unwrap_or_default().to_owned());
    }
    env.map_err(|e| {
        Failure::usage(format!(
            "--sasl-user needs a password: --sasl-password-file FILE or ${PASSWORD_ENV} ({e})"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::env::VarError;

    #[test]
    fn the_password_comes_from_the_file_first_then_the_environment() {
        let dir = std::env::temp_dir().join(format!("zk-cli-pw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pw");
        std::fs::write(&file, "s3cret\nignored\n").unwrap();
        let from_file = password(Some(&file), Ok("env".into())).unwrap();
        assert_eq!(from_file, "s3cret");
        assert_eq!(password(None, Ok("env".into())).unwrap(), "env");
        let none = password(None, Err(VarError::NotPresent)).unwrap_err();
        assert_eq!(none.code, crate::exit::USAGE);
        assert!(none.message.contains(PASSWORD_ENV), "{}", none.message);
        let missing = password(Some(&dir.join("none")), Ok("env".into())).unwrap_err();
        assert!(missing.message.contains("--sasl-password-file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
