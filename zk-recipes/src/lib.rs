//! Coordination recipes on [`zk_session`]: a protected-mode, Curator-compatible mutex with
//! fencing and a lost-lock signal, leader election (a selector and a latch), a counting
//! semaphore, a read/write lock, shared counters, a double barrier, persistent nodes and
//! group membership.
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
pub mod barrier;
pub mod cache;
pub mod counter;
pub mod group_member;
pub mod leader_latch;
pub mod leader_selector;
pub mod mutex;
pub mod mutex_guard;
pub mod persistent_node;
pub mod rw_lock;
pub mod semaphore;

// What the recipes share with their users: errors, reasons, participants, contender names.
pub mod contender;
pub mod error;
mod leadership_watch;
mod lost_reason;
mod participant;
mod value_watch;

// What the recipes are built on, not recipes themselves.
mod plumbing;
mod queue;

pub use barrier::DoubleBarrier;
pub use cache::{
    Cache, CacheBuilder, CacheData, CacheEvent, CacheEvents, CacheMode, CacheStatus, CachedNode,
    ResyncReason,
};
pub use contender::{Contender, ContenderKind, ContenderNames};
pub use counter::{
    AtomicLongBuilder, AtomicOutcome, DistributedAtomicLong, SharedCount, SharedCountBuilder,
    SharedCountStatus, VersionedCount,
};
pub use error::{RecipeError, Result};
pub use group_member::{GroupMember, GroupMemberBuilder, Members};
pub use leader_latch::{
    CloseMode, LeaderLatch, LeaderLatchBuilder, LeadershipChanges, LeadershipEvent,
};
pub use leader_selector::{LeaderSelector, LeaderSelectorBuilder, Leadership};
pub use leadership_watch::LeadershipWatch;
pub use lost_reason::LostReason;
pub use mutex::{InterProcessMutex, InterProcessMutexBuilder};
pub use mutex_guard::InterProcessMutexGuard;
pub use participant::Participant;
pub use persistent_node::{NodeStatus, PersistentNode, PersistentNodeBuilder};
pub use plumbing::{
    liveness::SuspendPolicy,
    protected::{self, ProtectedCreate, ProtectedNode, Recovery},
};
pub use queue::{DistributedQueue, DistributedQueueBuilder, QueueItem, QueueOrder, QueueStatus};
pub use rw_lock::{ReadWriteLock, ReadWriteLockBuilder};
pub use semaphore::{Lease, Semaphore, SemaphoreBuilder};
pub use value_watch::ValueWatch;

/// The code blocks of the workspace's README.md, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
