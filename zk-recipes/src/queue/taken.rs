//! A taken queue item ([`QueueItem`]) and, in lock-safe mode, the EPHEMERAL lock that holds
//! it: made so that a dropped take or a dropped item never leaves a lock behind.

use std::fmt;

use bytes::Bytes;

use super::{
    consumer::Claim,
    envelope,
    held_lock::{read_item, take_lock, HeldLock, LockGuard, Locking},
    lock_watch::LockWatch,
};
use crate::{LostReason, Result};
use zk_session::{Op, Version};

/// An item taken from a [`DistributedQueue`](crate::DistributedQueue).
///
/// In lock-safe mode it is still in the queue, locked for this consumer: [`done`](Self::done)
/// removes it, [`release`](Self::release) (or dropping it) unlocks it for the next consumer,
/// in its place. In plain mode it was removed when taken.
///
/// A lock-safe item is held like a lock: [`is_held`](Self::is_held) and
/// [`lost`](Self::lost) say when its lock went (its session expired or was presumed lost,
/// the client ended, or the lock znode was deleted), after which another consumer may take
/// the item, and this one's [`done`](Self::done) removes nothing.
///
/// ```no_run
/// # async fn work(_: &[bytes::Bytes]) {}
/// # async fn f(queue: zk_recipes::DistributedQueue) -> zk_recipes::Result<()> {
/// let item = queue.take().await?;
/// tokio::select! {
///     _ = work(item.items()) => item.done().await?,
///     why = item.lost() => eprintln!("{}: lock {why}; another consumer gets it", item.name()),
/// }
/// # Ok(()) }
/// ```
pub struct QueueItem {
    name: String,
    items: Vec<Bytes>,
    lock: Option<(HeldLock, LockWatch)>,
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

    /// True while the item is this consumer's alone: in lock-safe mode, while its lock
    /// stands; a plain item, removed from the queue when taken, always is.
    ///
    /// See the example on [`QueueItem`].
    pub fn is_held(&self) -> bool {
        self.lost_reason().is_none()
    }

    /// Why a lock-safe item's lock no longer stands, if it does not.
    ///
    /// See the example on [`QueueItem`].
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.lock.as_ref().and_then(|(_, w)| w.lost_reason())
    }

    /// Completes when a lock-safe item's lock no longer stands (at once if it already does
    /// not); never for a plain item. Cancel-safe; may be awaited from several places.
    ///
    /// See the example on [`QueueItem`].
    pub async fn lost(&self) -> LostReason {
        match &self.lock {
            Some((_, watch)) => watch.lost().await,
            None => std::future::pending().await,
        }
    }

    /// Done with it: in lock-safe mode removes the item and its lock in one transaction.
    /// When the lock went meanwhile (see [`lost`](Self::lost)), removes nothing and fails
    /// with [`RecipeError::Lost`](crate::RecipeError::Lost): the item is another
    /// consumer's now.
    pub async fn done(mut self) -> Result<()> {
        match self.lock.take() {
            Some((lock, watch)) => {
                watch.mark_released();
                lock.remove_item().await
            }
            None => Ok(()),
        }
    }

    /// Gives the item back: in lock-safe mode unlocks it, in its place, for the next
    /// consumer; a plain item, already removed, is dropped.
    pub async fn release(mut self) -> Result<()> {
        match self.lock.take() {
            Some((lock, watch)) => {
                watch.mark_released();
                lock.unlock().await
            }
            None => Ok(()),
        }
    }
}

/// Takes the lock of `item_path`, then reads the item.
pub(crate) async fn claim_locked(
    client: &zk_session::Client,
    item_path: String,
    mut lock: LockGuard,
) -> Result<Claim<QueueItem>> {
    match take_lock(client, &mut lock).await? {
        Locking::Held => {}
        Locking::Locked(path) => return Ok(Claim::Locked(path)),
        Locking::Gone => return Ok(Claim::Gone),
    }
    // Gone: consumed before we locked it; the guard unlocks.
    let Some(data) = read_item(client, &item_path).await? else {
        return Ok(Claim::Gone);
    };
    let name = item_path.rsplit('/').next().unwrap_or_default().to_owned();
    let Some(items) = envelope::decode(&data) else {
        // Not Curator's envelope: Curator deletes such an item as corrupt.
        let ops = [
            Op::delete(item_path.clone(), Version::Any),
            Op::delete(lock.path().to_owned(), Version::Any),
        ];
        if client.multi(ops).await.is_ok() {
            lock.disarm();
        }
        return Ok(Claim::Gone);
    };
    let held = HeldLock::new(lock, item_path);
    let watch = held.watch();
    Ok(Claim::Taken(QueueItem {
        name,
        items,
        lock: Some((held, watch)),
    }))
}
