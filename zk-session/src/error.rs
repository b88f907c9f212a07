//! The one error type of the client.

use std::time::Duration;

use thiserror::Error;

use crate::{ArgumentError, ConfigError, ConnectError, ProtocolViolation};
use zk_proto::{DecodeError, ErrorCode, PathError};

/// Everything an operation can fail with.
///
/// Server error codes stay codes: match on [`Error::Code`] with the [`ErrorCode`] you expect, or
/// use [`Error::code`]. Client-side conditions that ZooKeeper has codes for use those codes too
/// (`ConnectionLoss`, `SessionExpired`, `RequestTimeout`, `AuthFailed`), as the Java client does.
///
/// ```
/// use zk_session::{Error, ErrorCode};
///
/// fn exists_already(e: &Error) -> bool {
///     matches!(e, Error::Code(ErrorCode::NodeExists))
/// }
/// assert!(exists_already(&Error::Code(ErrorCode::NodeExists)));
/// assert_eq!(Error::Code(ErrorCode::NoNode).code(), Some(ErrorCode::NoNode));
/// ```
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum Error {
    /// The server (or the session, for ConnectionLoss, SessionExpired, RequestTimeout and
    /// AuthFailed) answered with this code.
    #[error("{0}")]
    Code(ErrorCode),
    /// A multi transaction was rolled back: `index` is the op that failed with `code`, and
    /// `results` holds the per-op codes the server sent (0 before it, -2 after it).
    #[error("multi op {index} failed: {code}")]
    Multi {
        /// The position of the failed op in the request.
        index: usize,
        /// Why it failed.
        code: ErrorCode,
        /// Every op's code, as the server sent them.
        results: Vec<ErrorCode>,
    },
    /// The path breaks one of ZooKeeper's rules; nothing was sent.
    #[error("invalid path {path:?}: {reason}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// The rule it breaks.
        reason: PathError,
    },
    /// An argument the server would refuse; nothing was sent.
    #[error("invalid argument: {0}")]
    InvalidArgument(#[from] ArgumentError),
    /// The server sent bytes that break the protocol; the connection was dropped.
    #[error("protocol error from the server: {0}")]
    Protocol(#[from] DecodeError),
    /// The server's reply does not fit the request it answers; the connection was dropped.
    #[error("protocol violation: {0}")]
    ProtocolViolation(#[from] ProtocolViolation),
    /// The connect string or the builder's settings are unusable.
    #[error("bad configuration: {0}")]
    Config(#[from] ConfigError),
    /// No server could be reached in time for the first connection.
    #[error("could not connect to any server within {waited:?} (last attempt: {})", LastAttempt(last_error.as_ref()))]
    ConnectTimeout {
        /// How long the client tried.
        waited: Duration,
        /// Why the last attempt failed, if one was made: also the error's
        /// [`source`](std::error::Error::source).
        #[source]
        last_error: Option<ConnectError>,
    },
    /// Every server of the connect string refused the connection before any connection was
    /// made, with [`OnRefusal::FailFast`](crate::OnRefusal::FailFast): what
    /// [`connect`](crate::ClientBuilder::connect) returns at once, with each server's
    /// refusal, instead of waiting out its timeout.
    #[error("every server refused the connection ({})", Refusals(errors))]
    ConnectRefused {
        /// Each server's refusal, in the order tried.
        errors: Vec<ConnectError>,
    },
    /// Every server failed the TLS handshake (or refused a plain client at its TLS port) for
    /// a reason another attempt would not fix: [`connect`](crate::ClientBuilder::connect)
    /// returns this, with the last server's failure, instead of waiting out its timeout.
    #[error("{0}")]
    Tls(#[from] crate::TlsError),
    /// The server refused the client's SASL credentials, or the mechanism could not go on (a
    /// missing or expired Kerberos ticket, an unknown server principal): what
    /// [`connect`](crate::ClientBuilder::connect) returns, with the server, the mechanism
    /// and the reason ([`ConnectError::AuthFailed`]). No retry helps; the session is over
    /// and its requests fail with `Code(AuthFailed)`. [`code`](Self::code) is `AuthFailed`
    /// for both.
    #[error("{0}")]
    AuthFailed(ConnectError),
    /// The watch was removed by [`Client::remove_watches`](crate::Client::remove_watches)
    /// before it fired.
    #[error("the watch was removed")]
    WatchRemoved,
    /// A persistent watch's reader fell behind by more than its buffer holds: `missed` events
    /// were dropped. The stream goes on; read the watched znodes again to catch up.
    #[error("the watch's buffer was full: {missed} events were dropped")]
    WatchLagged {
        /// How many events were dropped since the reader last heard of it.
        missed: u64,
    },
    /// The client was closed.
    #[error("the client is closed")]
    Closed,
    /// [`ClientBuilder::build`](crate::ClientBuilder::build) (or `connect`) was called
    /// outside a tokio runtime, which the session's task needs.
    #[error("a client must be built inside a tokio runtime")]
    NoRuntime,
}

impl Error {
    /// The ZooKeeper error code behind this error, if it has one.
    ///
    /// ```rust
    /// use zk_session::{Error, ErrorCode};
    ///
    /// assert_eq!(Error::Code(ErrorCode::BadVersion).code(), Some(ErrorCode::BadVersion));
    /// // A rolled-back transaction has the code of the op that failed.
    /// let results = vec![ErrorCode::Ok, ErrorCode::NodeExists];
    /// let failed = Error::Multi { index: 1, code: ErrorCode::NodeExists, results };
    /// assert_eq!(failed.code(), Some(ErrorCode::NodeExists));
    /// assert_eq!(Error::Closed.code(), None);
    /// ```
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::Code(c) => Some(*c),
            Error::Multi { code, .. } => Some(*code),
            Error::AuthFailed(_) => Some(ErrorCode::AuthFailed),
            _ => None,
        }
    }

    /// True when the operation may have taken effect or not, and is worth retrying if it is
    /// idempotent: the connection was lost or the request timed out.
    ///
    /// The first try may have been applied all the same: a retried create can then fail with
    /// `NodeExists`, and a write with [`Version::Exact`](crate::Version::Exact) with
    /// `BadVersion`.
    ///
    /// ```rust
    /// use zk_session::{Error, ErrorCode};
    ///
    /// assert!(Error::Code(ErrorCode::ConnectionLoss).is_retryable());
    /// assert!(Error::Code(ErrorCode::RequestTimeout).is_retryable());
    /// // The server's answers are final, and so is the end of the session.
    /// assert!(!Error::Code(ErrorCode::NoNode).is_retryable());
    /// assert!(!Error::Code(ErrorCode::SessionExpired).is_retryable());
    /// assert!(!Error::Closed.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.code(),
            Some(
                ErrorCode::ConnectionLoss
                    | ErrorCode::OperationTimeout
                    | ErrorCode::RequestTimeout
                    | ErrorCode::SessionMoved
                    | ErrorCode::ThrottledOp
            )
        ) || matches!(self, Error::Protocol(_) | Error::ProtocolViolation(_))
    }

    pub(crate) fn connection_loss() -> Error {
        Error::Code(ErrorCode::ConnectionLoss)
    }

    pub(crate) fn session_expired() -> Error {
        Error::Code(ErrorCode::SessionExpired)
    }
}

impl From<ErrorCode> for Error {
    fn from(c: ErrorCode) -> Self {
        Error::Code(c)
    }
}

/// The servers that refused, for [`Error::ConnectRefused`]'s text.
struct Refusals<'a>(&'a [ConnectError]);

impl std::fmt::Display for Refusals<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let servers: Vec<&str> = self.0.iter().map(ConnectError::server).collect();
        f.write_str(&servers.join(", "))
    }
}

/// The last attempt's error in [`Error::ConnectTimeout`]'s text, or "none".
struct LastAttempt<'a>(Option<&'a ConnectError>);

impl std::fmt::Display for LastAttempt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(e) => e.fmt(f),
            None => f.write_str("none"),
        }
    }
}

/// `Result` with this crate's [`Error`](enum@Error).
pub type Result<T, E = Error> = std::result::Result<T, E>;
