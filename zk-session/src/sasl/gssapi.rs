//! SASL GSSAPI (Kerberos v5, RFC 4752) through the system's GSS-API library (cargo feature
//! `gssapi`).
//!
//! # Why MIT krb5 through `libgssapi`
//!
//! Kerberos in production is the KDC's and the operating system's business: ticket caches
//! filled by `kinit` or SSSD (`FILE:`, `DIR:`, `KEYRING:`, `KCM:`), keytabs, `krb5.conf`
//! realms and canonicalization rules, encryption types, referrals, clock skew. The system's
//! Kerberos library already handles all of them exactly as `kinit`, `ssh` and the Java
//! client's KDCs expect, so the feature binds MIT krb5's GSS-API (`libgssapi_krb5`, Debian's
//! `libgssapi-krb5-2`; `libkrb5-dev` to build) with the `libgssapi` crate, a maintained safe
//! binding. A pure-Rust Kerberos would have to re-implement those cache and keytab formats
//! and every KDC quirk. The feature stays out of the default build: it links a C library and
//! its build needs `libclang` (bindgen).
//!
//! # Credentials
//!
//! - The ticket cache, as `kinit` leaves it: `KRB5CCNAME` or the default cache;
//!   [`GssapiConfig::principal`] picks one principal's cache out of a collection.
//! - A keytab ([`GssapiConfig::keytab`] with [`GssapiConfig::principal`]): the library gets
//!   (and renews) tickets from it by itself, into an in-memory ticket cache of the
//!   credential's own (MIT krb5's `gss_acquire_cred_from` with `client_keytab` and a
//!   `MEMORY:` `ccache`): the user's default cache is neither read nor written, whoever's
//!   tickets it holds, and no environment variable is touched. A keytab that does not exist
//!   is refused when the client is built ([`ConfigError::ReadFile`](crate::ConfigError::ReadFile)).
//!
//! # Failures
//!
//! No ticket, an expired one, a server principal the KDC does not know, or a principal the
//! KDC refuses: the exchange fails before anything is sent, and the session ends at once in
//! `SessionState::Ended(EndReason::AuthFailed)` (every request fails with `AuthFailed`), as
//! when the server refuses; no retry loop. The Kerberos library's message (such as "Ticket
//! expired") is logged with the `tracing` feature.
//!
//! # Server principal
//!
//! `zookeeper/<host>`, where `<host>` is the server's host as written in the connect string,
//! canonicalized by the Kerberos library as `krb5.conf` says (`dns_canonicalize_hostname`,
//! `rdns`) — the Java client's default (`zookeeper.sasl.client.canonicalize.hostname=true`)
//! in effect: `127.0.0.1` usually becomes `localhost`. The service name
//! (`zookeeper.sasl.client.username`), the host, canonicalization and the whole principal
//! (`zookeeper.server.principal`) can be changed.
//!
//! # Blocking
//!
//! GSS-API calls are synchronous and may ask the KDC for a service ticket (a round trip,
//! bounded by krb5's own timeouts); the session runs them on tokio's blocking pool
//! (`spawn_blocking`) between the ConnectResponse and the first request, so the runtime's
//! threads, even a current-thread runtime's only one, run on meanwhile. A call that
//! outlasts the connection attempt's timeout fails the attempt; its late end is dropped.

mod cred_store;
mod exchange;
mod security_layer;

use std::path::PathBuf;

use libgssapi::{
    context::{ClientCtx, CtxFlags, SecurityContext},
    credential::{Cred, CredUsage},
    name::Name,
    oid::{OidSet, GSS_MECH_KRB5, GSS_NT_HOSTBASED_SERVICE, GSS_NT_KRB5_PRINCIPAL},
};

use super::{SaslError, SaslExchange, SaslMechanism};

/// How the server's host becomes the host part of its principal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum HostnameCanonicalization {
    /// As the Kerberos library's `krb5.conf` says (`dns_canonicalize_hostname`, `rdns`);
    /// with MIT's defaults a forward and reverse DNS lookup, like the Java client's default.
    #[default]
    Krb5Config,
    /// The host exactly as written (`zookeeper.sasl.client.canonicalize.hostname=false`).
    AsWritten,
}

/// SASL GSSAPI (Kerberos v5) settings; pass them to
/// [`SaslConfig::gssapi`](crate::SaslConfig::gssapi). See the [module](self) for how
/// credentials and the server principal are found.
///
/// ```no_run
/// # async fn f() -> zk_session::Result<()> {
/// use zk_session::{Client, GssapiConfig, SaslConfig};
///
/// // After `kinit alice`: the ticket cache, server principal zookeeper/<host>.
/// let client = Client::builder("zk1.example.com:2181")
///     .sasl(SaslConfig::gssapi(GssapiConfig::new()))
///     .connect()
///     .await?;
///
/// // A service with its own keytab.
/// let kafka = GssapiConfig::new()
///     .principal("kafka/broker1.example.com@EXAMPLE.COM")
///     .keytab("/etc/security/keytabs/kafka.keytab");
/// let client = Client::builder("zk1.example.com:2181")
///     .sasl(SaslConfig::gssapi(kafka))
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GssapiConfig {
    service: String,
    host: Option<String>,
    canonicalization: HostnameCanonicalization,
    server_principal: Option<String>,
    principal: Option<String>,
    keytab: Option<PathBuf>,
}

