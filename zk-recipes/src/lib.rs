//! Coordination recipes on [`zk_session`]: a protected-mode, Curator-compatible mutex with
//! fencing and a lost-lock signal, and leader election (a selector and a latch).

#![warn(missing_docs)]

// The recipes, each in the module named after it.
pub mod leader_latch;
pub mod leader_selector;
pub mod lock_guard;
pub mod mutex;

// What the recipes share with their users: errors, reasons, participants, contender names.
pub mod contender;
pub mod error;
mod lost_reason;
mod participant;

// What the recipes are built on, not recipes themselves.
mod plumbing;

pub use contender::{Contender, ContenderKind, ContenderNames};
pub use error::{RecipeError, Result};
pub use lock_guard::LockGuard;
pub use lost_reason::LostReason;
pub use mutex::{Mutex, MutexBuilder};
pub use plumbing::{
    liveness::SuspendPolicy,
    protected::{self, ProtectedCreate, ProtectedNode, Recovery},
};

/// The code blocks of the workspace's README.md, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
