//! SASL on the server: a JAAS `Server` section with DIGEST-MD5 users (or a Kerberos login,
//! see [`crate::kerberos_server`]), the SASL authentication provider and, optionally,
//! enforced authentication.

use std::path::Path;

/// The JAAS file the harness writes beside zoo.cfg when SASL is on.
pub const JAAS_FILE: &str = "jaas.conf";

/// SASL settings of a test server (see [`crate::ServerOptions::sasl`]).
///
/// ```
/// use zk_testkit::SaslServer;
/// let sasl = SaslServer::digest_md5().user("bob", "bobsecret").enforce(true);
/// assert!(sasl.jaas(0).contains(r#"user_bob="bobsecret""#));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SaslServer {
    /// `(user, password)` pairs of the `DigestLoginModule`.
    pub users: Vec<(String, String)>,
    /// `enforce.auth.enabled=true` with `enforce.auth.schemes=sasl`: a client that has not
    /// authenticated gets error -124 on its first request and is disconnected.
    pub enforce: bool,
    /// Kerberos (GSSAPI) instead of DIGEST-MD5 users.
    pub kerberos: Option<crate::kerberos_server::KerberosServer>,
}

impl SaslServer {
    /// DIGEST-MD5 (`DigestLoginModule`) with no users yet.
    pub fn digest_md5() -> Self {
        SaslServer::default()
    }

    /// Kerberos: each member logs in with its service principal from a keytab.
    pub fn kerberos(login: crate::kerberos_server::KerberosServer) -> Self {
        SaslServer {
            kerberos: Some(login),
            ..SaslServer::default()
        }
    }

    /// Adds a user.
    pub fn user(mut self, name: impl Into<String>, password: impl Into<String>) -> Self {
        self.users.push((name.into(), password.into()));
        self
    }

    /// Requires every client to authenticate with SASL.
    pub fn enforce(mut self, on: bool) -> Self {
        self.enforce = on;
        self
    }

    /// The JAAS configuration file's text (for ensemble member `member`, 0-based).
    pub fn jaas(&self, member: usize) -> String {
        if let Some(k) = &self.kerberos {
            return k.jaas(member);
        }
        let mut s =
            String::from("Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required");
        for (user, password) in &self.users {
            s.push_str(&format!("\n  user_{user}={}", quoted(password)));
        }
        s.push_str(";\n};\n");
        s
    }

    /// The zoo.cfg lines: the provider, and enforcement if asked.
    pub fn zoo_cfg_lines(&self) -> Vec<(&'static str, &'static str)> {
        let mut lines = vec![(
            "authProvider.1",
            "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
        )];
        if self.enforce {
            lines.extend([
                ("enforce.auth.enabled", "true"),
                ("enforce.auth.schemes", "sasl"),
            ]);
        }
        lines
    }

    /// The JVM property that points the server at its JAAS file in `dir`.
    pub fn jvm_property(dir: &Path) -> String {
        format!(
            "-Djava.security.auth.login.config={}",
            dir.join(JAAS_FILE).display()
        )
    }
}

/// A JAAS quoted string (its tokenizer takes backslash escapes).
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaas_lists_every_user_in_one_server_section() {
        let jaas = SaslServer::digest_md5()
            .user("bob", "bobsecret")
            .user("eve", "say \"hi\"")
            .jaas(0);
        assert_eq!(
            jaas,
            "Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  \
             user_bob=\"bobsecret\"\n  user_eve=\"say \\\"hi\\\"\";\n};\n"
        );
    }

    #[test]
    fn enforcement_adds_its_two_keys() {
        assert_eq!(SaslServer::digest_md5().zoo_cfg_lines().len(), 1);
        let lines = SaslServer::digest_md5().enforce(true).zoo_cfg_lines();
        assert!(
            lines.contains(&("enforce.auth.schemes", "sasl")),
            "{lines:?}"
        );
    }
}
