//! [`SimpleDistributedQueue`]: ZooKeeper's own queue recipe (`qn-` znodes of raw bytes), as
//! Curator's `SimpleDistributedQueue` and zookeeper-recipes-queue's `DistributedQueue` use it.

use std::time::Duration;

use bytes::Bytes;
use zk_session::{Client, Error, ErrorCode};

use super::{
    consumer::Consumer,
    handle::Handle,
    order::{sorted_items, QueueOrder},
    raw_item::{DirKind, RawDir, RawQueue},
    QueueStatus,
};
use crate::{
    plumbing::{
        liveness::client_over,
        protected::child_path,
        retry::{may_retry, Pauses},
        runtime,
    },
    RecipeError, Result, ValueWatch,
};

/// The prefix of every item's name (the recipe's, Curator's and ZooKeeper's).
const ITEM_PREFIX: &str = "qn-";

/// Builds a [`SimpleDistributedQueue`]; see [`SimpleDistributedQueue::builder`].
#[derive(Debug)]
pub struct SimpleDistributedQueueBuilder {
    client: Client,
    path: String,
}

impl SimpleDistributedQueueBuilder {
    /// Starts the queue. Nothing is written yet: the queue's znode is made (a CONTAINER, as
    /// Curator makes it) by the first offer or take that finds it missing. Fails outside a
    /// tokio runtime ([`RecipeError::NoRuntime`]) or once the client has ended.
    pub async fn start(self) -> Result<SimpleDistributedQueue> {
        runtime::current()?;
        if let Some(why) = client_over(&self.client).filter(|_| self.client.has_ended()) {
            return Err(RecipeError::Lost(why));
        }
        let raw = RawDir {
            dir: self.path.clone(),
            markers: self.path,
            kind: DirKind::Container,
        };
        let inner = RawQueue::new(self.client, raw);
        let consumer = Consumer::new(QueueOrder::Fifo, ITEM_PREFIX, 1);
        Ok(SimpleDistributedQueue {
            core: Handle::start(inner, consumer)?,
        })
    }
}

/// ZooKeeper's queue recipe: each item a PERSISTENT_SEQUENTIAL `path/qn-<seq>` znode holding
/// the item's bytes as they are (no envelope), taken oldest first. Shares its znodes with
/// Curator's `SimpleDistributedQueue` and with zookeeper-recipes-queue's
/// `DistributedQueue`; `path` is a CONTAINER, made again when the server has reaped it.
///
/// Better than Curator's: an offer or a take whose reply is lost is neither doubled nor lost
/// (a marker znode in the same transaction says whether it was applied, as for
/// [`DistributedQueue`](crate::DistributedQueue)), and a consumer lists the queue once per
/// batch of items, not once per item.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::SimpleDistributedQueue;
///
/// let queue = SimpleDistributedQueue::builder(client, "/jobs").start().await?;
/// queue.offer(b"resize img-17").await?;
/// let job = queue.take().await?; // waits for an item
/// assert_eq!(&job[..], b"resize img-17");
/// assert!(queue.poll().await?.is_none()); // empty: does not wait
/// queue.close().await?;
/// # Ok(()) }
/// ```
///
/// Dropping the queue without [`close`](Self::close) stops it the same way.
#[derive(Debug)]
pub struct SimpleDistributedQueue {
    core: Handle<RawQueue>,
}

impl SimpleDistributedQueue {
    /// A queue at `path`.
    pub fn builder(client: Client, path: impl Into<String>) -> SimpleDistributedQueueBuilder {
        SimpleDistributedQueueBuilder {
            client,
            path: path.into(),
        }
    }

    /// Adds an item (Curator's `offer`). A lost reply is resolved before this returns;
    /// cancel-safe in that a dropped offer either happened once or not at all.
    pub async fn offer(&self, item: &[u8]) -> Result<()> {
        self.core.serving()?;
        self.core.inner.put(ITEM_PREFIX, item).await
    }

    /// The oldest item, left in the queue (Curator's `peek`); `None` when the queue is empty.
    /// Lists the queue on every call.
    pub async fn peek(&self) -> Result<Option<Bytes>> {
        self.core.serving()?;
        let client = &self.core.inner.base.client;
        let mut pauses = Pauses::default();
        'list: loop {
            let children = match client.get_children(&self.core.inner.base.path).await {
                Ok(c) => c,
                Err(Error::Code(ErrorCode::NoNode)) => return Ok(None),
                Err(e) if e.is_retryable() && may_retry(client) => {
                    pauses.pause().await;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            for name in sorted_items(QueueOrder::Fifo, children, ITEM_PREFIX) {
                match client
                    .get_data(&child_path(&self.core.inner.base.path, &name))
                    .await
                {
                    Ok((data, _)) => return Ok(Some(data)),
                    Err(Error::Code(ErrorCode::NoNode)) => {}
                    Err(e) if e.is_retryable() && may_retry(client) => {
                        pauses.pause().await;
                        continue 'list;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            return Ok(None);
        }
    }

    /// Takes the oldest item if there is one now (Curator's `poll()`); `None` when empty.
    pub async fn poll(&self) -> Result<Option<Bytes>> {
        self.core.next(false).await
    }

    /// Waits for an item and takes it. Cancel-safe: a dropped take leaves the queue as it
    /// was (an item it had removed goes back in, at the end).
    pub async fn take(&self) -> Result<Bytes> {
        self.core.take().await
    }

    /// Waits at most `timeout` for an item (Curator's `poll(timeout, unit)`).
    pub async fn take_timeout(&self, timeout: Duration) -> Result<Option<Bytes>> {
        self.core.take_timeout(timeout).await
    }

    /// The queue's state; its last state says why it ended.
    pub fn status(&self) -> ValueWatch<QueueStatus> {
        self.core.status()
    }

    /// Stops the queue: takes in progress end with [`RecipeError::Closed`]. The queue's
    /// znodes stay (they are shared).
    pub async fn close(self) -> Result<()> {
        self.core.close();
        Ok(())
    }
}
