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
//!
//! ## One lifecycle for the long-lived recipes
//!
//! [`Cache`], [`LeaderLatch`], [`LeaderSelector`], [`SharedCount`], [`PersistentNode`] and
//! [`GroupMember`] share one shape:
//! - `X::builder(client, path)`, typed options, then `start().await`, which returns once the
//!   recipe is established (the node exists, the view is loaded, the latch is in line...) and
//!   fails with [`RecipeError::NoRuntime`] outside a tokio runtime rather than panicking;
//! - `status()`, a [`ValueWatch`] of the recipe's status enum ([`CacheStatus`],
//!   [`LatchStatus`], [`SelectorStatus`], [`SharedCountStatus`], [`NodeStatus`]): a new value
//!   only when the state changes, the last one saying why the recipe ended
//!   (`Closed`, or `Ended` with the reason); wait for a state with
//!   [`ValueWatch::wait_for`];
//! - `close(self).await`, which removes what the recipe owns on the server and says whether
//!   that worked.
//!
//! Dropping a recipe without `close` cleans up all the same, in the background (on the
//! runtime it was started on); `close` is for knowing when and whether it is done.
//!
//! ```no_run
//! # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
//! use zk_recipes::{LatchStatus, LeaderLatch};
//!
//! let latch = LeaderLatch::builder(client, "/election/indexer").start().await?;
//! let mut status = latch.status();
//! match status.wait_for(|s| s.is_leader() || s.has_ended()).await? {
//!     LatchStatus::Leader => println!("leading"),
//!     other => println!("out of the election: {other:?}"),
//! }
//! latch.close().await?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

// The recipes, each in the module named after it.
pub mod barrier;
pub mod cache;
pub mod counter;
#[cfg(feature = "discovery")]
pub mod discovery;
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
mod lost_reason;
mod participant;
mod value_watch;

// What the recipes are built on, not recipes themselves.
mod plumbing;

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
#[cfg(feature = "discovery")]
pub use discovery::{
    DownInstancePolicy, InstanceError, InstancePicker, ProviderStrategy, ServiceCache,
    ServiceCacheBuilder, ServiceDiscovery, ServiceDiscoveryBuilder, ServiceInstance,
    ServiceInstanceBuilder, ServiceProvider, ServiceProviderBuilder, ServiceType, UriPart, UriSpec,
};
pub use error::{RecipeError, Result};
pub use group_member::{GroupMember, GroupMemberBuilder, Members};
pub use leader_latch::{
    CloseMode, LatchStatus, LeaderLatch, LeaderLatchBuilder, LeadershipChanges, LeadershipEvent,
};
pub use leader_selector::{LeaderSelector, LeaderSelectorBuilder, Leadership, SelectorStatus};
pub use lost_reason::LostReason;
pub use mutex::{InterProcessMutex, InterProcessMutexBuilder};
pub use mutex_guard::InterProcessMutexGuard;
pub use participant::Participant;
pub use persistent_node::{NodeStatus, PersistentNode, PersistentNodeBuilder};
pub use plumbing::{
    liveness::SuspendPolicy,
    protected::{self, ProtectedCreate, ProtectedNode, Recovery},
};
pub use rw_lock::{ReadWriteLock, ReadWriteLockBuilder};
pub use semaphore::{Lease, Semaphore, SemaphoreBuilder};
pub use value_watch::ValueWatch;

/// The code blocks of the workspace's README.md, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
