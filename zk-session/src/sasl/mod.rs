//! SASL authentication (cargo feature `sasl`): DIGEST-MD5 today, other mechanisms as
//! [`SaslMechanism`] implementations.
//!
//! ```no_run
//! # async fn f() -> zk_session::Result<()> {
//! use zk_session::{Acl, Client, CreateOptions, Id, Perms, SaslConfig};
//!
//! // The server's JAAS `Server` section has `user_bob="bobsecret"` (DigestLoginModule).
//! let client = Client::builder("127.0.0.1:2181")
//!     .sasl(SaslConfig::digest_md5("bob", "bobsecret"))
//!     .connect()
//!     .await?;
//! let only_bob = vec![Acl::new(Perms::ALL, Id::new("sasl", "bob"))];
//! client
//!     .create("/bobs", b"", CreateOptions::persistent().with_acl(only_bob))
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! # How it runs
//!
//! Every new connection authenticates from scratch right after the server's ConnectResponse
//! and before anything else is written (SetWatches, auth packets, queued requests), as the
//! Java client does: the server keeps the SASL identity per connection, so a reconnect to any
//! server — the same or another ensemble member — redoes the exchange. SASL packets are
//! ordinary requests (opcode 102, jute `GetSASLRequest`/`SetSASLResponse`) with xids from the
//! session's counter. The exchange counts against the per-server connect timeout.
//!
//! A server that refuses the credentials (error -115, or -124 when it enforces SASL) or an
//! exchange that fails (a wrong `rspauth`, no challenge because the server has no JAAS
//! section) ends the session in [`SessionState::Ended`](crate::SessionState::Ended)`(EndReason::AuthFailed)`:
//! every waiting request fails with `AuthFailed` and there is no reconnect loop, since the
//! same credentials would fail on every server. A lost connection during the exchange is an
//! ordinary failed attempt: the next server is tried.
//!
//! # GSSAPI (Kerberos)
//!
//! With the cargo feature `gssapi`, [`SaslConfig::gssapi`] authenticates with Kerberos v5
//! through the system's MIT krb5: the ticket cache `kinit` fills, or a keytab; see
//! [`GssapiConfig`] and the [`gssapi`] module for credentials, the server principal
//! (`zookeeper/<host>`) and why this binding.

mod digest_md5;
mod directives;
#[cfg(feature = "gssapi")]
pub mod gssapi;
mod handshake;

#[cfg(feature = "gssapi")]
pub use gssapi::{GssapiConfig, HostnameCanonicalization};

use std::{fmt, sync::Arc};

#[cfg(test)]
pub(crate) use handshake::tests::TwoRounds;
pub(crate) use handshake::{SaslDone, SaslHandshake, SaslWork};

/// Why a SASL exchange could not go on: a server that breaks the mechanism or fails to prove
/// it knows the credentials, or (GSSAPI) credentials Kerberos cannot find or use.
///
/// ```
/// use zk_session::SaslError;
///
/// // A mechanism of one's own says why in its words.
/// let e = SaslError::new("no challenge");
/// assert_eq!(e.to_string(), "no challenge");
/// let e = SaslError::ServerNotVerified { mechanism: "DIGEST-MD5" };
/// assert!(e.to_string().contains("does not know the credentials"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SaslError {
    /// The server sent no token where the mechanism needs one (`expected`, such as
    /// "challenge"): SASL, or this mechanism, is not set up on the server.
    #[error(
        "the server sent no {mechanism} {expected} (is SASL configured on the server for it?)"
    )]
    NoServerToken {
        /// The mechanism.
        mechanism: &'static str,
        /// What was due.
        expected: &'static str,
    },
    /// The server's message breaks the mechanism's protocol: what is wrong with it.
    #[error("{what}")]
    Protocol {
        /// The mechanism.
        mechanism: &'static str,
        /// What is wrong, with the part of the message that shows it.
        what: Box<str>,
    },
    /// The server failed to prove that it knows the credentials (DIGEST-MD5's `rspauth`).
    #[error("the server's {mechanism} proof (rspauth) is wrong: it does not know the credentials")]
    ServerNotVerified {
        /// The mechanism.
        mechanism: &'static str,
    },
    /// The exchange was asked to go on after it was over.
    #[error("the {mechanism} exchange is already over")]
    AlreadyComplete {
        /// The mechanism.
        mechanism: &'static str,
    },
    /// The server does not take UTF-8, and a name or password is not ISO 8859-1.
    #[error("the server does not take UTF-8, and a name or password is not ISO 8859-1")]
    UnencodableCredentials,
    /// No Kerberos credentials for `principal` (`None`: the ticket cache's default) in
    /// `keytab` (`None`: the ticket cache); `reason` is Kerberos' own.
    #[error("no Kerberos credentials for {} in {}: {reason}", principal.as_deref().unwrap_or("the default principal"), CredentialSource(keytab.as_deref()))]
    NoCredentials {
        /// The client principal asked for.
        principal: Option<Box<str>>,
        /// The keytab given, if any.
        keytab: Option<Box<std::path::Path>>,
        /// The Kerberos library's words.
        reason: Box<str>,
    },
    /// Kerberos could not authenticate to `server_principal` (a principal the KDC does not
    /// know, a ticket it refuses...); `reason` is Kerberos' own.
    #[error("Kerberos context with {server_principal:?}: {reason}")]
    Kerberos {
        /// The server principal.
        server_principal: Box<str>,
        /// The Kerberos library's words.
        reason: Box<str>,
    },
    /// Another reason, in the mechanism's words (see [`SaslError::new`]).
    #[error("{0}")]
    Other(Box<str>),
}

