//! Handing events to every subscriber, each through a bounded queue of its own, so that a
//! slow subscriber never holds up the cache or the others: what does not fit is counted and
//! reported to that subscriber, at the place where it was dropped.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex, MutexGuard},
};

use tokio::sync::Notify;

use super::event::CacheEvent;

#[derive(Debug, Default)]
struct Queue {
    items: VecDeque<CacheEvent>,
    /// The cache is gone: the subscriber gets what is queued, then the end.
    closed: bool,
}

#[derive(Debug)]
struct Subscriber {
    queue: Mutex<Queue>,
    wake: Notify,
    capacity: usize,
}

impl Subscriber {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A panic while holding this lock cannot leave the queue half-changed.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, event: &CacheEvent) {
        let mut q = self.lock();
        if q.items.len() < self.capacity {
            q.items.push_back(event.clone());
        } else if let Some(CacheEvent::Lagged { missed }) = q.items.back_mut() {
            *missed += 1;
        } else {
            // The marker may go one over the capacity: it takes the place of what it stands for.
            q.items.push_back(CacheEvent::Lagged { missed: 1 });
        }
        drop(q);
        self.wake.notify_one();
    }

    fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_one();
    }
}

/// The set of subscribers of one cache.
#[derive(Debug, Default)]
pub(crate) struct FanOut {
    subscribers: Vec<Arc<Subscriber>>,
    closed: bool,
}

impl FanOut {
    /// A new subscriber, which gets every event sent from now on.
    pub(crate) fn subscribe(&mut self, capacity: usize) -> CacheEvents {
        let sub = Arc::new(Subscriber {
            queue: Mutex::default(),
            wake: Notify::new(),
            capacity: capacity.max(1),
        });
        if self.closed {
            sub.close();
        } else {
            self.subscribers.push(sub.clone());
        }
        CacheEvents { sub }
    }

    /// Queues `events` for every subscriber still listening.
    pub(crate) fn send(&mut self, events: &[CacheEvent]) {
        if events.is_empty() {
            return;
        }
        // A dropped CacheEvents leaves us the only holder.
        self.subscribers.retain(|s| Arc::strong_count(s) > 1);
        for sub in &self.subscribers {
            for e in events {
                sub.push(e);
            }
        }
    }

    /// The cache has stopped: every stream ends after its queued events.
    pub(crate) fn close(&mut self) {
        self.closed = true;
        for sub in self.subscribers.drain(..) {
            sub.close();
        }
    }
}

/// One subscriber's stream of [`CacheEvent`]s, from [`Cache::subscribe`](super::Cache::subscribe)
/// or [`CacheBuilder::subscribe`](super::CacheBuilder::subscribe).
///
/// It holds at most its capacity of unread events
/// ([`CacheBuilder::subscriber_capacity`](super::CacheBuilder::subscriber_capacity)); past
/// that, events are dropped and a [`CacheEvent::Lagged`] tells how many, where they were.
/// Dropping it unsubscribes.
#[derive(Debug)]
pub struct CacheEvents {
    sub: Arc<Subscriber>,
}

impl CacheEvents {
    /// The next event; `None` once the cache has stopped (dropped, or its client ended) and
    /// every queued event was read.
    ///
    /// Cancellation-safe: dropping the future loses nothing.
    pub async fn next(&mut self) -> Option<CacheEvent> {
        loop {
            if let Some(r) = self.try_next() {
                return r;
            }
            self.sub.wake.notified().await;
        }
    }

    /// The next event if one is queued: `Some(None)` at the end, `None` when there is
    /// nothing yet.
    pub fn try_next(&mut self) -> Option<Option<CacheEvent>> {
        let mut q = self.sub.lock();
        match q.items.pop_front() {
            Some(e) => Some(Some(e)),
            None if q.closed => Some(None),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::ResyncReason;

    fn ev(i: u64) -> CacheEvent {
        CacheEvent::Created {
            path: format!("/n{i}"),
            node: crate::cache::CachedNode::new(Default::default(), None),
        }
    }

    #[test]
    fn a_full_subscriber_counts_its_misses_where_they_happened_and_others_get_all() {
        let mut fan = FanOut::default();
        let mut slow = fan.subscribe(2);
        let mut fast = fan.subscribe(100);
        fan.send(&[ev(1), ev(2), ev(3), ev(4)]);
        let got: Vec<_> = std::iter::from_fn(|| slow.try_next().flatten()).collect();
        assert_eq!(got, [ev(1), ev(2), CacheEvent::Lagged { missed: 2 }]);
        fan.send(&[CacheEvent::Resynced(ResyncReason::Reconnected)]);
        assert_eq!(
            slow.try_next(),
            Some(Some(CacheEvent::Resynced(ResyncReason::Reconnected)))
        );
        let all: Vec<_> = std::iter::from_fn(|| fast.try_next().flatten()).collect();
        assert_eq!(all.len(), 5);
    }

    #[test]
    fn dropped_subscribers_are_forgotten_and_close_ends_the_streams() {
        let mut fan = FanOut::default();
        let gone = fan.subscribe(4);
        let mut kept = fan.subscribe(4);
        drop(gone);
        fan.send(&[ev(1)]);
        assert_eq!(fan.subscribers.len(), 1);
        fan.close();
        assert_eq!(kept.try_next(), Some(Some(ev(1))));
        assert_eq!(kept.try_next(), Some(None));
        let mut late = fan.subscribe(4);
        assert_eq!(late.try_next(), Some(None));
    }

    #[tokio::test]
    async fn a_waiting_subscriber_is_woken() {
        let mut fan = FanOut::default();
        let mut sub = fan.subscribe(4);
        let reader = tokio::spawn(async move { sub.next().await });
        tokio::task::yield_now().await;
        fan.send(&[ev(7)]);
        assert_eq!(reader.await.unwrap(), Some(ev(7)));
    }
}