impl Default for GssapiConfig {
    fn default() -> Self {
        GssapiConfig {
            service: "zookeeper".to_string(),
            host: None,
            canonicalization: HostnameCanonicalization::default(),
            server_principal: None,
            principal: None,
            keytab: None,
        }
    }
}

impl GssapiConfig {
    /// The defaults: default credentials, server principal `zookeeper/<host>`.
    ///
    /// ```
    /// use zk_session::GssapiConfig;
    /// let c = GssapiConfig::new().service_name("zk").server_host("zk.example.com");
    /// assert_eq!(c.server_principal_for("10.0.0.1"), "zk@zk.example.com");
    /// ```
    pub fn new() -> Self {
        GssapiConfig::default()
    }

    /// The service part of the server principal (default `zookeeper`; the Java client's
    /// `zookeeper.sasl.client.username`).
    pub fn service_name(mut self, service: impl Into<String>) -> Self {
        self.service = service.into();
        self
    }

    /// The host part of the server principal for every server, instead of each server's
    /// host from the connect string.
    pub fn server_host(mut self, host: impl Into<String>) -> Self {
        self.host = Some(host.into());
        self
    }

    /// How the host is canonicalized (default [`HostnameCanonicalization::Krb5Config`]).
    pub fn canonicalization(mut self, how: HostnameCanonicalization) -> Self {
        self.canonicalization = how;
        self
    }

    /// The whole server principal, such as `zookeeper/zk1.example.com@EXAMPLE.COM`, for every
    /// server (the Java client's `zookeeper.server.principal`); service name, host and
    /// canonicalization are then unused.
    pub fn server_principal(mut self, principal: impl Into<String>) -> Self {
        self.server_principal = Some(principal.into());
        self
    }

    /// The client principal, such as `alice@EXAMPLE.COM` (default: the ticket cache's).
    pub fn principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// A client keytab that holds the [`principal`](Self::principal)'s keys: tickets come
    /// from it, no `kinit` needed, into a ticket cache in memory that belongs to the client
    /// (the user's default cache is left alone). Needs [`principal`](Self::principal); a
    /// file that does not exist fails [`build`](crate::ClientBuilder::build) with
    /// [`ConfigError::ReadFile`](crate::ConfigError::ReadFile).
    pub fn keytab(mut self, path: impl Into<PathBuf>) -> Self {
        self.keytab = Some(path.into());
        self
    }

    /// The server principal used for a server at `server_host`, in GSS-API form:
    /// `service@host` (a host-based name, canonicalized by the Kerberos library) or
    /// `service/host[@REALM]` (taken as it is).
    ///
    /// ```
    /// use zk_session::{GssapiConfig, HostnameCanonicalization};
    /// assert_eq!(GssapiConfig::new().server_principal_for("zk1"), "zookeeper@zk1");
    /// let literal = GssapiConfig::new().canonicalization(HostnameCanonicalization::AsWritten);
    /// assert_eq!(literal.server_principal_for("zk1"), "zookeeper/zk1");
    /// ```
    pub fn server_principal_for(&self, server_host: &str) -> String {
        if let Some(p) = &self.server_principal {
            return p.clone();
        }
        let host = self.host.as_deref().unwrap_or(server_host);
        match self.canonicalization {
            HostnameCanonicalization::Krb5Config => format!("{}@{host}", self.service),
            HostnameCanonicalization::AsWritten => format!("{}/{host}", self.service),
        }
    }

    fn target(&self, server_host: &str) -> Result<Name, SaslError> {
        let name = self.server_principal_for(server_host);
        let kind = match (&self.server_principal, self.canonicalization) {
            (None, HostnameCanonicalization::Krb5Config) => GSS_NT_HOSTBASED_SERVICE,
            _ => GSS_NT_KRB5_PRINCIPAL,
        };
        Name::new(name.as_bytes(), Some(kind)).map_err(|e| SaslError::Kerberos {
            reason: format!("bad server principal: {e}").into(),
            server_principal: name.into(),
        })
    }

