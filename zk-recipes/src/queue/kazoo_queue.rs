//! [`KazooQueue`]: kazoo's `Queue`, sharing its znodes with kazoo producers and consumers.

use std::time::Duration;

use bytes::Bytes;
use zk_session::Client;

use super::{
    consumer::Consumer,
    distributed_queue::ensure_dir,
    handle::Handle,
    kazoo_names::{entry_prefix, DEFAULT_PRIORITY, ENTRY_PREFIX},
    order::QueueOrder,
    raw_item::{DirKind, RawDir, RawQueue},
    QueueStatus,
};
use crate::{counter::parent_of, plumbing::runtime, Result, ValueWatch};

/// Builds a [`KazooQueue`]; see [`KazooQueue::builder`].
#[derive(Debug)]
pub struct KazooQueueBuilder {
    client: Client,
    path: String,
}

impl KazooQueueBuilder {
    /// Makes the queue's znode when missing (PERSISTENT, empty, as kazoo's `ensure_path`;
    /// missing parents as containers) and starts the queue. Fails with the server's refusal,
    /// the client's end, or [`RecipeError::NoRuntime`](crate::RecipeError::NoRuntime)
    /// outside a tokio runtime.
    pub async fn start(self) -> Result<KazooQueue> {
        runtime::current()?;
        ensure_dir(&self.client, &self.path).await?;
        let raw = RawDir {
            // kazoo's Queue takes every child of the queue's znode as an entry: a marker
            // there would be taken, so it goes one level up, for the moment of a put or get.
            markers: parent_of(&self.path).to_owned(),
            kind: DirKind::Persistent,
            dir: self.path,
        };
        let inner = RawQueue::new(self.client, raw);
        let consumer = Consumer::new(QueueOrder::Priority, ENTRY_PREFIX, 16);
        Ok(KazooQueue {
            core: Handle::start(inner, consumer)?,
        })
    }
}

/// A work queue shared with kazoo's `Queue` (kazoo 2.11): each entry a
/// PERSISTENT_SEQUENTIAL `path/entry-<PPP>-<seq>` znode holding the bytes as they are, PPP
/// its priority (0 to 999, 100 unless given); the lowest priority is taken first, then the
/// oldest. A get removes the entry: at most once, like kazoo's (use [`KazooLockingQueue`]
/// for an entry that must survive its consumer).
///
/// Which queues share znodes: kazoo's `Queue` and this one do, either side producing or
/// consuming. Curator's `DistributedQueue` ([`DistributedQueue`]) cannot share a path with
/// them: its items are `queue-…` in an envelope, Curator skips every name without `queue-`,
/// and kazoo's `Queue` would take Curator's items as raw bytes. Nor can ZooKeeper's `qn-`
/// queue ([`SimpleDistributedQueue`]): its consumers (Curator's and ours) skip `entry-`
/// names, and kazoo's would take the `qn-` items, sorted after every `entry-`, as its own.
///
/// Where we differ from kazoo: a put or get whose reply is lost is neither doubled nor lost
/// (kazoo's put raises and may be repeated by hand, doubling the entry; its get may delete
/// an entry and lose it): the transaction also makes a short-lived EPHEMERAL marker
/// `_m_<uuid>` beside the queue's znode (not in it, since kazoo's `Queue` takes every child
/// as an entry), which says whether it went through. Our get takes only `entry-` names,
/// where kazoo's takes anything in the directory. A dropped get puts an entry it had removed
/// back (same priority, at the end of it).
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::KazooQueue;
///
/// let queue = KazooQueue::builder(client, "/jobs").start().await?;
/// queue.put(b"resize img-17").await?;
/// queue.put_with_priority(b"urgent", 5).await?; // lower first
/// assert_eq!(queue.get().await?.as_deref(), Some(&b"urgent"[..]));
/// assert_eq!(queue.get().await?.as_deref(), Some(&b"resize img-17"[..]));
/// assert!(queue.get().await?.is_none()); // empty: kazoo's get does not wait
/// queue.close().await?;
/// # Ok(()) }
/// ```
///
/// Dropping the queue without [`close`](Self::close) stops it the same way.
///
/// [`KazooLockingQueue`]: crate::KazooLockingQueue
/// [`DistributedQueue`]: crate::DistributedQueue
/// [`SimpleDistributedQueue`]: crate::SimpleDistributedQueue
#[derive(Debug)]
pub struct KazooQueue {
    core: Handle<RawQueue>,
}

impl KazooQueue {
    /// A queue at `path`.
    pub fn builder(client: Client, path: impl Into<String>) -> KazooQueueBuilder {
        KazooQueueBuilder {
            client,
            path: path.into(),
        }
    }

    /// Adds an entry of priority 100 (kazoo's default). A lost reply is resolved before this
    /// returns; cancel-safe in that a dropped put either happened once or not at all.
    pub async fn put(&self, item: &[u8]) -> Result<()> {
        self.put_with_priority(item, DEFAULT_PRIORITY).await
    }

    /// Adds an entry taken before every entry of a higher `priority` (0 to 999; anything
    /// over 999 fails with [`RecipeError::InvalidArgument`](crate::RecipeError::InvalidArgument),
    /// as kazoo refuses it).
    pub async fn put_with_priority(&self, item: &[u8], priority: u16) -> Result<()> {
        let prefix = entry_prefix(priority)?;
        self.core.serving()?;
        self.core.inner.put(&prefix, item).await
    }

    /// Takes the next entry if there is one (kazoo's `get()`): `None` when the queue is
    /// empty, without waiting.
    pub async fn get(&self) -> Result<Option<Bytes>> {
        self.core.next(false).await
    }

    /// Waits for an entry and takes it (kazoo's `Queue` has no wait). Cancel-safe: a
    /// dropped take leaves the queue as it was.
    pub async fn take(&self) -> Result<Bytes> {
        self.core.take().await
    }

    /// Waits at most `timeout` for an entry.
    pub async fn take_timeout(&self, timeout: Duration) -> Result<Option<Bytes>> {
        self.core.take_timeout(timeout).await
    }

    /// The queue's state; its last state says why it ended.
    pub fn status(&self) -> ValueWatch<QueueStatus> {
        self.core.status()
    }

    /// Stops the queue: takes in progress end with
    /// [`RecipeError::Closed`](crate::RecipeError::Closed). The queue's znodes stay.
    pub async fn close(self) -> Result<()> {
        self.core.close();
        Ok(())
    }
}