/// Where Kerberos credentials were looked for, in [`SaslError::NoCredentials`]'s text.
struct CredentialSource<'a>(Option<&'a std::path::Path>);

impl fmt::Display for CredentialSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(k) => write!(f, "keytab {}", k.display()),
            None => f.write_str("the ticket cache (kinit?)"),
        }
    }
}

impl SaslError {
    /// An error in a mechanism's own words ([`Other`](Self::Other)), for mechanisms of one's
    /// own.
    ///
    /// See the example on [`SaslError`].
    pub fn new(message: impl Into<String>) -> Self {
        SaslError::Other(message.into().into_boxed_str())
    }
}

/// What to do after the server's token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SaslStep {
    /// Send this token to the server and give [`SaslExchange::step`] its answer.
    Send(Vec<u8>),
    /// The client is authenticated; nothing more is sent.
    Done,
}

/// A SASL mechanism: makes a fresh [`SaslExchange`] for every connection.
///
/// DIGEST-MD5 is built in ([`SaslConfig::digest_md5`]); implement this for another one and
/// pass it with [`SaslConfig::mechanism`]. `Debug` must not show secrets.
///
/// ```
/// use zk_session::{SaslError, SaslExchange, SaslMechanism, SaslStep};
///
/// /// A mechanism that sends one token and is done when the server answers.
/// #[derive(Debug)]
/// struct OneShot;
/// struct OneShotExchange;
///
/// impl SaslMechanism for OneShot {
///     fn name(&self) -> &str { "X-ONE-SHOT" }
///     fn start(&self, _server_host: &str) -> Result<Box<dyn SaslExchange>, SaslError> {
///         Ok(Box::new(OneShotExchange))
///     }
/// }
/// impl SaslExchange for OneShotExchange {
///     fn initial_response(&mut self) -> Result<Vec<u8>, SaslError> { Ok(b"hello".to_vec()) }
///     fn step(&mut self, _token: Option<&[u8]>) -> Result<SaslStep, SaslError> { Ok(SaslStep::Done) }
/// }
///
/// let mut ex = OneShot.start("zk1").unwrap();
/// assert_eq!(ex.initial_response().unwrap(), b"hello");
/// assert_eq!(ex.step(None).unwrap(), SaslStep::Done);
/// let config = zk_session::SaslConfig::mechanism(OneShot);
/// assert_eq!(config.mechanism_name(), "X-ONE-SHOT");
/// ```
pub trait SaslMechanism: fmt::Debug + Send + Sync {
    /// The mechanism's SASL name, such as `DIGEST-MD5`.
    fn name(&self) -> &str;

    /// Starts the exchange for one new connection to `server_host` (the host as written in
    /// the connect string; GSSAPI builds its service principal from it).
    fn start(&self, server_host: &str) -> Result<Box<dyn SaslExchange>, SaslError>;

    /// Whether [`start`](Self::start) and the exchange's calls may block the thread (network
    /// or disk I/O, such as GSSAPI asking the KDC): then the session runs them on tokio's
    /// blocking pool (`spawn_blocking`), so the runtime's threads, even a current-thread
    /// runtime's only one, run on. True unless a mechanism says otherwise; DIGEST-MD5 only
    /// computes, and says false.
    fn may_block(&self) -> bool {
        true
    }

