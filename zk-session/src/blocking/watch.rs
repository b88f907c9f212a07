//! The caller's side of watches in the blocking client: a one-shot watch to wait on, and a
//! persistent watch to receive from (or iterate), each delivered through memory the I/O
//! thread fills.

use std::{
    collections::VecDeque,
    sync::{Arc, Condvar, Mutex, MutexGuard, Weak},
    time::{Duration, Instant},
};

use super::{
    session::Session,
    slot::{SlotRx, SlotTx},
};
use crate::{command::Command, session::WatchId, watch::WatchKind, Error, WatchedEvent};

/// Tells the session that a watch was dropped, so that the server-side watch is removed
/// once nobody listens any more.
#[derive(Debug)]
pub(crate) struct DropNotice {
    /// `None` once the watch fired: then there is nothing left to remove.
    pub session: Option<Weak<Session>>,
    pub path: String,
    pub kind: WatchKind,
    pub id: WatchId,
}

impl Drop for DropNotice {
    fn drop(&mut self) {
        if let Some(s) = self.session.take().and_then(|w| w.upgrade()) {
            s.submit(Command::WatchDropped {
                path: std::mem::take(&mut self.path),
                kind: self.kind,
                id: self.id,
            });
        }
    }
}

/// A one-shot watch of the blocking client: its first change to the znode, or an error
/// when the session ends (expired, closed, authentication failed) before that.
///
/// It survives reconnects (the client re-registers it). Dropping it before it fires removes
/// the server-side watch once no other watch of the same kind is left on the path.
///
/// ```no_run
/// # fn f(client: zk_session::blocking::Client) -> zk_session::Result<()> {
/// let (_data, _stat, watch) = client.get_data_watch("/config")?;
/// let event = watch.wait()?;
/// println!("{} changed: {:?}", event.path(), event.event_type());
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "a watch does nothing unless waited on"]
pub struct OneshotWatch {
    rx: SlotRx<Result<WatchedEvent, Error>>,
    notice: DropNotice,
}

impl OneshotWatch {
    pub(crate) fn new(rx: SlotRx<Result<WatchedEvent, Error>>, notice: DropNotice) -> Self {
        OneshotWatch { rx, notice }
    }

    /// Blocks until the watch fires (or the session ends).
    ///
    /// See the example on [`OneshotWatch`].
    pub fn wait(mut self) -> Result<WatchedEvent, Error> {
        let r = self.rx.wait();
        self.fired();
        r.unwrap_or(Err(Error::Closed))
    }

    /// Blocks up to `timeout`: `None` when the watch has not fired yet (wait again later);
    /// after it has given its event once, [`Error::Closed`].
    ///
    /// ```no_run
    /// # fn f(client: zk_session::blocking::Client) -> zk_session::Result<()> {
    /// use std::time::Duration;
    /// let (_stat, mut watch) = client.exists_watch("/leader")?;
    /// while watch.wait_timeout(Duration::from_secs(1)).is_none() {
    ///     println!("still there");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<Result<WatchedEvent, Error>> {
        let r = self.rx.wait_timeout(timeout).ok()?;
        self.fired();
        Some(r.unwrap_or(Err(Error::Closed)))
    }

    /// Fired or failed: the server-side watch is gone already, nothing to remove.
    fn fired(&mut self) {
        self.notice.session = None;
    }
}

impl Drop for OneshotWatch {
    fn drop(&mut self) {
        // An event that arrived but was never read: the server-side watch is gone already.
        if self.rx.try_take().is_ok() {
            self.fired();
        }
    }
}

/// What a persistent watch holds unread, shared by the I/O thread and the reader.
#[derive(Debug, Default)]
struct Queue {
    items: VecDeque<Item>,
    /// What the unread events cost against the limit.
    queued: usize,
    /// Events dropped since the reader last heard of it.
    missed: u64,
    /// A lag marker is queued and not yet read.
    lag_queued: bool,
    /// The session side is gone: no more events.
    closed: bool,
}

#[derive(Debug)]
enum Item {
    Event(WatchedEvent),
    Lagged,
}

#[derive(Debug, Default)]
pub(crate) struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What an unread event counts for: its path and its own size.
fn cost(ev: &WatchedEvent) -> usize {
    ev.path().len() + std::mem::size_of::<WatchedEvent>()
}

/// The I/O thread's end of a persistent watch.
#[derive(Debug)]
pub(crate) struct StreamTx {
    shared: Arc<Shared>,
    limit: usize,
}

/// A persistent watch's two ends; at most `limit` bytes of events wait unread (always at
/// least one event).
pub(crate) fn stream(limit: usize) -> (StreamTx, Arc<Shared>) {
    let shared = Arc::new(Shared::default());
    (
        StreamTx {
            shared: shared.clone(),
            limit,
        },
        shared,
    )
}

impl StreamTx {
    /// Queues `ev`, or counts it as missed when the reader is that far behind.
    pub fn send(&self, ev: &WatchedEvent) {
        let mut q = self.shared.lock();
        let c = cost(ev);
        if q.queued == 0 || q.queued.saturating_add(c) <= self.limit {
            q.queued += c;
            q.items.push_back(Item::Event(ev.clone()));
        } else {
            q.missed += 1;
            if q.lag_queued {
                return;
            }
            q.lag_queued = true;
            q.items.push_back(Item::Lagged);
        }
        self.shared.ready.notify_one();
    }
}

impl crate::caller_table::EventSink for StreamTx {
    fn event(&self, event: &WatchedEvent) {
        self.send(event)
    }
}

impl Drop for StreamTx {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.ready.notify_all();
    }
}

