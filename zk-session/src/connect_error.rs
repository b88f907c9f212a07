//! [`ConnectError`]: why one attempt to connect to a server failed, with its cause kept for
//! [`source()`](std::error::Error::source).

use std::{fmt, io, sync::Arc};

use zk_proto::{DecodeError, ErrorCode, FrameError};

#[cfg(feature = "sasl")]
use crate::SaslError;
use crate::{TlsError, TlsFailure};

/// Why the last attempt to connect to a server failed: the `last_error` of
/// [`Error::ConnectTimeout`](crate::Error::ConnectTimeout). Each variant names the server
/// (`host:port`) and keeps the cause as its [`source`](std::error::Error::source).
///
/// ```
/// use std::{error::Error as _, io};
/// use zk_session::ConnectError;
///
/// let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
/// let e = ConnectError::io("zk1:2181", refused);
/// assert!(matches!(&e, ConnectError::Io { kind: io::ErrorKind::ConnectionRefused, .. }));
/// assert_eq!(e.server(), "zk1:2181");
/// let cause = e.source().unwrap().downcast_ref::<io::Error>().unwrap();
/// assert_eq!(cause.kind(), io::ErrorKind::ConnectionRefused);
/// ```
// Display and Error by hand: thiserror would hand out the `Arc` as the source, and a caller's
// `downcast_ref::<io::Error>()` would miss.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ConnectError {
    /// The TCP connection could not be made, or broke during the handshake (`kind` tells a
    /// refusal from a reset).
    Io {
        /// The server, `host:port`.
        server: String,
        /// The io error's kind, to match on.
        kind: io::ErrorKind,
        /// The io error itself.
        source: Arc<io::Error>,
    },
    /// The server did not answer the connect request in time.
    Timeout {
        /// The server, `host:port`.
        server: String,
    },
    /// The server's answer to the connect request (or to a SASL packet) breaks the protocol.
    Protocol {
        /// The server, `host:port`.
        server: String,
        /// What was wrong with the answer.
        source: HandshakeError,
    },
    /// The TLS handshake failed (or a TLS port answered a plain client).
    Tls(TlsError),
    /// The server refused the client's credentials, or the SASL mechanism could not go on:
    /// final, the session ends.
    AuthFailed {
        /// The server, `host:port`.
        server: String,
        /// The SASL mechanism, e.g. `DIGEST-MD5` or `GSSAPI`.
        mechanism: String,
        /// The server's refusal or the mechanism's reason.
        source: AuthFailure,
    },
    /// The server hung up instead of answering the connect request.
    Closed {
        /// The server, `host:port`.
        server: String,
    },
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::Io { server, source, .. } => write!(f, "{server}: {source}"),
            ConnectError::Timeout { server } => write!(f, "{server}: no connect response in time"),
            ConnectError::Protocol { server, source } => {
                write!(f, "{server}: bad connect response: {source}")
            }
            // The failure's words after the server, as for the other variants.
            ConnectError::Tls(e) => write!(f, "{}: TLS handshake failed: {}", e.server, e.failure),
            ConnectError::AuthFailed {
                server,
                mechanism,
                source,
            } => write!(
                f,
                "{server}: authentication failed: SASL {mechanism}: {source}"
            ),
            ConnectError::Closed { server } => write!(
                f,
                "{server}: the server closed the connection instead of answering the connect \
                 request (a TLS port? a server behind the session's last zxid?)"
            ),
        }
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConnectError::Io { source, .. } => Some(&**source),
            ConnectError::Protocol { source, .. } => Some(source),
            ConnectError::Tls(e) => Some(e),
            ConnectError::AuthFailed { source, .. } => Some(source),
            ConnectError::Timeout { .. } | ConnectError::Closed { .. } => None,
        }
    }
}

impl ConnectError {
    /// An [`Io`](Self::Io) failure with `server`.
    pub fn io(server: impl Into<String>, error: io::Error) -> Self {
        ConnectError::Io {
            server: server.into(),
            kind: error.kind(),
            source: Arc::new(error),
        }
    }

    /// The server (`host:port`) the attempt was made to.
    pub fn server(&self) -> &str {
        match self {
            ConnectError::Io { server, .. }
            | ConnectError::Timeout { server }
            | ConnectError::Protocol { server, .. }
            | ConnectError::AuthFailed { server, .. }
            | ConnectError::Closed { server } => server,
            ConnectError::Tls(e) => &e.server,
        }
    }
}

/// What broke the protocol during the handshake: the source of [`ConnectError::Protocol`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The bytes did not decode.
    Decode(DecodeError),
    /// A frame could not be read or written (too large, for one).
    Frame(Arc<FrameError>),
    /// The answer to a SASL packet carries another xid.
    SaslXid {
        /// The xid of the SASL packet.
        expected: i32,
        /// The xid of the reply.
        got: i32,
    },
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandshakeError::Decode(e) => e.fmt(f),
            HandshakeError::Frame(e) => e.fmt(f),
            HandshakeError::SaslXid { expected, got } => {
                write!(f, "reply xid {got} to the SASL packet with xid {expected}")
            }
        }
    }
}

impl std::error::Error for HandshakeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HandshakeError::Decode(e) => Some(e),
            HandshakeError::Frame(e) => Some(&**e),
            HandshakeError::SaslXid { .. } => None,
        }
    }
}

impl From<DecodeError> for HandshakeError {
    fn from(e: DecodeError) -> Self {
        HandshakeError::Decode(e)
    }
}

