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
//! # Holds
//!
//! Every recipe that is held has one shape: the recipe has `acquire().await` (waits),
//! `acquire_timeout(wait).await` (gives up with [`RecipeError::Timeout`]) and
//! `try_acquire().await` (`None` when it would have to wait); what they give has
//! `is_held()`, `lost().await` (the [`LostReason`] once it can no longer be trusted: the
//! connection suspended, the session lost or expired, the node deleted) and
//! `release().await -> Result<()>`. Dropping it releases too, deleting its node in the
//! background; a dropped acquire leaves no node behind. Builders are
//! `X::builder(client, path)`.
//!
//! | recipe | Curator's | what is held |
//! |---|---|---|
//! | [`InterProcessMutex`] | InterProcessMutex | [`InterProcessMutexGuard`] |
//! | [`InterProcessSemaphoreMutex`] | InterProcessSemaphoreMutex | [`SemaphoreLease`] |
//! | [`InterProcessSemaphoreV2`] | InterProcessSemaphoreV2 | [`SemaphoreLease`] |
//! | [`ReadWriteLock`] | InterProcessReadWriteLock | [`InterProcessMutexGuard`] (each side) |
//! | [`InterProcessMultiLock`] | InterProcessMultiLock | [`MultiLockGuard`] |
//! | [`DoubleBarrier`] | DistributedDoubleBarrier | [`DoubleBarrierMember`] (enter, leave) |
//!
//! [`DistributedBarrier`] (Curator's DistributedBarrier) is not held: it is set, removed
//! and waited on.
//!
//! # One lifecycle for the long-lived recipes
//!
//! [`Cache`], [`LeaderLatch`], [`LeaderSelector`], [`SharedCount`], [`PersistentNode`],
//! [`GroupMember`], [`DistributedQueue`], [`SimpleDistributedQueue`] and [`SetPartitioner`]
//! (and, with the `discovery` feature, `ServiceDiscovery` with its `DiscoveryStatus`, and
//! its cache and provider) share one shape:
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

// The recipes, each in the module named after it. The modules are private: every public
// type is reachable from the crate root, once, by the `pub use` lines below.
mod barrier;
mod cache;
mod counter;
#[cfg(feature = "discovery")]
mod discovery;
mod distributed_barrier;
mod group_member;
mod leader_latch;
mod leader_selector;
mod multi_lock;
mod mutex;
mod mutex_guard;
mod partitioner;
mod persistent_node;
mod queue;
mod rw_lock;
mod semaphore;
mod semaphore_mutex;

// What the recipes share with their users: errors, reasons, participants, contender names.
mod contender;
mod error;
mod lost_reason;
mod participant;
mod value_watch;

// What the recipes are built on, not recipes themselves.
mod plumbing;

pub use barrier::{DoubleBarrier, DoubleBarrierBuilder, DoubleBarrierMember};
pub use cache::{
    Cache, CacheBuilder, CacheData, CacheEvent, CacheEvents, CacheMode, CacheStatus, CachedNode,
    ResyncReason,
};
pub use contender::{
    format_sequence, parse_sequence, protected_id_of, Contender, ContenderKind, ContenderNames,
};
pub use counter::{
    AtomicLongBuilder, AtomicOutcome, DistributedAtomicLong, SharedCount, SharedCountBuilder,
    SharedCountStatus, VersionedCount,
};
#[cfg(feature = "discovery")]
pub use discovery::{
    DiscoveryStatus, DownInstancePolicy, InstanceError, InstancePicker, ProviderStrategy,
    ServiceCache, ServiceCacheBuilder, ServiceDiscovery, ServiceDiscoveryBuilder, ServiceInstance,
    ServiceInstanceBuilder, ServiceProvider, ServiceProviderBuilder, ServiceType, UriPart, UriSpec,
};
pub use distributed_barrier::DistributedBarrier;
pub use error::{RecipeError, Result};
pub use group_member::{GroupMember, GroupMemberBuilder, Members};
pub use leader_latch::{
    CloseMode, LatchStatus, LeaderLatch, LeaderLatchBuilder, LeadershipChanges, LeadershipEvent,
};
pub use leader_selector::{LeaderSelector, LeaderSelectorBuilder, Leadership, SelectorStatus};
pub use lost_reason::LostReason;
pub use multi_lock::{InterProcessMultiLock, MultiLockGuard};
pub use mutex::{InterProcessMutex, InterProcessMutexBuilder};
pub use mutex_guard::InterProcessMutexGuard;
pub use participant::Participant;
pub use partitioner::{PartitionStatus, ReleaseMode, SetPartitioner, SetPartitionerBuilder};
pub use persistent_node::{NodeStatus, PersistentNode, PersistentNodeBuilder};
pub use plumbing::{
    liveness::SuspendPolicy,
    protected::{
        create_parents, new_protected_id, protected_prefix, remove_protected, ProtectedCreate,
        ProtectedNode, Recovery,
    },
};
pub use queue::{
    DistributedQueue, DistributedQueueBuilder, KazooLockedEntry, KazooLockingQueue,
    KazooLockingQueueBuilder, KazooQueue, KazooQueueBuilder, QueueItem, QueueOrder, QueueStatus,
    SimpleDistributedQueue, SimpleDistributedQueueBuilder,
};
pub use rw_lock::{ReadWriteLock, ReadWriteLockBuilder};
pub use semaphore::{InterProcessSemaphoreV2, InterProcessSemaphoreV2Builder, SemaphoreLease};
pub use semaphore_mutex::{InterProcessSemaphoreMutex, InterProcessSemaphoreMutexBuilder};
pub use value_watch::ValueWatch;

/// The code blocks of the workspace's README.md, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
