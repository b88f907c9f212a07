//! Coordination recipes on [`zk_session`], each sharing znodes with its Curator counterpart:
//! a protected-mode mutex with fencing and a lost-lock signal, leader election (a selector
//! and a latch), a counting semaphore, a read/write lock, shared counters, a double barrier,
//! persistent nodes and group membership.

#![warn(missing_docs)]

pub mod barrier;
mod candidacy;
mod cleanup;
pub mod contender;
pub mod counter;
pub mod error;
mod fence;
pub mod leader_latch;
pub mod leader_selector;
pub mod lock_guard;
pub mod mutex;
pub mod node;
mod participant;
mod pending;
pub mod protected;
mod retry;
pub mod rw_lock;
pub mod semaphore;
mod session_scope;
mod watches;

pub use barrier::DoubleBarrier;
pub use contender::{Contender, ContenderKind, ContenderNames};
pub use counter::{
    AtomicLongBuilder, AtomicOutcome, DistributedAtomicLong, SharedCount, VersionedCount,
};
pub use error::{RecipeError, Result};
pub use lock_guard::{LockGuard, LostReason};
pub use mutex::{Mutex, MutexBuilder};
pub use node::{GroupMember, PersistentNode};
pub use protected::{ProtectedCreate, ProtectedNode, Recovery};
pub use rw_lock::ReadWriteLock;
pub use semaphore::{Lease, Semaphore, SemaphoreBuilder};

/// The code blocks of the workspace's README.md, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