impl From<FrameError> for HandshakeError {
    fn from(e: FrameError) -> Self {
        match e {
            FrameError::Decode(d) => HandshakeError::Decode(d),
            other => HandshakeError::Frame(Arc::new(other)),
        }
    }
}

/// The refusal's words about the server principal tried, if any.
fn tried(server_principal: &Option<String>) -> String {
    match server_principal {
        Some(p) => format!(" (authenticating to {p})"),
        None => String::new(),
    }
}

/// Why SASL authentication failed: the source of [`ConnectError::AuthFailed`].
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AuthFailure {
    /// The server refused the credentials with this code (`AuthFailed`, or `SessionClosedRequireSaslAuth`
    /// when it enforces SASL).
    #[error("the server refused: {code}{}", tried(server_principal))]
    #[non_exhaustive]
    Refused {
        /// The server's code.
        code: ErrorCode,
        /// The server's name that the client authenticated to, for mechanisms that have one
        /// (GSSAPI's service principal, such as `zookeeper/zk1.example.com`).
        server_principal: Option<String>,
    },
    /// The mechanism could not start or answer (for GSSAPI, Kerberos' reason: no ticket, an
    /// unknown principal...).
    #[cfg(feature = "sasl")]
    #[error("{0}")]
    Mechanism(#[source] SaslError),
}

/// One failed attempt, before the core names its server (internal: the driver, transport and
/// handshake do not know the `host:port` label).
#[derive(Debug)]
pub(crate) enum ConnectFailure {
    Io(io::Error),
    Timeout,
    Protocol(HandshakeError),
    /// The server refused the client's credentials: final, not worth another server.
    #[cfg_attr(not(feature = "sasl"), allow(dead_code))]
    AuthFailed {
        mechanism: String,
        reason: AuthFailure,
    },
    Closed,
    /// The TLS handshake failed (or a TLS port answered a plain client), classified.
    Tls(TlsFailure),
}

impl ConnectFailure {
    /// True when the same attempt would fail the same way again: a TLS failure other than an
    /// interrupted handshake. (A refused SASL login ends the session on its own.)
    pub fn is_permanent(&self) -> bool {
        matches!(self, ConnectFailure::Tls(f) if f.is_permanent())
    }

    /// Nothing listens at the server's port: the connection was refused.
    pub fn is_refusal(&self) -> bool {
        matches!(self, ConnectFailure::Io(e) if e.kind() == std::io::ErrorKind::ConnectionRefused)
    }

    /// The failure as the public error, at `server` (`host:port`).
    pub fn at(self, server: String) -> ConnectError {
        match self {
            ConnectFailure::Io(e) => ConnectError::io(server, e),
            ConnectFailure::Timeout => ConnectError::Timeout { server },
            ConnectFailure::Protocol(source) => ConnectError::Protocol { server, source },
            ConnectFailure::AuthFailed { mechanism, reason } => ConnectError::AuthFailed {
                server,
                mechanism,
                source: reason,
            },
            ConnectFailure::Closed => ConnectError::Closed { server },
            ConnectFailure::Tls(f) => ConnectError::Tls(TlsError::new(server, f)),
        }
    }
}

impl From<DecodeError> for ConnectFailure {
    fn from(e: DecodeError) -> Self {
        ConnectFailure::Protocol(e.into())
    }
}

impl From<FrameError> for ConnectFailure {
    fn from(e: FrameError) -> Self {
        ConnectFailure::Protocol(e.into())
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    /// The io error is reachable from the top-level error through `source()`.
    #[test]
    fn the_source_chain_reaches_the_io_error() {
        let failure = ConnectFailure::Io(io::ErrorKind::ConnectionReset.into());
        let e = crate::Error::ConnectTimeout {
            waited: std::time::Duration::from_secs(1),
            last_error: Some(failure.at("zk1:2181".into())),
        };
        let last = e.source().expect("the last attempt's error");
        assert!(last.to_string().starts_with("zk1:2181: "), "{last}");
        let io = last.source().unwrap().downcast_ref::<io::Error>().unwrap();
        assert_eq!(io.kind(), io::ErrorKind::ConnectionReset);
    }

    #[cfg(feature = "sasl")]
    #[test]
    fn a_mechanisms_reason_is_the_source() {
        let reason = AuthFailure::Mechanism(SaslError::new("no Kerberos ticket"));
        let failure = ConnectFailure::AuthFailed {
            mechanism: "GSSAPI".into(),
            reason,
        };
        let e = failure.at("zk1:2181".into());
        assert_eq!(
            e.to_string(),
            "zk1:2181: authentication failed: SASL GSSAPI: no Kerberos ticket"
        );
        let sasl = e.source().unwrap().source().unwrap();
        assert_eq!(
            sasl.downcast_ref::<SaslError>().unwrap().to_string(),
            "no Kerberos ticket"
        );
    }

    #[test]
    fn a_refusal_says_its_code_once_and_names_the_server_principal() {
        let reason = AuthFailure::Refused {
            code: ErrorCode::AuthFailed,
            server_principal: Some("zookeeper/localhost".into()),
        };
        let shown = reason.to_string();
        assert_eq!(shown.matches("-115").count(), 1, "{shown}");
        assert!(shown.contains("zookeeper/localhost"), "{shown}");
    }

    #[test]
    fn a_frame_error_keeps_its_cause() {
        let too_large = FrameError::EncodeTooLarge { len: 10, max: 4 };
        let e = ConnectFailure::from(too_large).at("zk1:2181".into());
        let frame = e.source().unwrap().source().unwrap();
        assert!(frame.downcast_ref::<FrameError>().is_some(), "{frame}");
    }
}
