//! The server's error codes (`KeeperException.Code`).

/// A ZooKeeper error code as carried in a reply header or a multi result.
///
/// Codes the protocol does not define are kept as [`ErrorCode::Unknown`].
///
/// ```
/// use zk_proto::ErrorCode;
/// assert_eq!(ErrorCode::from_code(-101), ErrorCode::NoNode);
/// assert_eq!(ErrorCode::NodeExists.code(), -110);
/// assert_eq!(ErrorCode::from_code(-999), ErrorCode::Unknown(-999));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// 0: success.
    Ok,
    /// -1: a server-side system error.
    SystemError,
    /// -2: a runtime inconsistency (in a failed multi: an operation after the failing one).
    RuntimeInconsistency,
    /// -3: a data inconsistency.
    DataInconsistency,
    /// -4: the connection was lost (client-side).
    ConnectionLoss,
    /// -5: a request or reply could not be (de)serialized.
    MarshallingError,
    /// -6: the operation is not implemented.
    Unimplemented,
    /// -7: the operation timed out.
    OperationTimeout,
    /// -8: invalid arguments.
    BadArguments,
    /// -12: the session is not known to the server.
    UnknownSession,
    /// -13: the new configuration has no quorum.
    NewConfigNoQuorum,
    /// -14: another reconfiguration is in progress.
    ReconfigInProgress,
    /// -100: an API error.
    ApiError,
    /// -101: the znode does not exist.
    NoNode,
    /// -102: not authorized.
    NoAuth,
    /// -103: the version does not match.
    BadVersion,
    /// -108: ephemeral znodes cannot have children.
    NoChildrenForEphemerals,
    /// -110: the znode already exists.
    NodeExists,
    /// -111: the znode has children.
    NotEmpty,
    /// -112: the session has expired.
    SessionExpired,
    /// -113: an invalid callback.
    InvalidCallback,
    /// -114: the ACL is invalid.
    InvalidAcl,
    /// -115: authentication failed.
    AuthFailed,
    /// -118: the session moved to another server.
    SessionMoved,
    /// -119: a write sent to a read-only server.
    NotReadOnly,
    /// -120: ephemeral znodes need a global session.
    EphemeralOnLocalSession,
    /// -121: no such watcher.
    NoWatcher,
    /// -122: the request timed out.
    RequestTimeout,
    /// -123: reconfiguration is disabled.
    ReconfigDisabled,
    /// -124: the session was closed because SASL auth is required.
    SessionClosedRequireSaslAuth,
    /// -125: a quota was exceeded.
    QuotaExceeded,
    /// -127: the server throttled the operation.
    ThrottledOp,
    /// A code this crate does not know.
    Unknown(i32),
}

macro_rules! codes {
    ($($name:ident = $code:expr, $text:expr;)*) => {
        impl ErrorCode {
            /// The error for a numeric code.
            pub fn from_code(code: i32) -> ErrorCode {
                match code {
                    $($code => ErrorCode::$name,)*
                    other => ErrorCode::Unknown(other),
                }
            }

            /// The numeric code.
            pub fn code(self) -> i32 {
                match self {
                    $(ErrorCode::$name => $code,)*
                    ErrorCode::Unknown(c) => c,
                }
            }

            /// The server's name for the code, as in `KeeperException`.
            pub fn description(self) -> &'static str {
                match self {
                    $(ErrorCode::$name => $text,)*
                    ErrorCode::Unknown(_) => "unknown error code",
                }
            }

            /// Every code the protocol defines, for tests and tools.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$name,)*];
        }
    };
}

codes! {
    Ok = 0, "ok";
    SystemError = -1, "system error";
    RuntimeInconsistency = -2, "runtime inconsistency";
    DataInconsistency = -3, "data inconsistency";
    ConnectionLoss = -4, "connection loss";
    MarshallingError = -5, "marshalling error";
    Unimplemented = -6, "unimplemented";
    OperationTimeout = -7, "operation timeout";
    BadArguments = -8, "bad arguments";
    UnknownSession = -12, "unknown session";
    NewConfigNoQuorum = -13, "new config has no quorum";
    ReconfigInProgress = -14, "reconfig in progress";
    ApiError = -100, "API error";
    NoNode = -101, "no node";
    NoAuth = -102, "not authenticated";
    BadVersion = -103, "bad version";
    NoChildrenForEphemerals = -108, "no children for ephemerals";
    NodeExists = -110, "node exists";
    NotEmpty = -111, "directory not empty";
    SessionExpired = -112, "session expired";
    InvalidCallback = -113, "invalid callback";
    InvalidAcl = -114, "invalid ACL";
    AuthFailed = -115, "authentication failed";
    SessionMoved = -118, "session moved";
    NotReadOnly = -119, "not a read-only call";
    EphemeralOnLocalSession = -120, "ephemeral on local session";
    NoWatcher = -121, "no watcher";
    RequestTimeout = -122, "request timeout";
    ReconfigDisabled = -123, "reconfig disabled";
    SessionClosedRequireSaslAuth = -124, "session closed, SASL auth required";
    QuotaExceeded = -125, "quota exceeded";
    ThrottledOp = -127, "throttled op";
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ErrorCode::Unknown(c) => write!(f, "unknown error code {c}"),
            other => write!(f, "{} ({})", other.description(), other.code()),
        }
    }
}

impl std::error::Error for ErrorCode {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for &c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(c.code()), c);
        }
        assert_eq!(ErrorCode::ALL.len(), 32);
    }
}
