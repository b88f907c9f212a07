//! [`ConfigError`]: why the connect string or the builder's settings are unusable, with the
//! cause (a file's io error, rustls' or the PEM parser's error) kept for
//! [`source()`](std::error::Error::source).

use std::{error::Error as StdError, fmt, io, path::PathBuf, sync::Arc, time::Duration};

/// What is wrong with the configuration: the payload of
/// [`Error::Config`](crate::Error::Config). Nothing was sent to any server.
///
/// ```
/// use zk_session::{Client, ConfigError, Error};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let e = Client::builder("zk1:port").build().unwrap_err();
/// assert!(matches!(e, Error::Config(ConfigError::BadHost { ref host }) if host == "zk1:port"));
/// # }
/// ```
// Display and Error by hand: thiserror would hand out the `Arc` as the source, and a caller's
// `downcast_ref::<io::Error>()` would miss.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ConfigError {
    /// The connect string names no server.
    NoHosts {
        /// The connect string as given.
        connect_string: String,
    },
    /// A `host[:port]` of the connect string does not parse.
    BadHost {
        /// The entry as written.
        host: String,
    },
    /// The session timeout does not fit the handshake's int32 of milliseconds, or is zero.
    SessionTimeout {
        /// The timeout asked for.
        timeout: Duration,
    },
    /// A certificate, key or CA file could not be read.
    ReadFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: Arc<io::Error>,
    },
    /// TLS material that does not parse or that rustls refuses: `what` names it (e.g.
    /// `"CA certificate PEM"`, `"client certificate"`), `source` is the parser's or rustls'
    /// error.
    Tls {
        /// Which part of the TLS settings.
        what: &'static str,
        /// The underlying error.
        source: Arc<dyn StdError + Send + Sync>,
    },
    /// TLS without a single trusted CA certificate.
    NoTrustedCa,
    /// The client certificate PEM holds no `CERTIFICATE` section.
    NoClientCertificate,
    /// `ServerNameCheck::Name` (with the `tls` feature) is neither a DNS name nor an
    /// IP address.
    ServerName {
        /// The name as given.
        name: String,
        /// Why it is not one.
        source: Arc<dyn StdError + Send + Sync>,
    },
}

impl ConfigError {
    /// A [`ReadFile`](Self::ReadFile) error for `path`.
    #[cfg_attr(not(any(feature = "tls", feature = "blocking-tls")), allow(dead_code))]
    pub(crate) fn read_file(path: impl Into<PathBuf>, error: io::Error) -> Self {
        ConfigError::ReadFile {
            path: path.into(),
            source: Arc::new(error),
        }
    }

    /// A [`Tls`](Self::Tls) error about `what`.
    #[cfg_attr(not(any(feature = "tls", feature = "blocking-tls")), allow(dead_code))]
    pub(crate) fn tls(what: &'static str, error: impl StdError + Send + Sync + 'static) -> Self {
        ConfigError::Tls {
            what,
            source: Arc::new(error),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::NoHosts { connect_string } => {
                write!(f, "no hosts in connect string {connect_string:?}")
            }
            ConfigError::BadHost { host } => write!(f, "bad host {host:?} in connect string"),
            ConfigError::SessionTimeout { timeout } => write!(
                f,
                "session timeout must be from 1 ms to {} ms, not {timeout:?}",
                i32::MAX
            ),
            ConfigError::ReadFile { path, source } => {
                write!(f, "reading {}: {source}", path.display())
            }
            ConfigError::Tls { what, source } => write!(f, "{what}: {source}"),
            ConfigError::NoTrustedCa => {
                f.write_str("TLS needs at least one trusted CA certificate (PEM)")
            }
            ConfigError::NoClientCertificate => {
                f.write_str("no CERTIFICATE section in the client certificate PEM")
            }
            ConfigError::ServerName { name, source } => {
                write!(
                    f,
                    "{name:?} cannot be checked against a certificate: {source}"
                )
            }
        }
    }
}

impl StdError for ConfigError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            ConfigError::ReadFile { source, .. } => Some(&**source),
            ConfigError::Tls { source, .. } | ConfigError::ServerName { source, .. } => {
                Some(&**source)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_file_is_the_source_of_the_config_error() {
        let missing = io::Error::from(io::ErrorKind::NotFound);
        let e = crate::Error::Config(ConfigError::read_file("/no/ca.pem", missing));
        assert_eq!(
            e.to_string(),
            format!(
                "bad configuration: reading /no/ca.pem: {}",
                io::Error::from(io::ErrorKind::NotFound)
            )
        );
        let config = e.source().expect("the ConfigError");
        let io = config
            .source()
            .unwrap()
            .downcast_ref::<io::Error>()
            .unwrap();
        assert_eq!(io.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_tls_setting_keeps_the_parsers_error() {
        let e = ConfigError::tls("CA certificate", fmt::Error);
        assert_eq!(e.to_string(), format!("CA certificate: {}", fmt::Error));
        assert!(e.source().unwrap().downcast_ref::<fmt::Error>().is_some());
    }
}
