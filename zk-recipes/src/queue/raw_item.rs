//! Items of raw bytes (ZooKeeper's `qn-` queue, kazoo's queues): put exactly once, and taken
//! by removing the znode, with the outcome of either surviving a lost reply ([`outcome`])
//! and a dropped caller (the work runs in a task of its own).

use bytes::Bytes;
use zk_session::{Client, CreateOptions, ErrorCode, Op};

use super::{
    consumer::{Claim, Source},
    distributed_queue::{ensure_dir, remove_item},
    handle::Base,
    order::SEQ_DIGITS,
    outcome,
};
use crate::{
    plumbing::protected::{child_path, create_parents},
    RecipeError, Result,
};

/// How a queue's directory is made when a put finds it missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DirKind {
    /// A CONTAINER (Curator's SimpleDistributedQueue), parents too.
    Container,
    /// PERSISTENT, parents as containers (kazoo's `ensure_path` makes them persistent).
    Persistent,
}

/// Where a raw queue's items live and where its markers go.
#[derive(Debug, Clone)]
pub(crate) struct RawDir {
    /// The items' directory.
    pub(crate) dir: String,
    /// Where the marker of a transaction goes: a directory no consumer takes items from.
    pub(crate) markers: String,
    pub(crate) kind: DirKind,
}

impl RawDir {
    /// Creates one PERSISTENT_SEQUENTIAL `dir/<prefix><seq>` per item of `items`, in one
    /// transaction, exactly once (a lost reply is resolved, a dropped caller does not stop
    /// it); the directory is made when missing.
    pub(crate) async fn put(&self, client: &Client, prefix: &str, items: Vec<Bytes>) -> Result<()> {
        let (client, raw, path) = (client.clone(), self.clone(), child_path(&self.dir, prefix));
        // In a task of its own: a dropped put still learns whether it happened.
        tokio::spawn(async move {
            let ops: Vec<Op> = items
                .iter()
                .map(|data| Op::create(path.clone(), data, CreateOptions::persistent_sequential()))
                .collect();
            loop {
                match outcome::apply(&client, &raw.markers, ops.clone()).await {
                    Ok(_) => return Ok(()),
                    Err(e) if e.code() == Some(ErrorCode::NoNode) => raw.make(&client).await?,
                    Err(e) => return Err(e.into()),
                }
            }
        })
        .await
        .unwrap_or(Err(RecipeError::Closed))
    }

    /// Removes item `name` and returns its bytes; `None` when another consumer took it
    /// first. When the caller is gone by the time it is removed, the bytes go back in, as
    /// a new `dir/<prefix><seq>` (`prefix`: the item's name without its sequence).
    pub(crate) async fn take(
        &self,
        client: &Client,
        name: &str,
        prefix: &str,
    ) -> Result<Option<Bytes>> {
        let (client, raw) = (client.clone(), self.clone());
        let (path, prefix) = (child_path(&self.dir, name), prefix.to_owned());
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let taken = remove_item(&client, &raw.markers, &path).await;
            if let Err(Ok(Some(item))) = tx.send(taken) {
                let _ = raw.put(&client, &prefix, vec![item]).await;
            }
        });
        rx.await.unwrap_or(Err(RecipeError::Closed))
    }

    /// Makes the directory.
    pub(crate) async fn make(&self, client: &Client) -> Result<()> {
        match self.kind {
            DirKind::Container => create_parents(client, &self.dir).await,
            DirKind::Persistent => ensure_dir(client, &self.dir).await,
        }
    }
}

/// A queue of raw items as the take loop sees it (the `qn-` queue, kazoo's `Queue`).
#[derive(Debug)]
pub(crate) struct RawQueue {
    pub(crate) base: Base,
    pub(crate) raw: RawDir,
}

impl RawQueue {
    /// The queue at `raw.dir` on `client`.
    pub(crate) fn new(client: Client, raw: RawDir) -> Self {
        RawQueue {
            base: Base::new(client, raw.dir.clone()),
            raw,
        }
    }

    /// Puts `item` as `dir/<prefix><seq>` (see [`RawDir::put`]).
    pub(crate) async fn put(&self, prefix: &str, item: &[u8]) -> Result<()> {
        let item = Bytes::copy_from_slice(item);
        self.raw.put(&self.base.client, prefix, vec![item]).await
    }
}

impl Source for RawQueue {
    type Item = Bytes;

    fn base(&self) -> &Base {
        &self.base
    }

    /// Removes item `name`; its bytes, or `None` when another consumer took it first. An
    /// item removed for a caller who is gone goes back under its own name without the
    /// sequence (its priority, for kazoo's), at the end.
    async fn claim(&self, name: &str) -> Result<Claim<Bytes>> {
        let prefix = &name[..name.len().saturating_sub(SEQ_DIGITS)];
        let taken = self.raw.take(&self.base.client, name, prefix).await?;
        Ok(taken.map_or(Claim::Gone, Claim::Taken))
    }

    async fn make_dir(&self) -> Result<()> {
        self.raw.make(&self.base.client).await
    }
}
