//! Coordination recipes on [`zk_session`]: a protected-mode, Curator-compatible mutex with
//! fencing and a lost-lock signal, and leader election (a selector and a latch).

#![warn(missing_docs)]

pub mod cache;
mod candidacy;
mod cleanup;
pub mod contender;
pub mod error;
mod fence;
pub mod leader_latch;
pub mod leader_selector;
pub mod lock_guard;
pub mod mutex;
mod participant;
mod pending;
pub mod protected;
mod session_scope;

pub use cache::{Cache, CacheBuilder, CacheEvent, CacheEvents};
pub use contender::{Contender, ContenderKind, ContenderNames};
pub use error::{RecipeError, Result};
pub use lock_guard::{LockGuard, LostReason};
pub use mutex::{Mutex, MutexBuilder};
pub use protected::{ProtectedCreate, ProtectedNode, Recovery};

/// The pause before retry `n` of a recipe's request that failed retryably (ConnectionLoss
/// and the like): 50 ms doubling to 1 s, with the session's jitter. One value, so every
/// recipe backs off alike.
pub(crate) const RETRY_BACKOFF: zk_session::Backoff = zk_session::Backoff::new(
    std::time::Duration::from_millis(50),
    std::time::Duration::from_secs(1),
);

/// The code blocks of the workspace's README.md, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
