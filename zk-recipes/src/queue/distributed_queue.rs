//! [`DistributedQueue`]: Curator's `DistributedQueue` (and its priority, delay and id flavours),
//! sharing the same znodes with Curator producers and consumers.

use std::{
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use bytes::Bytes;
use tokio::sync::watch;
use zk_session::{Client, CreateOptions, Error, ErrorCode, Op, Version};

use super::{
    consumer::{Claim, Consumer, Source},
    envelope,
    handle::{Base, Handle},
    held_lock::LockGuard,
    order::{
        delay_prefix, fix_id, id_prefix, priority_prefix, split_id, QueueOrder, QUEUE_PREFIX,
        SEQ_DIGITS,
    },
    outcome,
    taken::{claim_locked, QueueItem},
};
use crate::{
    counter::parent_of,
    plumbing::{
        liveness::client_over,
        protected::{child_path, create_parents},
        retry::{may_retry, Pauses},
        runtime,
    },
    LostReason, RecipeError, Result, ValueWatch,
};

/// Where a [`DistributedQueue`] stands: its [`status`](DistributedQueue::status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueueStatus {
    /// Puts and takes are served.
    Running,
    /// Closed (or dropped): the last state.
    Closed,
    /// The client ended for good: the last state.
    Ended(LostReason),
}

impl QueueStatus {
    /// Whether this is a last state.
    pub fn has_ended(&self) -> bool {
        !matches!(self, QueueStatus::Running)
    }
}

/// Builds a [`DistributedQueue`]; see [`DistributedQueue::builder`].
#[derive(Debug)]
pub struct DistributedQueueBuilder {
    client: Client,
    path: String,
    lock_path: Option<String>,
    order: QueueOrder,
    refresh_after: u32,
}

impl DistributedQueueBuilder {
    /// Curator's lock-safe mode (`lockPath`): a taken item stays in the queue, locked by an
    /// EPHEMERAL `lock_path/<item>`, until [`QueueItem::done`] removes both; a consumer that
    /// dies or is cut off mid-item leaves it to the next one (at least once).
    pub fn lock_safe(mut self, lock_path: impl Into<String>) -> Self {
        self.lock_path = Some(lock_path.into());
        self
    }

    /// The order items are taken in (FIFO unless set).
    pub fn order(mut self, order: QueueOrder) -> Self {
        self.order = order;
        self
    }

    /// For priority and delay queues: how many items a consumer takes from one listing
    /// before it lists again when the queue changed (Curator's `minItemsBeforeRefresh`;
    /// 16 unless set). A FIFO consumer lists once per batch, whatever this says.
    pub fn refresh_after(mut self, takes: u32) -> Self {
        self.refresh_after = takes;
        self
    }

    /// Makes the queue's znode (and the lock path's) when missing, PERSISTENT with their
    /// parents as containers, as Curator's `start` does. Fails with the server's refusal, the
    /// client's end, or [`RecipeError::NoRuntime`] outside a tokio runtime.
    pub async fn start(self) -> Result<DistributedQueue> {
        runtime::current()?;
        ensure_dir(&self.client, &self.path).await?;
        if let Some(lock) = &self.lock_path {
            ensure_dir(&self.client, lock).await?;
        }
        let inner = Inner {
            base: Base::new(self.client, self.path),
            lock_path: self.lock_path,
            order: self.order,
        };
        let consumer = Consumer::new(self.order, QUEUE_PREFIX, self.refresh_after);
        Ok(DistributedQueue {
            core: Handle::start(inner, consumer)?,
        })
    }
}

