//! [`LostReason`]: why a lock or a leadership can no longer be trusted. Its own file because
//! the mutex, the guard, its monitor, the leader recipes and the error type all speak of it.

use std::fmt;

/// Why a lock (or a guard's hold on it), a term of leadership, or an operation bound to a
/// session can no longer be trusted.
///
/// ```rust
/// use zk_recipes::LostReason;
///
/// assert_eq!(LostReason::Expired.as_str(), "session expired");
/// assert_eq!(LostReason::NodeDeleted.to_string(), "its node was deleted");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LostReason {
    /// The connection was lost (or only a read-only server is reachable); the session may
    /// still live. Only with the default policy, see
    /// [`SuspendPolicy`](crate::SuspendPolicy).
    Suspended,
    /// No connection for the whole session timeout: the session is presumed expired.
    SessionLost,
    /// The ensemble expired the session; the lock node went with it.
    Expired,
    /// The client was closed (or, for a term of leadership, the selector).
    Closed,
    /// Authentication failed; the server closed the session.
    AuthFailed,
    /// The node that held it (a lock or lease node) was deleted.
    NodeDeleted,
    /// This hold was released (for a term of leadership: the leader's task returned).
    Released,
    /// The term of leadership was interrupted
    /// ([`LeaderSelector::interrupt_leadership`](crate::LeaderSelector::interrupt_leadership)).
    Interrupted,
}

impl LostReason {
    /// A short description, as used in [`RecipeError::Lost`](crate::RecipeError::Lost).
    ///
    /// See the example on [`LostReason`].
    pub fn as_str(self) -> &'static str {
        match self {
            LostReason::Suspended => "connection suspended",
            LostReason::SessionLost => "session lost",
            LostReason::Expired => "session expired",
            LostReason::Closed => "client closed",
            LostReason::AuthFailed => "authentication failed",
            LostReason::NodeDeleted => "its node was deleted",
            LostReason::Released => "released",
            LostReason::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for LostReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
