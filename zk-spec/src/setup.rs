//! [`Setup`]: what the server under test is set up for beyond a plain server (other ensemble
//! members, a read-only member, reconfig, TLS with a client certificate, SASL users). The
//! areas that need a setup skip their checks, with the option to give, without it.

use std::{net::SocketAddr, path::PathBuf};

/// What the target is set up for; [`Setup::default`] is a plain server.
///
/// ```
/// use zk_spec::Setup;
///
/// let members = vec!["127.0.0.1:2181".parse().unwrap(), "127.0.0.1:2182".parse().unwrap()];
/// let setup = Setup::default()
///     .ensemble(members)
///     .sasl("bob", "bobsecret");
/// assert_eq!(setup.ensemble.len(), 2);
/// assert_eq!(setup.sasl.as_ref().map(|s| s.user.as_str()), Some("bob"));
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Setup {
    /// The client addresses of the ensemble's members, the target among them or not
    /// (`--ensemble`): session moves go between them.
    pub ensemble: Vec<SocketAddr>,
    /// A member with `readonlymode.enabled` that has lost its quorum (`--read-only`).
    pub read_only: Option<SocketAddr>,
    /// The target may be reconfigured (`--reconfig`): a member is removed and added back.
    pub reconfig: bool,
    /// The super user's digest credentials (`--super user:password`), for reconfig on a
    /// server that checks ACLs.
    pub super_user: Option<Credentials>,
    /// A TLS client port and the files to connect to it (`--tls` and friends).
    pub tls: Option<TlsTarget>,
    /// A SASL DIGEST-MD5 user of the server's JAAS `Server` section (`--sasl user:password`).
    pub sasl: Option<Credentials>,
}

/// A user name and password.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user.
    pub user: String,
    /// The password.
    pub password: String,
}

impl Credentials {
    /// Parses `user:password`.
    pub fn parse(s: &str) -> Option<Credentials> {
        let (user, password) = s.split_once(':')?;
        (!user.is_empty()).then(|| Credentials {
            user: user.into(),
            password: password.into(),
        })
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Reports and panics must not show the password.
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// A TLS client port and the PEM files to connect to it with a client certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsTarget {
    /// The secure client port's address.
    pub addr: SocketAddr,
    /// The CA certificate(s) the server's certificate is checked against.
    pub ca: PathBuf,
    /// The client certificate (chain).
    pub cert: PathBuf,
    /// The client certificate's private key (PKCS#8 or RSA).
    pub key: PathBuf,
    /// The name (DNS or IP) the server's certificate must carry.
    pub server_name: String,
    /// The client certificate's subject DN as the server writes it (RFC 2253, such as
    /// `CN=zk-client`), when known: the x509 identity must be exactly that.
    pub subject: Option<String>,
}

impl Setup {
    /// Sets [`Setup::ensemble`].
    pub fn ensemble(mut self, members: Vec<SocketAddr>) -> Setup {
        self.ensemble = members;
        self
    }

    /// Sets [`Setup::read_only`].
    pub fn read_only(mut self, member: SocketAddr) -> Setup {
        self.read_only = Some(member);
        self
    }

    /// Allows reconfig and, when a server checks ACLs, authenticates as `super_user`.
    pub fn reconfig(mut self, super_user: Option<Credentials>) -> Setup {
        self.reconfig = true;
        self.super_user = super_user;
        self
    }

    /// Sets [`Setup::tls`].
    pub fn tls(mut self, tls: TlsTarget) -> Setup {
        self.tls = Some(tls);
        self
    }

    /// Sets [`Setup::sasl`].
    pub fn sasl(mut self, user: &str, password: &str) -> Setup {
        self.sasl = Some(Credentials {
            user: user.into(),
            password: password.into(),
        });
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_parse_and_hide_the_password() {
        let c = Credentials::parse("bob:s3cr:et").unwrap();
        assert_eq!((c.user.as_str(), c.password.as_str()), ("bob", "s3cr:et"));
        assert!(!format!("{c:?}").contains("s3cr"));
        assert_eq!(Credentials::parse("nocolon"), None);
        assert_eq!(Credentials::parse(":pw"), None);
    }
}
