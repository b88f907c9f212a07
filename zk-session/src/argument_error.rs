//! [`ArgumentError`]: an argument the server would refuse, found before anything was sent.

use std::{sync::Arc, time::Duration};

use zk_proto::{CreateMode, FrameError};

/// What is wrong with an argument: the payload of
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument). Nothing was sent.
///
/// ```
/// use zk_session::{ArgumentError, CreateMode, Error};
///
/// let e = Error::InvalidArgument(ArgumentError::TtlNotAllowed { mode: CreateMode::Persistent });
/// assert_eq!(e.to_string(), "invalid argument: Persistent does not take a TTL");
/// ```
// Display and Error by hand: thiserror would hand out the `Arc` as the source.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ArgumentError {
    /// A TTL create mode without a TTL.
    TtlMissing,
    /// A TTL of zero or above the server's limit (2^40 ms).
    TtlOutOfRange {
        /// The TTL given.
        ttl: Duration,
    },
    /// A TTL with a mode that does not take one.
    TtlNotAllowed {
        /// The mode given.
        mode: CreateMode,
    },
    /// A sequential znode at `/` under a chroot: the server would create it beside the
    /// chroot, outside it.
    SequentialAtChroot,
    /// [`delete_all`](crate::Client::delete_all) of `/`.
    DeleteRoot,
    /// A new server list whose chroot is not the client's.
    OtherChroot {
        /// The connect string given.
        servers: String,
    },
    /// The request (or credentials) does not fit in a frame.
    TooLarge(Arc<FrameError>),
    /// A watch's path is too long to set again, after a reconnect, within the frame limit.
    WatchPathTooLong,
}

impl std::fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgumentError::TtlMissing => f.write_str("a TTL mode needs a TTL"),
            ArgumentError::TtlOutOfRange { ttl } => {
                write!(f, "TTL of {} ms is out of range", ttl.as_millis())
            }
            ArgumentError::TtlNotAllowed { mode } => write!(f, "{mode:?} does not take a TTL"),
            ArgumentError::SequentialAtChroot => {
                f.write_str("a sequential znode named after the chroot would be created outside it")
            }
            ArgumentError::DeleteRoot => f.write_str("deleting the whole tree (\"/\") is refused"),
            ArgumentError::OtherChroot { servers } => {
                write!(f, "{servers:?} has another chroot than the client's")
            }
            ArgumentError::TooLarge(e) => e.fmt(f),
            ArgumentError::WatchPathTooLong => {
                f.write_str("watch path too long to re-register within the maximum frame length")
            }
        }
    }
}

impl std::error::Error for ArgumentError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ArgumentError::TooLarge(e) => Some(&**e),
            _ => None,
        }
    }
}

impl From<FrameError> for ArgumentError {
    fn from(e: FrameError) -> Self {
        ArgumentError::TooLarge(Arc::new(e))
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn a_request_too_large_keeps_the_frame_error() {
        let e = crate::Error::InvalidArgument(FrameError::EncodeTooLarge { len: 9, max: 4 }.into());
        assert_eq!(
            e.to_string(),
            "invalid argument: encoded frame of 9 bytes exceeds the maximum of 4 bytes"
        );
        let frame = e.source().and_then(|a| a.source());
        assert!(matches!(
            frame.and_then(|f| f.downcast_ref::<FrameError>()),
            Some(FrameError::EncodeTooLarge { len: 9, max: 4 })
        ));
    }
}