    /// Checks the settings when the client is built, before anything is sent: an error
    /// here fails [`build`](crate::ClientBuilder::build) (GSSAPI checks that its keytab is
    /// there). Nothing to check by default.
    fn check(&self) -> Result<(), crate::ConfigError> {
        Ok(())
    }

    /// The server's name in this mechanism for a server at `server_host`, when it has one
    /// (GSSAPI's service principal): a refusal by the server names it.
    fn server_principal(&self, server_host: &str) -> Option<String> {
        let _ = server_host;
        None
    }
}

/// One connection's exchange: tokens in, tokens out; no I/O.
pub trait SaslExchange: Send {
    /// The first token, sent at once (empty when the mechanism has no initial response).
    fn initial_response(&mut self) -> Result<Vec<u8>, SaslError>;

    /// Takes the server's answer to the last token sent (`None` when the server sent a
    /// null token) and says what comes next.
    fn step(&mut self, token: Option<&[u8]>) -> Result<SaslStep, SaslError>;
}

/// How the client authenticates every connection with SASL; see
/// [`ClientBuilder::sasl`](crate::ClientBuilder::sasl). `Debug` hides the password.
///
/// ```
/// use zk_session::SaslConfig;
///
/// let config = SaslConfig::digest_md5("bob", "bobsecret");
/// assert_eq!(config.mechanism_name(), "DIGEST-MD5");
/// let shown = format!("{config:?}");
/// assert!(shown.contains("bob") && !shown.contains("bobsecret"));
/// ```
#[derive(Clone)]
pub struct SaslConfig {
    mechanism: Arc<dyn SaslMechanism>,
}

impl SaslConfig {
    /// DIGEST-MD5 with a user of the server's JAAS `Server` section (`user_<name>="<password>"`
    /// under `DigestLoginModule`). The server then knows the client as `sasl:<user>`.
    ///
    /// See the example on [`SaslConfig`].
    pub fn digest_md5(user: &str, password: &str) -> Self {
        SaslConfig::mechanism(digest_md5::DigestMd5::new(user, password))
    }

    /// GSSAPI (Kerberos v5) with these settings (cargo feature `gssapi`). The server then
    /// knows the client as `sasl:<principal>` (its short name, then `@REALM` unless the server
    /// sets `zookeeper.kerberos.removeRealmFromPrincipal`).
    ///
    /// See the example on [`GssapiConfig`].
    #[cfg(feature = "gssapi")]
    pub fn gssapi(config: GssapiConfig) -> Self {
        SaslConfig::mechanism(config)
    }

    /// Any other mechanism.
    ///
    /// See the example on [`SaslMechanism`].
    pub fn mechanism(mechanism: impl SaslMechanism + 'static) -> Self {
        SaslConfig {
            mechanism: Arc::new(mechanism),
        }
    }

    /// The mechanism's SASL name.
    ///
    /// See the example on [`SaslConfig`].
    pub fn mechanism_name(&self) -> &str {
        self.mechanism.name()
    }

    /// Starts the mechanism's exchange for one connection to `server_host`, for code that
    /// speaks the protocol itself (a conformance checker, a proxy).
    ///
    /// ```
    /// use zk_session::{SaslConfig, SaslStep};
    ///
    /// let mut ex = SaslConfig::digest_md5("bob", "bobsecret").start("zk1").unwrap();
    /// // DIGEST-MD5 has no initial response: the server sends the first challenge.
    /// assert!(ex.initial_response().unwrap().is_empty());
    /// ```
    pub fn start(&self, server_host: &str) -> Result<Box<dyn SaslExchange>, SaslError> {
        self.mechanism.start(server_host)
    }

    /// See [`SaslMechanism::check`].
    pub(crate) fn check(&self) -> Result<(), crate::ConfigError> {
        self.mechanism.check()
    }

    pub(crate) fn mechanism_arc(&self) -> Arc<dyn SaslMechanism> {
        self.mechanism.clone()
    }
}

impl fmt::Debug for SaslConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Mechanisms redact their own secrets.
        f.debug_struct("SaslConfig")
            .field("mechanism", &self.mechanism)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Client, SaslConfig};

    #[test]
    fn the_builder_debug_hides_the_sasl_password() {
        let builder = Client::builder("zk1").sasl(SaslConfig::digest_md5("bob", "s3cr3t-pw"));
        let shown = format!("{builder:?}");
        assert!(
            shown.contains("DigestMd5") && shown.contains("bob"),
            "{shown}"
        );
        assert!(!shown.contains("s3cr3t-pw"), "{shown}");
    }
}