/// A persistent (or persistent-recursive) watch of the blocking client: every change, and it
/// survives reconnects.
///
/// Unread events are held up to
/// [`ClientBuilder::persistent_watch_buffer`](crate::ClientBuilder::persistent_watch_buffer);
/// past it events are counted, not kept, and [`Error::WatchLagged`] comes once the events
/// before the first dropped one are read. Dropping the watch removes the server-side watch.
///
/// ```no_run
/// # fn f(client: zk_session::blocking::Client) -> zk_session::Result<()> {
/// use zk_session::AddWatchMode;
/// let watch = client.add_watch("/app", AddWatchMode::PersistentRecursive)?;
/// for event in &watch {
///     let event = event?;
///     println!("{:?} {}", event.event_type(), event.path());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct PersistentWatch {
    shared: Arc<Shared>,
    _notice: DropNotice,
}

impl PersistentWatch {
    pub(crate) fn new(shared: Arc<Shared>, notice: DropNotice) -> Self {
        PersistentWatch {
            shared,
            _notice: notice,
        }
    }

    /// Blocks for the next event, or [`Error::WatchLagged`] after events were dropped; `None`
    /// once the session has ended or the watch was removed.
    ///
    /// See the example on [`PersistentWatch`].
    pub fn recv(&self) -> Option<Result<WatchedEvent, Error>> {
        self.next_before(None).ok()?
    }

    /// Like [`recv`](Self::recv), for at most `timeout`: `Err(())` if nothing came.
    ///
    /// ```no_run
    /// # fn f(watch: zk_session::blocking::PersistentWatch) {
    /// use std::time::Duration;
    /// match watch.recv_timeout(Duration::from_secs(1)) {
    ///     Ok(Some(event)) => println!("{event:?}"),
    ///     Ok(None) => println!("the watch is over"),
    ///     Err(()) => println!("nothing changed"),
    /// }
    /// # }
    /// ```
    #[allow(clippy::result_unit_err)]
    pub fn recv_timeout(
        &self,
        timeout: Duration,
    ) -> Result<Option<Result<WatchedEvent, Error>>, ()> {
        self.next_before(Instant::now().checked_add(timeout))
    }

    /// The next event if one is there, without waiting (`Err(())` if none).
    #[allow(clippy::result_unit_err)]
    pub fn try_recv(&self) -> Result<Option<Result<WatchedEvent, Error>>, ()> {
        self.next_before(Some(Instant::now()))
    }

    fn next_before(
        &self,
        until: Option<Instant>,
    ) -> Result<Option<Result<WatchedEvent, Error>>, ()> {
        let mut q = self.shared.lock();
        loop {
            while let Some(item) = q.items.pop_front() {
                match item {
                    Item::Event(ev) => {
                        q.queued -= cost(&ev);
                        return Ok(Some(Ok(ev)));
                    }
                    Item::Lagged => {
                        q.lag_queued = false;
                        let missed = std::mem::take(&mut q.missed);
                        if missed > 0 {
                            return Ok(Some(Err(Error::WatchLagged { missed })));
                        }
                    }
                }
            }
            if q.closed {
                return Ok(None);
            }
            q = match until {
                None => self.shared.ready.wait(q).unwrap_or_else(|e| e.into_inner()),
                Some(u) => {
                    let left = u.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(());
                    }
                    let w = self.shared.ready.wait_timeout(q, left);
                    w.unwrap_or_else(|e| e.into_inner()).0
                }
            };
        }
    }
}

impl<'a> IntoIterator for &'a PersistentWatch {
    type Item = Result<WatchedEvent, Error>;
    type IntoIter = Events<'a>;

    fn into_iter(self) -> Events<'a> {
        Events(self)
    }
}

/// The events of a [`PersistentWatch`], blocking for each; it ends with the watch.
#[derive(Debug)]
pub struct Events<'a>(&'a PersistentWatch);

impl Iterator for Events<'_> {
    type Item = Result<WatchedEvent, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.recv()
    }
}

/// A one-shot watch's sender, kept by the driver.
pub(crate) type OneshotTx = SlotTx<Result<WatchedEvent, Error>>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventType;

    fn event(path: &str) -> WatchedEvent {
        WatchedEvent::new(EventType::NodeDataChanged, path.to_owned())
    }

    fn watch(limit: usize) -> (StreamTx, PersistentWatch) {
        let (tx, shared) = stream(limit);
        let notice = DropNotice {
            session: None,
            path: "/a".into(),
            kind: WatchKind::Persistent,
            id: WatchId(1),
        };
        (tx, PersistentWatch::new(shared, notice))
    }

    #[test]
    fn events_past_the_limit_are_counted_after_the_queued_ones() {
        let (tx, w) = watch(2 * cost(&event("/a")));
        for p in ["/a", "/b", "/c", "/d"] {
            tx.send(&event(p));
        }
        assert_eq!(w.try_recv().unwrap().unwrap().unwrap().path(), "/a");
        assert_eq!(w.try_recv().unwrap().unwrap().unwrap().path(), "/b");
        assert!(matches!(
            w.try_recv(),
            Ok(Some(Err(Error::WatchLagged { missed: 2 })))
        ));
        assert!(w.try_recv().is_err());
        drop(tx);
        assert!(w.recv().is_none(), "the watch ends with its sender");
    }

    #[test]
    fn a_waiting_reader_is_woken_by_an_event_from_another_thread() {
        let (tx, w) = watch(1 << 20);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            tx.send(&event("/x"));
            tx
        });
        let got = w.recv_timeout(Duration::from_secs(30)).unwrap().unwrap();
        assert_eq!(got.unwrap().path(), "/x");
        drop(t.join().unwrap());
        assert!(w.into_iter().next().is_none());
    }
}
