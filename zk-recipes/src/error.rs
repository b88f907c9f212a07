//! The recipes' error type.

use thiserror::Error;

use crate::LostReason;

/// What a recipe operation can fail with.
///
/// ```
/// use zk_recipes::RecipeError;
/// use zk_session::{Error, ErrorCode};
///
/// let e = RecipeError::from(Error::Code(ErrorCode::ConnectionLoss));
/// assert!(matches!(e, RecipeError::Session(_)));
///
/// let lost = RecipeError::Lost(zk_recipes::LostReason::Expired);
/// assert!(matches!(lost, RecipeError::Lost(zk_recipes::LostReason::Expired)));
/// assert_eq!(lost.to_string(), "lost: session expired");
/// ```
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum RecipeError {
    /// The session failed the operation (server codes stay visible inside).
    #[error(transparent)]
    Session(#[from] zk_session::Error),
    /// The wait ended before the lock or leadership was obtained.
    #[error("timed out")]
    Timeout,
    /// Released more times than acquired.
    #[error("the lock is not held")]
    NotHeld,
    /// The lock or leadership can no longer be trusted, or the session the operation
    /// belonged to is over; the reason says which (match on it rather than on the text).
    #[error("lost: {0}")]
    Lost(LostReason),
    /// The recipe was closed.
    #[error("closed")]
    Closed,
    /// A znode holds data the recipe cannot read (a counter shorter than its encoding).
    #[error("{path}: data of {len} bytes is not the recipe's encoding")]
    BadData {
        /// The znode.
        path: String,
        /// How many bytes it holds.
        len: usize,
    },
    /// A recipe was started outside a tokio runtime: its background work needs one.
    #[error("not inside a tokio runtime: a recipe's background work needs one")]
    NoRuntime,
    /// An argument the recipe cannot work with (a lease count of zero, say).
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
}

/// `Result` with [`RecipeError`].
pub type Result<T, E = RecipeError> = std::result::Result<T, E>;
