//! The take loop both queues share: list the queue (with a children watch), try its items in
//! order, and wait for a change (or a delayed item's time, or a blocking lock's release)
//! when there is nothing to take. What differs between queues (how an item is taken, how a
//! missing queue znode is made) comes in through [`Source`].

use std::time::Duration;

use zk_session::{Error, ErrorCode, OneshotWatch};

use super::{
    batch::{Batch, Next},
    distributed_queue::{now_ms, retryable, serving},
    handle::Base,
    order::{sorted_items, QueueOrder},
    QueueStatus,
};
use crate::{
    counter::parent_of,
    plumbing::{
        retry::{may_retry, Pauses},
        watches::children_watch,
    },
    Result,
};

/// What a try to take one item found.
#[derive(Debug)]
pub(crate) enum Claim<T> {
    /// Taken.
    Taken(T),
    /// Another consumer holds its lock, at this path.
    Locked(String),
    /// It is gone (taken by another consumer, or unreadable and deleted).
    Gone,
}

/// One queue as the take loop sees it.
pub(crate) trait Source {
    /// What a take returns.
    type Item;

    /// The queue's client, znode and status.
    fn base(&self) -> &Base;

    /// Tries to take item `name`.
    async fn claim(&self, name: &str) -> Result<Claim<Self::Item>>;

    /// Makes the queue's znode, found missing by a listing.
    async fn make_dir(&self) -> Result<()>;
}

/// A consumer's state between takes (held under the queue's consumer lock).
#[derive(Debug)]
pub(crate) struct Consumer {
    order: QueueOrder,
    prefix: &'static str,
    batch: Batch,
    watch: Option<OneshotWatch>,
    /// The locks of the items skipped as locked since the last listing: their release
    /// changes no child of the queue, so a waiting consumer watches their directory too
    /// (kazoo's LockingQueue watches its `taken` directory the same way).
    blocked_by: Vec<String>,
}

impl Consumer {
    /// A consumer of the items named `prefix…`, taken in `order`.
    pub(crate) fn new(order: QueueOrder, prefix: &'static str, refresh_after: u32) -> Self {
        Consumer {
            order,
            prefix,
            batch: Batch::new(order, refresh_after),
            watch: None,
            blocked_by: Vec::new(),
        }
    }

    /// Takes the next item; with `wait` false, `None` when one fresh listing shows nothing
    /// ready.
    pub(crate) async fn next<S: Source>(
        &mut self,
        source: &S,
        wait: bool,
    ) -> Result<Option<S::Item>> {
        let client = &source.base().client;
        let mut pauses = Pauses::default();
        let mut listings = 0;
        loop {
            serving(client, &source.base().status)?;
            let now = now_ms();
            match self.batch.next(now) {
                Next::Take(name) => match source.claim(&name).await {
                    Ok(Claim::Taken(item)) => return Ok(Some(item)),
                    Ok(Claim::Locked(lock)) => {
                        self.blocked_by.push(lock);
                    }
                    Ok(Claim::Gone) => {}
                    Err(e) if retryable(client, &e) => {
                        self.batch.invalidate();
                        pauses.pause().await;
                    }
                    Err(e) => return Err(e),
                },
                Next::List => match children_watch(client, &source.base().path).await {
                    Ok((children, w)) => {
                        listings += 1;
                        self.batch
                            .listed(sorted_items(self.order, children, self.prefix));
                        self.watch = Some(w);
                        self.blocked_by.clear();
                        pauses.reset();
                    }
                    // Reaped (or never made): made again, so that the watch can be set.
                    Err(Error::Code(ErrorCode::NoNode)) => source.make_dir().await?,
                    Err(e) if e.is_retryable() && may_retry(client) => pauses.pause().await,
                    Err(e) => return Err(e.into()),
                },
                Next::Wait(until) => {
                    // A try looks at one fresh listing at most.
                    if !wait && (listings > 0 || until.is_some()) {
                        return Ok(None);
                    }
                    if !wait {
                        self.batch.invalidate();
                        continue;
                    }
                    self.wait_for_change(source, until, now).await;
                }
            }
        }
    }

    /// Waits for the children watch (or the release of a lock that blocked us, a delayed
    /// item's time, or the queue's end).
    async fn wait_for_change<S: Source>(&mut self, source: &S, until: Option<u64>, now: u64) {
        let sleep = until.map(|t| Duration::from_millis(t.saturating_sub(now)));
        let mut status = source.base().status.subscribe();
        let blocked = std::mem::take(&mut self.blocked_by);
        let unlocked = match blocked.first() {
            Some(lock) => match children_watch(&source.base().client, parent_of(lock)).await {
                // Still locked, every one: wait for a lock to go (or come).
                Ok((locks, w)) if all_still_locked(&blocked, &locks) => Some(w),
                // One already released (or unreadable): look again at once.
                _ => {
                    self.batch.invalidate();
                    return;
                }
            },
            None => None,
        };
        let unlocked = async {
            match unlocked {
                Some(w) => {
                    let _ = w.await;
                }
                None => std::future::pending().await,
            }
        };
        let watch = self.watch.take();
        let fired = async {
            match watch {
                Some(w) => w.await.is_ok(),
                None => false,
            }
        };
        let slept = async {
            match sleep {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            ok = fired => {
                if ok {
                    self.batch.changed();
                } else {
                    // The watch ended (a new session): list again.
                    self.batch.invalidate();
                }
            }
            _ = slept => {}
            _ = status.wait_for(QueueStatus::has_ended) => {}
            _ = unlocked => self.batch.invalidate(),
        }
    }
}

/// Whether every lock in `blocked` (full paths) is among `locks` (the names in their
/// directory).
fn all_still_locked(blocked: &[String], locks: &[String]) -> bool {
    let held: std::collections::HashSet<&str> = locks.iter().map(String::as_str).collect();
    blocked
        .iter()
        .all(|b| held.contains(b.rsplit('/').next().unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::all_still_locked;

    #[test]
    fn a_wait_on_locks_starts_only_while_every_lock_seen_is_held() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let blocked = s(&[
            "/q/taken/entry-100-0000000001",
            "/q/taken/entry-100-0000000004",
        ]);
        let held = s(&[
            "entry-100-0000000004",
            "entry-100-0000000001",
            "entry-100-0000000009",
        ]);
        assert!(all_still_locked(&blocked, &held));
        assert!(
            !all_still_locked(&blocked, &held[1..]),
            "one went meanwhile"
        );
        assert!(all_still_locked(&[], &[]));
    }

    fn is_send<T: Send>(_: &T) {}

    // Users spawn takes: the shared loop must keep them Send.
    #[allow(dead_code)]
    async fn takes_are_send(q: crate::DistributedQueue, s: crate::SimpleDistributedQueue) {
        is_send(&q.take());
        is_send(&s.take());
    }
}