/// A work queue shared with Curator's `DistributedQueue` (FIFO), `DistributedPriorityQueue`,
/// `DistributedDelayQueue` and `DistributedIdQueue` processes: items in
/// PERSISTENT_SEQUENTIAL `path/queue-…` znodes, in Curator's envelope, taken in Curator's
/// order.
///
/// Better than Curator's in three ways: a put or a plain take whose reply is lost is neither
/// doubled nor lost (see [`put`](Self::put)); a consumer does not list the whole queue for
/// every item (a FIFO consumer lists once per batch); and a lock-safe item left by a consumer
/// ([`QueueItem::release`], or a dropped item) keeps its place and priority, where Curator's
/// requeue moves it to the back as a plain item.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::DistributedQueue;
///
/// let queue = DistributedQueue::builder(client, "/jobs")
///     .lock_safe("/jobs-locks")
///     .start()
///     .await?;
/// queue.put(b"resize img-17").await?;
/// let item = queue.take().await?;
/// for part in item.items() {
///     println!("working on {part:?}");
/// }
/// item.done().await?; // only now is it gone from the queue
/// queue.close().await?;
/// # Ok(()) }
/// ```
///
/// Dropping the queue without [`close`](Self::close) stops it the same way.
#[derive(Debug)]
pub struct DistributedQueue {
    core: Handle<Inner>,
}

#[derive(Debug)]
struct Inner {
    base: Base,
    lock_path: Option<String>,
    order: QueueOrder,
}

impl DistributedQueue {
    /// A queue at `path` (a FIFO, plain queue unless the builder says otherwise).
    pub fn builder(client: Client, path: impl Into<String>) -> DistributedQueueBuilder {
        DistributedQueueBuilder {
            client,
            path: path.into(),
            lock_path: None,
            order: QueueOrder::Fifo,
            refresh_after: 16,
        }
    }

    /// Adds one item. A lost reply is resolved before this returns (the put is neither
    /// doubled nor lost); cancel-safe in that a dropped put either happened once or not at
    /// all. On a priority or delay queue the item goes in with priority 0 / due now.
    pub async fn put(&self, item: &[u8]) -> Result<()> {
        self.put_all([item]).await
    }

