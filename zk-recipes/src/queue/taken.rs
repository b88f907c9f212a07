//! A taken queue item ([`QueueItem`]) and, in lock-safe mode, the EPHEMERAL lock that holds
//! it: made so that a dropped take or a dropped item never leaves a lock behind.

use std::fmt;

use bytes::Bytes;
use zk_session::{Client, CreateOptions, Error, ErrorCode, Op, Version};

use super::{consumer::Claim, envelope};
use crate::{
    plumbing::{
        liveness::raw_session_id,
        retry::{may_retry, Pauses},
    },
    RecipeError, Result,
};

/// An item taken from a [`DistributedQueue`](crate::DistributedQueue).
///
/// In lock-safe mode it is still in the queue, locked for this consumer: [`done`](Self::done)
/// removes it, [`release`](Self::release) (or dropping it) unlocks it for the next consumer,
/// in its place. In plain mode it was removed when taken.
///
/// See the example on [`DistributedQueue`](crate::DistributedQueue).
pub struct QueueItem {
    name: String,
    items: Vec<Bytes>,
    lock: Option<LockGuard>,
    item_path: String,
}

impl fmt::Debug for QueueItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueItem")
            .field("name", &self.name)
            .field("items", &self.items.len())
            .field("locked", &self.lock.is_some())
            .finish()
    }
}

impl QueueItem {
    pub(crate) fn plain(name: String, items: Vec<Bytes>) -> Self {
        QueueItem {
            name,
            items,
            lock: None,
            item_path: String::new(),
        }
    }

    /// The item's znode name (`queue-0000000042`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the producer put: one entry per item of a `put_all`, one for a `put`.
    pub fn items(&self) -> &[Bytes] {
        &self.items
    }

    /// Done with it: in lock-safe mode removes the item and its lock in one transaction.
    pub async fn done(mut self) -> Result<()> {
        let Some(mut lock) = self.lock.take() else {
            return Ok(());
        };
        let client = lock.client.clone();
        let ops = vec![
            Op::delete(self.item_path.clone(), Version::Any),
            Op::delete(lock.path.clone(), Version::Any),
        ];
        let mut pauses = Pauses::default();
        loop {
            match client.multi(ops.clone()).await {
                Ok(_) => {
                    lock.disarm();
                    return Ok(());
                }
                // A repeat after a lost reply, or the item removed by a consumer that takes
                // no locks: what is left is our lock, which the guard removes.
                Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                    let _ = client.delete(&self.item_path, Version::Any).await;
                    return Ok(());
                }
                Err(e) if e.is_retryable() && may_retry(&client) => pauses.pause().await,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Gives the item back: in lock-safe mode unlocks it, in its place, for the next
    /// consumer; in plain mode puts it back at the end of the queue.
    pub async fn release(mut self) -> Result<()> {
        match self.lock.take() {
            Some(mut lock) => {
                let done = delete_if_ours(&lock.client, &lock.path, lock.session).await;
                lock.disarm();
                done.map_err(RecipeError::from)
            }
            None => Ok(()),
        }
    }
}

/// The lock `lock_dir/<item>` of a lock-safe take, from its create on: removed when dropped
/// unless disarmed (handed over to a [`QueueItem`], then removed with it).
pub(crate) struct LockGuard {
    client: Client,
    path: String,
    session: i64,
    armed: bool,
}

impl LockGuard {
    pub(crate) fn new(client: &Client, path: String) -> Self {
        LockGuard {
            client: client.clone(),
            path,
            session: raw_session_id(client),
            armed: false,
        }
    }

    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (client, path, session) = (self.client.clone(), self.path.clone(), self.session);
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                let _ = delete_if_ours(&client, &path, session).await;
            });
        }
    }
}

/// Takes the lock of `item_path`, then reads the item.
pub(crate) async fn claim_locked(
    client: &Client,
    item_path: String,
    mut lock: LockGuard,
) -> Result<Claim<QueueItem>> {
    let mut pauses = Pauses::default();
    // From here a dropped future must remove what the create may have made.
    lock.armed = true;
    let mut resent = false;
    loop {
        match client
            .create(&lock.path, b"", CreateOptions::ephemeral())
            .await
        {
            Ok(_) => break,
            Err(Error::Code(ErrorCode::NodeExists)) => {
                // After a lost reply, ours if that create went through; otherwise (and on a
                // first try, when the lock may be this session's other item) someone else's.
                match client.exists(&lock.path).await {
                    Ok(Some(stat)) if resent && stat.ephemeral_owner == lock.session => break,
                    Ok(_) => {
                        lock.disarm();
                        return Ok(Claim::Locked(lock.path.clone()));
                    }
                    Err(e) if e.is_retryable() && may_retry(client) => pauses.pause().await,
                    Err(e) => return Err(e.into()),
                }
            }
            // The lock directory went away (deleted by hand): nothing to take here.
            Err(Error::Code(ErrorCode::NoNode)) => {
                lock.disarm();
                return Ok(Claim::Gone);
            }
            Err(e) if e.is_retryable() && may_retry(client) => {
                resent = true;
                pauses.pause().await
            }
            Err(e) => return Err(e.into()),
        }
    }
    loop {
        match client.get_data(&item_path).await {
            Ok((data, _)) => {
                let name = item_path.rsplit('/').next().unwrap_or_default().to_owned();
                let Some(items) = envelope::decode(&data) else {
                    // Not Curator's envelope: Curator deletes such an item as corrupt.
                    let ops = [
                        Op::delete(item_path.clone(), Version::Any),
                        Op::delete(lock.path.clone(), Version::Any),
                    ];
                    if client.multi(ops).await.is_ok() {
                        lock.disarm();
                    }
                    return Ok(Claim::Gone);
                };
                return Ok(Claim::Taken(QueueItem {
                    name,
                    items,
                    lock: Some(lock),
                    item_path,
                }));
            }
            Err(Error::Code(ErrorCode::NoNode)) => return Ok(Claim::Gone), // the guard unlocks
            Err(e) if e.is_retryable() && may_retry(client) => pauses.pause().await,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Deletes the lock at `path` if the session `session` owns it.
async fn delete_if_ours(client: &Client, path: &str, session: i64) -> Result<(), Error> {
    let mut pauses = Pauses::default();
    loop {
        let attempt = async {
            match client.exists(path).await? {
                Some(stat) if stat.ephemeral_owner == session => {
                    client.delete(path, Version::Exact(stat.version)).await
                }
                _ => Ok(()),
            }
        };
        match attempt.await {
            Ok(()) | Err(Error::Code(ErrorCode::NoNode | ErrorCode::BadVersion)) => return Ok(()),
            Err(e)
                if e.is_retryable() && may_retry(client) && raw_session_id(client) == session =>
            {
                pauses.pause().await
            }
            // Another session now: the ephemeral lock went with ours.
            Err(_) if raw_session_id(client) != session => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}
