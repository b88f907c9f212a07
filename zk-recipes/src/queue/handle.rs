//! What both queues are made of: the znode and client they serve ([`Base`]), and the running
//! queue ([`Handle`]) whose takes go through the shared take loop, which follows the client's
//! end and stops when closed or dropped.

use std::{sync::Arc, time::Duration};

use tokio::sync::{watch, Mutex};
use zk_session::Client;

use super::{
    consumer::{Consumer, Source},
    distributed_queue::{end, follow_end, serving},
    QueueStatus,
};
use crate::{plumbing::runtime, Result, ValueWatch};

/// The client, queue znode and status of a queue.
#[derive(Debug)]
pub(crate) struct Base {
    pub(crate) client: Client,
    pub(crate) path: String,
    pub(crate) status: Arc<watch::Sender<QueueStatus>>,
}

impl Base {
    pub(crate) fn new(client: Client, path: String) -> Self {
        let status = Arc::new(watch::channel(QueueStatus::Running).0);
        Base {
            client,
            path,
            status,
        }
    }
}

/// A running queue over `S`: its takes (one consumer at a time), its status and its end.
#[derive(Debug)]
pub(crate) struct Handle<S: Source> {
    pub(crate) inner: Arc<S>,
    consumer: Mutex<Consumer>,
    follower: tokio::task::AbortHandle,
}

impl<S: Source> Handle<S> {
    /// Runs `inner`, publishing the client's end as the queue's; fails outside a runtime.
    pub(crate) fn start(inner: S, consumer: Consumer) -> Result<Self> {
        let handle = runtime::current()?;
        let base = inner.base();
        let follower = handle.spawn(follow_end(base.client.clone(), base.status.clone()));
        Ok(Handle {
            inner: Arc::new(inner),
            consumer: Mutex::new(consumer),
            follower: follower.abort_handle(),
        })
    }

    /// The next item; with `wait` false, `None` when none is ready now.
    pub(crate) async fn next(&self, wait: bool) -> Result<Option<S::Item>> {
        let mut consumer = self.consumer.lock().await;
        consumer.next(&*self.inner, wait).await
    }

    pub(crate) async fn take(&self) -> Result<S::Item> {
        loop {
            if let Some(item) = self.next(true).await? {
                return Ok(item);
            }
        }
    }

    pub(crate) async fn take_timeout(&self, timeout: Duration) -> Result<Option<S::Item>> {
        match tokio::time::timeout(timeout, self.take()).await {
            Ok(item) => item.map(Some),
            Err(_) => Ok(None),
        }
    }

    pub(crate) fn status(&self) -> ValueWatch<QueueStatus> {
        ValueWatch::new(self.inner.base().status.subscribe())
    }

    pub(crate) fn close(&self) {
        end(&self.inner.base().status, QueueStatus::Closed);
    }

    /// Whether the queue still serves: its end as an error.
    pub(crate) fn serving(&self) -> Result<()> {
        let base = self.inner.base();
        serving(&base.client, &base.status)
    }
}

impl<S: Source> Drop for Handle<S> {
    fn drop(&mut self) {
        self.follower.abort();
        self.close();
    }
}
