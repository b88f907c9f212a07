//! Coordination recipes on [`zk_session`]: a protected-mode, Curator-compatible mutex with
//! fencing and a lost-lock signal, and leader election (a selector and a latch).
//!
//! | recipe | Curator's | start | ends with |
//! |---|---|---|---|
//! | [`InterProcessMutex`] | InterProcessMutex | [`acquire`](InterProcessMutex::acquire) | [`InterProcessMutexGuard::release`] |
//! | [`LeaderSelector`] | LeaderSelector | [`LeaderSelectorBuilder::start`] | [`LeaderSelector::close`] |
//! | [`LeaderLatch`] | LeaderLatch | [`LeaderLatchBuilder::start`] | [`LeaderLatch::close`] |
//!
//! A held lock and a term of leadership both say why they ended with a [`LostReason`], and
//! both fence writes behind their node (`fenced_multi`).

#![warn(missing_docs)]

// The recipes, each in the module named after it.
pub mod cache;
pub mod leader_latch;
pub mod leader_selector;
pub mod mutex;
pub mod mutex_guard;

// What the recipes share with their users: errors, reasons, participants, contender names.
pub mod contender;
pub mod error;
mod lost_reason;
mod participant;

// What the recipes are built on, not recipes themselves.
mod plumbing;

pub use cache::{Cache, CacheBuilder, CacheEvent, CacheEvents};
pub use contender::{Contender, ContenderKind, ContenderNames};
pub use error::{RecipeError, Result};
pub use leader_latch::{
    CloseMode, LeaderLatch, LeaderLatchBuilder, LeadershipChanges, LeadershipEvent,
};
pub use leader_selector::{LeaderSelector, LeaderSelectorBuilder, Leadership};
pub use lost_reason::LostReason;
pub use mutex::{InterProcessMutex, InterProcessMutexBuilder};
pub use mutex_guard::InterProcessMutexGuard;
pub use participant::Participant;
pub use plumbing::{
    liveness::SuspendPolicy,
    protected::{self, ProtectedCreate, ProtectedNode, Recovery},
};

/// The code blocks of the workspace's README.md, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