    /// The client credential: from the keytab when one is given (into a cache of its own),
    /// else the ticket cache.
    fn credential(&self) -> Result<Cred, SaslError> {
        let no_credentials = |reason: String| SaslError::NoCredentials {
            principal: self.principal.as_deref().map(Into::into),
            keytab: self.keytab.as_deref().map(Into::into),
            reason: reason.into(),
        };
        if let Some(keytab) = &self.keytab {
            let Some(principal) = &self.principal else {
                return Err(no_credentials("no principal given to log in as".into()));
            };
            return cred_store::acquire(principal, keytab).map_err(no_credentials);
        }
        let name = match &self.principal {
            Some(p) => Some(
                Name::new(p.as_bytes(), Some(GSS_NT_KRB5_PRINCIPAL))
                    .map_err(|e| no_credentials(format!("bad principal: {e}")))?,
            ),
            None => None,
        };
        let mechs = OidSet::singleton(GSS_MECH_KRB5)
            .map_err(|e| no_credentials(format!("GSS-API: {e}")))?;
        Cred::acquire(name.as_ref(), None, CredUsage::Initiate, Some(&mechs))
            .map_err(|e| no_credentials(e.to_string()))
    }
}

impl SaslMechanism for GssapiConfig {
    fn name(&self) -> &str {
        "GSSAPI"
    }

    /// A keytab must be there to read.
    fn check(&self) -> Result<(), crate::ConfigError> {
        match &self.keytab {
            Some(k) => std::fs::File::open(k)
                .map(drop)
                .map_err(|e| crate::ConfigError::ReadFile {
                    path: k.clone(),
                    source: std::sync::Arc::new(e),
                }),
            None => Ok(()),
        }
    }

    fn server_principal(&self, server_host: &str) -> Option<String> {
        Some(self.server_principal_for(server_host))
    }

    fn start(&self, server_host: &str) -> Result<Box<dyn SaslExchange>, SaslError> {
        let cred = self.credential()?;
        let target = self.target(server_host)?;
        let principal = self.server_principal_for(server_host);
        // Mutual authentication, as ZooKeeper's server (Java's GSSAPI) expects; integrity so
        // that the security-layer tokens can be wrapped.
        let flags = CtxFlags::GSS_C_MUTUAL_FLAG
            | CtxFlags::GSS_C_SEQUENCE_FLAG
            | CtxFlags::GSS_C_INTEG_FLAG;
        let ctx = ClientCtx::new(Some(cred), target, flags, Some(GSS_MECH_KRB5));
        Ok(Box::new(exchange::Exchange::new(Krb5Context {
            ctx,
            principal,
        })))
    }
}

/// The real context: MIT krb5 through `libgssapi`.
struct Krb5Context {
    ctx: ClientCtx,
    principal: String,
}

impl exchange::Context for Krb5Context {
    fn step(&mut self, token: Option<&[u8]>) -> Result<Option<Vec<u8>>, SaslError> {
        let out = self
            .ctx
            .step(token, None)
            .map_err(|e| self.failed(e.to_string()))?;
        Ok(out.map(|b| b.to_vec()))
    }

    fn is_complete(&self) -> bool {
        self.ctx.is_complete()
    }

    fn wrap(&mut self, message: &[u8]) -> Result<Vec<u8>, SaslError> {
        self.ctx
            .wrap(false, message)
            .map(|b| b.to_vec())
            .map_err(|e| self.failed(format!("GSS-API wrap: {e}")))
    }

    fn unwrap(&mut self, message: &[u8]) -> Result<Vec<u8>, SaslError> {
        self.ctx
            .unwrap(message)
            .map(|b| b.to_vec())
            .map_err(|e| self.failed(format!("GSS-API unwrap of the layer offer: {e}")))
    }
}

impl Krb5Context {
    /// The context with the server failed for `reason`.
    fn failed(&self, reason: String) -> SaslError {
        SaslError::Kerberos {
            server_principal: self.principal.as_str().into(),
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_principal_follows_the_java_clients_settings() {
        let c = GssapiConfig::new();
        assert_eq!(c.server_principal_for("127.0.0.1"), "zookeeper@127.0.0.1");
        let c = c
            .service_name("zk")
            .canonicalization(HostnameCanonicalization::AsWritten);
        assert_eq!(c.server_principal_for("zk2"), "zk/zk2");
        let c = c.server_host("zk.example.com");
        assert_eq!(c.server_principal_for("zk2"), "zk/zk.example.com");
        let c = c.server_principal("zookeeper/zk9@EXAMPLE.COM");
        assert_eq!(c.server_principal_for("zk2"), "zookeeper/zk9@EXAMPLE.COM");
    }

    #[test]
    fn a_keytab_that_is_not_there_is_a_config_error_naming_it() {
        let c = GssapiConfig::new()
            .principal("alice@EXAMPLE.COM")
            .keytab("/nonexistent/alice.keytab");
        match c.check() {
            Err(crate::ConfigError::ReadFile { path, .. }) => {
                assert_eq!(path, PathBuf::from("/nonexistent/alice.keytab"))
            }
            other => panic!("{other:?}"),
        }
        assert!(GssapiConfig::new().check().is_ok());
    }
}
