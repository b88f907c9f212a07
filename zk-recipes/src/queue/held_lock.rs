//! The EPHEMERAL lock of a held queue item, shared by Curator's lock-safe mode
//! (`lock_path/<item>`, empty) and kazoo's LockingQueue (`taken/<entry>`, the consumer's
//! id): taken so that a dropped take never leaves it behind ([`LockGuard`]), and given up by
//! removing the item with it or by unlocking it ([`HeldLock`]).

use bytes::Bytes;
use zk_session::{Client, CreateOptions, Error, ErrorCode, Op, Version};

use super::lock_watch::LockWatch;
use crate::{
    plumbing::{
        liveness::raw_session_id,
        retry::{may_retry, Pauses},
    },
    LostReason, RecipeError, Result,
};

/// What a try to lock an item found.
#[derive(Debug)]
pub(crate) enum Locking {
    /// Locked for us.
    Held,
    /// Another consumer holds the lock, at this path.
    Locked(String),
    /// The lock's directory is gone: nothing to take.
    Gone,
}

/// The lock of an item, from its create on: removed when dropped unless disarmed.
#[derive(Debug)]
pub(crate) struct LockGuard {
    client: Client,
    path: String,
    data: Bytes,
    session: i64,
    armed: bool,
}

impl LockGuard {
    /// The lock at `path`, to be made holding `data`.
    pub(crate) fn new(client: &Client, path: String, data: Bytes) -> Self {
        LockGuard {
            client: client.clone(),
            path,
            data,
            session: raw_session_id(client),
            armed: false,
        }
    }

    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    pub(crate) fn disarm(&mut self) {
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

/// Creates the lock, EPHEMERAL. From the first send on, a dropped future removes what the
/// create may have made.
pub(crate) async fn take_lock(client: &Client, lock: &mut LockGuard) -> Result<Locking> {
    let mut pauses = Pauses::default();
    lock.armed = true;
    let mut resent = false;
    loop {
        match client
            .create(&lock.path, &lock.data, CreateOptions::ephemeral())
            .await
        {
            Ok(_) => return Ok(Locking::Held),
            Err(Error::Code(ErrorCode::NodeExists)) => {
                // After a lost reply, ours if that create went through; otherwise (and on a
                // first try, when the lock may be this session's other item) someone else's.
                match client.exists(&lock.path).await {
                    Ok(Some(stat)) if resent && stat.ephemeral_owner == lock.session => {
                        return Ok(Locking::Held)
                    }
                    Ok(_) => {
                        lock.disarm();
                        return Ok(Locking::Locked(lock.path.clone()));
                    }
                    Err(e) if e.is_retryable() && may_retry(client) => pauses.pause().await,
                    Err(e) => return Err(e.into()),
                }
            }
            // The lock directory went away (deleted by hand): nothing to take here.
            Err(Error::Code(ErrorCode::NoNode)) => {
                lock.disarm();
                return Ok(Locking::Gone);
            }
            Err(e) if e.is_retryable() && may_retry(client) => {
                resent = true;
                pauses.pause().await
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Reads the item at `item_path` once its lock is held: `None` when it is gone (consumed
/// before we locked it).
pub(crate) async fn read_item(client: &Client, item_path: &str) -> Result<Option<Bytes>> {
    let mut pauses = Pauses::default();
    loop {
        match client.get_data(item_path).await {
            Ok((data, _)) => return Ok(Some(data)),
            Err(Error::Code(ErrorCode::NoNode)) => return Ok(None),
            Err(e) if e.is_retryable() && may_retry(client) => pauses.pause().await,
            Err(e) => return Err(e.into()),
        }
    }
}

/// A held item: its lock and the item's znode.
#[derive(Debug)]
pub(crate) struct HeldLock {
    lock: LockGuard,
    item_path: String,
}

impl HeldLock {
    pub(crate) fn new(lock: LockGuard, item_path: String) -> Self {
        HeldLock { lock, item_path }
    }

    /// A watch on the lock (see [`LockWatch`]).
    pub(crate) fn watch(&self) -> LockWatch {
        LockWatch::start(&self.lock.client, self.lock.path.clone(), self.lock.session)
    }

    /// Whether the lock is ours now: sync, then its data and owner (kazoo's `holds_lock`
    /// compares the data with its id; the owner tells two of our own consumers apart too).
    pub(crate) async fn holds_lock(&self) -> Result<bool> {
        let client = &self.lock.client;
        let mut pauses = Pauses::default();
        loop {
            let read = async {
                client.sync(&self.lock.path).await?;
                client.get_data(&self.lock.path).await
            };
            match read.await {
                Ok((data, stat)) => {
                    return Ok(data == self.lock.data
                        && stat.ephemeral_owner == self.lock.session
                        && raw_session_id(client) == self.lock.session)
                }
                Err(Error::Code(ErrorCode::NoNode)) => return Ok(false),
                Err(e) if e.is_retryable() && may_retry(client) => pauses.pause().await,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Removes the item and the lock in one transaction, if the lock is still ours; fails
    /// with [`RecipeError::Lost`] when it is not (the item is someone else's now).
    pub(crate) async fn remove_item(mut self) -> Result<()> {
        let client = self.lock.client.clone();
        let mut pauses = Pauses::default();
        let mut sent = false;
        loop {
            let version = match self.our_lock_version().await {
                Ok(Some(v)) => v,
                // Gone after a send: that transaction went through (or the lock was
                // deleted meanwhile, which leaves the item to the next consumer either way).
                Ok(None) if sent => break,
                Ok(None) => return Err(self.lost_reason()),
                Err(e) if e.is_retryable() && may_retry(&client) => {
                    pauses.pause().await;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let ops = [
                Op::delete(self.item_path.clone(), Version::Any),
                Op::delete(self.lock.path.clone(), Version::Exact(version)),
            ];
            sent = true;
            match client.multi(ops).await {
                Ok(_) => break,
                // The item removed by a consumer that takes no locks (or by hand): what is
                // left is our lock, which the guard removes.
                Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(()),
                Err(e) if e.code() == Some(ErrorCode::BadVersion) => return Err(self.lost_reason()),
                Err(e) if e.is_retryable() && may_retry(&client) => pauses.pause().await,
                Err(e) => return Err(e.into()),
            }
        }
        self.lock.disarm();
        Ok(())
    }

    /// Unlocks the item, in its place, for the next consumer.
    pub(crate) async fn unlock(mut self) -> Result<()> {
        let done = delete_if_ours(&self.lock.client, &self.lock.path, self.lock.session).await;
        self.lock.disarm();
        done.map_err(RecipeError::from)
    }

    /// The lock's version if it is this session's: `None` when it is gone or another's.
    async fn our_lock_version(&self) -> Result<Option<i32>, Error> {
        if raw_session_id(&self.lock.client) != self.lock.session {
            return Ok(None);
        }
        Ok(match self.lock.client.exists(&self.lock.path).await? {
            Some(stat) if stat.ephemeral_owner == self.lock.session => Some(stat.version),
            _ => None,
        })
    }

    /// Why the lock is not ours: its session is over, or it was deleted.
    fn lost_reason(&mut self) -> RecipeError {
        self.lock.disarm();
        RecipeError::Lost(if raw_session_id(&self.lock.client) != self.lock.session {
            LostReason::Expired
        } else {
            LostReason::NodeDeleted
        })
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
