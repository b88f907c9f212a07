//! What a consumer knows of the queue between listings: the names it listed last, in the
//! order they are taken, and whether the queue changed since. A plain value, so that "a take
//! does not list the whole queue" is a unit test.
//!
//! Curator's consumer lists every child on every change of the queue; with 100,000 items
//! and a busy producer that is a multi-megabyte listing per item. Here a FIFO consumer lists
//! once per batch (new items sort after the ones it holds), and a priority or delay consumer
//! lists again only after `refresh_after` takes when the queue changed meanwhile (a new item
//! may sort first).

use std::collections::VecDeque;

use super::order::{due_ms, QueueOrder};

/// What a consumer does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// Try to take this item.
    Take(String),
    /// List the queue (and set a children watch).
    List,
    /// Nothing to take: wait for the children watch, or until this time (ms since the epoch)
    /// when a delayed item falls due.
    Wait(Option<u64>),
}

#[derive(Debug)]
pub(crate) struct Batch {
    order: QueueOrder,
    refresh_after: u32,
    names: VecDeque<String>,
    listed: bool,
    changed: bool,
    taken_since_list: u32,
}

impl Batch {
    pub(crate) fn new(order: QueueOrder, refresh_after: u32) -> Self {
        Batch {
            order,
            refresh_after: refresh_after.max(1),
            names: VecDeque::new(),
            listed: false,
            changed: false,
            taken_since_list: 0,
        }
    }

    /// The queue's items as just listed, in order.
    pub(crate) fn listed(&mut self, names: Vec<String>) {
        self.names = names.into();
        self.listed = true;
        self.changed = false;
        self.taken_since_list = 0;
    }

    /// The children watch fired: the queue changed since the listing.
    pub(crate) fn changed(&mut self) {
        self.changed = true;
    }

    /// Forget the listing (after a reconnect, whose missed changes no watch reports).
    pub(crate) fn invalidate(&mut self) {
        self.listed = false;
        self.names.clear();
    }

    /// What to do next at `now_ms`.
    pub(crate) fn next(&mut self, now_ms: u64) -> Next {
        if !self.listed {
            return Next::List;
        }
        let stale = self.changed
            && (self.taken_since_list >= self.refresh_after || self.order == QueueOrder::Delay);
        let Some(front) = self.names.front() else {
            return if self.changed {
                Next::List
            } else {
                Next::Wait(None)
            };
        };
        // FIFO and id queues sort by sequence: new items come after the ones held.
        if stale && !matches!(self.order, QueueOrder::Fifo | QueueOrder::Id) {
            return Next::List;
        }
        if self.order == QueueOrder::Delay {
            let due = due_ms(front);
            if due > now_ms {
                return Next::Wait(Some(due));
            }
        }
        self.taken_since_list += 1;
        Next::Take(self.names.pop_front().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("queue-{i:010}")).collect()
    }

    #[test]
    fn a_fifo_consumer_lists_once_per_batch_however_busy_the_producer() {
        let mut b = Batch::new(QueueOrder::Fifo, 16);
        assert_eq!(b.next(0), Next::List);
        b.listed(names(1000));
        for i in 0..1000 {
            b.changed(); // a producer adds an item before every take
            assert_eq!(
                b.next(0),
                Next::Take(format!("queue-{i:010}")),
                "no listing"
            );
        }
        assert_eq!(
            b.next(0),
            Next::List,
            "the batch is done and the queue changed"
        );
        b.listed(vec![]);
        assert_eq!(b.next(0), Next::Wait(None));
    }

    #[test]
    fn a_priority_consumer_lists_again_after_refresh_after_takes_when_changed() {
        let mut b = Batch::new(QueueOrder::Priority, 4);
        b.listed(names(10));
        for _ in 0..4 {
            assert!(matches!(b.next(0), Next::Take(_)));
        }
        assert!(matches!(b.next(0), Next::Take(_)), "unchanged: no listing");
        b.changed();
        assert_eq!(b.next(0), Next::List);
    }

    #[test]
    fn a_delay_consumer_waits_for_the_first_due_item() {
        let mut b = Batch::new(QueueOrder::Delay, 100);
        b.listed(vec![
            "queue-|00000064|0000000000".into(),
            "queue-|000000C8|0000000001".into(),
        ]);
        assert_eq!(b.next(50), Next::Wait(Some(100)));
        assert_eq!(b.next(100), Next::Take("queue-|00000064|0000000000".into()));
        b.changed();
        assert_eq!(b.next(150), Next::List, "a new item may fall due earlier");
        b.invalidate();
        assert_eq!(b.next(150), Next::List);
    }
}