    /// Adds several items in one znode (Curator's `putMulti`): a consumer takes them together.
    pub async fn put_all<I, B>(&self, items: I) -> Result<()>
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        let name = match self.core.inner.order {
            QueueOrder::Fifo | QueueOrder::Id => QUEUE_PREFIX.to_owned(),
            QueueOrder::Priority => priority_prefix(0),
            QueueOrder::Delay => delay_prefix(1),
        };
        self.put_named(&name, envelope::encode(items)).await
    }

    /// Adds an item taken before every item of a higher `priority` value (Curator's
    /// `DistributedPriorityQueue.put(item, priority)`: the lowest value first).
    pub async fn put_with_priority(&self, item: &[u8], priority: i32) -> Result<()> {
        self.put_named(&priority_prefix(priority), envelope::encode([item]))
            .await
    }

    /// Adds an item no consumer takes before `due` (Curator's `DistributedDelayQueue`).
    pub async fn put_with_delay(&self, item: &[u8], due: SystemTime) -> Result<()> {
        let ms = due
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
            .max(1);
        self.put_named(&delay_prefix(ms), envelope::encode([item]))
            .await
    }

    /// Adds an item tagged with `id` (Curator's `DistributedIdQueue.put(item, id)`): named
    /// `queue-|<id>|<seq>`, `/` and `|` in the id written as `_`. On a
    /// [`QueueOrder::Id`] queue it is taken in FIFO order with the others; [`remove`]
    /// deletes it by its id.
    ///
    /// ```no_run
    /// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
    /// use zk_recipes::{DistributedQueue, QueueOrder};
    ///
    /// let queue = DistributedQueue::builder(client, "/mail")
    ///     .order(QueueOrder::Id)
    ///     .start()
    ///     .await?;
    /// queue.put_with_id(b"welcome", "user-17").await?;
    /// queue.put_with_id(b"reminder", "user-17").await?;
    /// assert_eq!(queue.remove("user-17").await?, 2); // user-17 unsubscribed
    /// # Ok(()) }
    /// ```
    ///
    /// [`remove`]: Self::remove
    pub async fn put_with_id(&self, item: &[u8], id: &str) -> Result<()> {
        self.put_named(&id_prefix(id), envelope::encode([item]))
            .await
    }

    /// Deletes every item of id `id` not yet taken (Curator's `DistributedIdQueue.remove`)
    /// and returns how many it deleted; in lock-safe mode an item a consumer holds stays. The id is compared as written (`/` and `|` as `_`),
    /// so an id with them is found, where Curator compares the id as given and finds none.
    pub async fn remove(&self, id: &str) -> Result<usize> {
        self.core.serving()?;
        let inner = &self.core.inner;
        let id = fix_id(id);
        let mut pauses = Pauses::default();
        let children = loop {
            match inner.base.client.get_children(&inner.base.path).await {
                Ok(children) => break children,
                Err(Error::Code(ErrorCode::NoNode)) => return Ok(0),
                Err(e) if e.is_retryable() && may_retry(&inner.base.client) => pauses.pause().await,
                Err(e) => return Err(e.into()),
            }
        };
        let mut removed = 0;
        for name in children.iter().filter(|n| n.starts_with(QUEUE_PREFIX)) {
            if split_id(name).is_none_or(|(of, _)| of != id) {
                continue;
            }
            // As a take would (Curator's `tryRemove`): in lock-safe mode an item a consumer
            // holds is left to it.
            if let Claim::Taken(item) = inner.claim(name).await? {
                item.done().await?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    async fn put_named(&self, prefix: &str, data: Vec<u8>) -> Result<()> {
        self.core.serving()?;
        let inner = self.core.inner.clone();
        let path = child_path(&inner.base.path, prefix);
        // In a task of its own: a dropped put still learns whether it happened.
        tokio::spawn(async move {
            let op = Op::create(path, &data, CreateOptions::persistent_sequential());
            outcome::apply(&inner.base.client, &inner.base.path, vec![op]).await
        })
        .await
        .unwrap_or(Err(Error::Closed))?;
        Ok(())
    }

    /// Waits for an item and takes it. In lock-safe mode the item stays in the queue until
    /// [`QueueItem::done`]; otherwise it is removed before this returns. Cancel-safe: a
    /// dropped take leaves the queue as it was (a lock it made is removed, an item it had
    /// removed goes back in).
    pub async fn take(&self) -> Result<QueueItem> {
        self.core.take().await
    }

    /// Takes an item if one is ready now; `None` when the queue is empty.
    pub async fn try_take(&self) -> Result<Option<QueueItem>> {
        self.core.next(false).await
    }

    /// Waits at most `timeout` for an item.
    pub async fn take_timeout(&self, timeout: Duration) -> Result<Option<QueueItem>> {
        self.core.take_timeout(timeout).await
    }

    /// The queue's state; its last state says why it ended.
    pub fn status(&self) -> ValueWatch<QueueStatus> {
        self.core.status()
    }

    /// Stops the queue: takes in progress end with [`RecipeError::Closed`]. The queue's
    /// znodes stay (they are shared). Items taken in lock-safe mode and not yet done are
    /// unlocked when dropped.
    pub async fn close(self) -> Result<()> {
        self.core.close();
        Ok(())
    }
}

impl Source for Inner {
    type Item = QueueItem;

    fn base(&self) -> &Base {
        &self.base
    }

    async fn claim(&self, name: &str) -> Result<Claim<QueueItem>> {
        let inner = self;
        let item_path = child_path(&inner.base.path, name);
        match &inner.lock_path {
            Some(lock_dir) => {
                let lock = child_path(lock_dir, name);
                let guard = LockGuard::new(&inner.base.client, lock, Bytes::new());
                claim_locked(&inner.base.client, item_path, guard).await
            }
            None => {
                let (client, dir) = (inner.base.client.clone(), inner.base.path.clone());
                // Back under its own name (its priority, delay or id), a new sequence.
                let prefix = name[..name.len().saturating_sub(SEQ_DIGITS)].to_owned();
                // A task of its own: an item removed for a caller who is gone goes back in.
                let (tx, rx) = tokio::sync::oneshot::channel();
                tokio::spawn(async move {
                    let taken = take_plain(&client, &dir, &item_path).await;
                    if let Err(Ok(Some(items))) = tx.send(taken) {
                        let op = Op::create(
                            child_path(&dir, &prefix),
                            &envelope::encode(items.iter()),
                            CreateOptions::persistent_sequential(),
                        );
                        let _ = outcome::apply(&client, &dir, vec![op]).await;
                    }
                });
                let items = rx.await.unwrap_or(Err(RecipeError::Closed))?;
                Ok(match items {
                    Some(items) => Claim::Taken(QueueItem::plain(name.to_owned(), items)),
                    None => Claim::Gone,
                })
            }
        }
    }

    async fn make_dir(&self) -> Result<()> {
        ensure_dir(&self.base.client, &self.base.path).await
    }
}

/// Moves a running queue's status to its last state `why` (a queue that ended stays so).
pub(super) fn end(status: &watch::Sender<QueueStatus>, why: QueueStatus) {
    status.send_if_modified(|s| {
        let running = *s == QueueStatus::Running;
        if running {
            *s = why;
        }
        running
    });
}

/// Whether a queue still serves: its end (the client's, noticed here first) as an error.
pub(super) fn serving(client: &Client, status: &watch::Sender<QueueStatus>) -> Result<()> {
    if let Some(why) = client_over(client) {
        end(status, QueueStatus::Ended(why));
    }
    match *status.borrow() {
        QueueStatus::Running => Ok(()),
        QueueStatus::Ended(why) => Err(RecipeError::Lost(why)),
        QueueStatus::Closed => Err(RecipeError::Closed),
    }
}

/// Removes a plain item and returns its items; `None` when someone else took it first, or
/// it was not an envelope (then it is deleted, as Curator deletes a corrupt item).
async fn take_plain(client: &Client, dir: &str, path: &str) -> Result<Option<Vec<Bytes>>> {
    Ok(remove_item(client, dir, path)
        .await?
        .and_then(|data| envelope::decode(&data)))
}

/// Removes the item znode at `path` (its version as read: exactly that item) and returns its
/// data; `None` when someone else took it first. A lost reply is resolved by [`outcome`].
pub(super) async fn remove_item(client: &Client, dir: &str, path: &str) -> Result<Option<Bytes>> {
    let mut pauses = Pauses::default();
    loop {
        let (data, stat) = match client.get_data(path).await {
            Ok(read) => read,
            Err(Error::Code(ErrorCode::NoNode)) => return Ok(None),
            Err(e) if e.is_retryable() && may_retry(client) => {
                pauses.pause().await;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let delete = Op::delete(path, Version::Exact(stat.version));
        return match outcome::apply(client, dir, vec![delete]).await {
            Ok(_) => Ok(Some(data)),
            Err(e) if matches!(e.code(), Some(ErrorCode::NoNode | ErrorCode::BadVersion)) => {
                Ok(None)
            }
            Err(e) => Err(e.into()),
        };
    }
}

/// Makes `path` PERSISTENT (its parents containers) unless it exists.
pub(super) async fn ensure_dir(client: &Client, path: &str) -> Result<()> {
    let mut pauses = Pauses::default();
    loop {
        let parents = match parent_of(path) {
            "/" => Ok(()),
            parent => create_parents(client, parent).await,
        };
        let made = match parents {
            Ok(()) => client
                .create(path, b"", CreateOptions::persistent())
                .await
                .map(drop),
            Err(RecipeError::Session(e)) => Err(e),
            Err(e) => return Err(e),
        };
        match made {
            Ok(()) | Err(Error::Code(ErrorCode::NodeExists)) => return Ok(()),
            Err(e) if e.is_retryable() && may_retry(client) => pauses.pause().await,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Publishes the client's end as the queue's.
pub(super) async fn follow_end(client: Client, status: Arc<watch::Sender<QueueStatus>>) {
    let mut state = client.watch_state();
    loop {
        if let Some(why) = client_over(&client).filter(|_| client.has_ended()) {
            status.send_if_modified(|s| {
                let running = *s == QueueStatus::Running;
                if running {
                    *s = QueueStatus::Ended(why);
                }
                running
            });
            return;
        }
        if state.changed().await.is_err() {
            return;
        }
    }
}

pub(super) fn retryable(client: &Client, e: &RecipeError) -> bool {
    matches!(e, RecipeError::Session(e) if e.is_retryable() && may_retry(client))
}

pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
