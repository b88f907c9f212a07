//! Kerberos on the server: a JAAS `Server` section with the `Krb5LoginModule`, the service
//! keytab and each member's own service principal, and the JVM pointed at the test realm.

use std::path::PathBuf;

use crate::{Kdc, SaslServer, ServerOptions};

/// How a test server logs in to the test KDC ([`SaslServer::kerberos`]).
///
/// ```
/// use zk_testkit::kerberos_server::KerberosServer;
/// let k = KerberosServer::new("/tmp/zk.keytab", "/tmp/krb5.conf", ["zookeeper/localhost"]);
/// assert!(k.jaas(0).contains(r#"principal="zookeeper/localhost@ZK.TEST""#));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KerberosServer {
    /// The keytab with every member's service key.
    pub keytab: PathBuf,
    /// The realm's `krb5.conf` (`-Djava.security.krb5.conf`).
    pub krb5_conf: PathBuf,
    /// Member `i`'s service principal (without the realm); the last one serves the members
    /// beyond the list, so one principal serves them all.
    pub principals: Vec<String>,
}

impl KerberosServer {
    /// Members log in as `principals` (in member order) with keys from `keytab`.
    pub fn new<S: Into<String>>(
        keytab: impl Into<PathBuf>,
        krb5_conf: impl Into<PathBuf>,
        principals: impl IntoIterator<Item = S>,
    ) -> Self {
        KerberosServer {
            keytab: keytab.into(),
            krb5_conf: krb5_conf.into(),
            principals: principals.into_iter().map(Into::into).collect(),
        }
    }

    /// Adds the service principals to `kdc`, exports their keys and returns the settings.
    pub fn create(kdc: &Kdc, principals: &[&str]) -> crate::Result<Self> {
        let keytab = kdc
            .dir()
            .join(format!("service-{}.keytab", crate::free_port()?));
        for p in principals {
            // Another server of the same test process may have made it already.
            let _ = kdc.add_principal(p);
        }
        kdc.keytab(&keytab, principals)?;
        Ok(KerberosServer::new(
            keytab,
            kdc.krb5_conf(),
            principals.iter().copied(),
        ))
    }

    /// Member `member`'s (0-based) JAAS file text.
    pub fn jaas(&self, member: usize) -> String {
        let principal = self
            .principals
            .get(member)
            .or(self.principals.last())
            .map(|p| Kdc::principal(p))
            .unwrap_or_default();
        format!(
            "Server {{\n  com.sun.security.auth.module.Krb5LoginModule required\n  \
             useKeyTab=true\n  keyTab=\"{}\"\n  storeKey=true\n  useTicketCache=false\n  \
             isInitiator=false\n  principal=\"{principal}\";\n}};\n",
            self.keytab.display()
        )
    }

    /// `options` serving SASL with this login, the JVM reading the realm's krb5.conf.
    pub fn apply(self, options: ServerOptions) -> ServerOptions {
        let krb5_conf = self.krb5_conf.display().to_string();
        options
            .sasl(SaslServer::kerberos(self))
            .system_property("java.security.krb5.conf", krb5_conf)
    }
}
