//! The caller's side of watches: one-shot watch futures and persistent watch streams.

use std::{
    future::Future,
    pin::Pin,
    sync::{
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst},
        Arc,
    },
    task::{Context, Poll},
};

use crate::{senders::Command, watched_event::WatchKind, Error, WatchedEvent};
use tokio::sync::{mpsc, oneshot};

/// Tells the session task that a watch was dropped, so it can remove the server-side watch
/// once nobody listens any more.
#[derive(Debug)]
pub(crate) struct DropNotice {
    /// `None` once the watch fired: then there is nothing left to remove.
    pub tx: Option<mpsc::WeakUnboundedSender<Command>>,
    pub path: String,
    pub kind: WatchKind,
    /// The watch's id, as its registration names it.
    pub id: crate::session::WatchId,
}

impl Drop for DropNotice {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take().and_then(|t| t.upgrade()) {
            let _ = tx.send(Command::WatchDropped {
                path: std::mem::take(&mut self.path),
                kind: self.kind,
                id: self.id,
            });
        }
    }
}

/// A one-shot watch: resolves once, with the first change to the znode, or with an error
/// when the session ends (expired, closed, authentication failed) before that.
///
/// The watch survives reconnects: the client re-registers it, and a change made while it was
/// disconnected fires it on reconnect. Dropping the watch before it fires removes the
/// server-side watch once no other watch of the same kind is left on the path.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_session::Result<()> {
/// let (data, _stat, watch) = client.get_data_watch("/config").await?;
/// let event = watch.await?;
/// println!("{} changed: {:?}", event.path(), event.event_type());
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "a watch does nothing unless awaited"]
pub struct OneshotWatch {
    rx: oneshot::Receiver<Result<WatchedEvent, Error>>,
    notice: Option<DropNotice>,
}

impl OneshotWatch {
    pub(crate) fn new(
        rx: oneshot::Receiver<Result<WatchedEvent, Error>>,
        notice: DropNotice,
    ) -> Self {
        OneshotWatch {
            rx,
            notice: Some(notice),
        }
    }
}

impl Drop for OneshotWatch {
    fn drop(&mut self) {
        // An event (or an error) that arrived but was never read means the server-side watch
        // is gone already: removing it would cost a removeWatches answered with NoWatcher.
        if !matches!(self.rx.try_recv(), Err(oneshot::error::TryRecvError::Empty)) {
            if let Some(n) = self.notice.as_mut() {
                n.tx = None;
            }
        }
    }
}

impl Future for OneshotWatch {
    type Output = Result<WatchedEvent, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        match Pin::new(&mut this.rx).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(r) => {
                // Fired or failed: the server-side watch is gone already, nothing to remove.
                if let Some(n) = this.notice.as_mut() {
                    n.tx = None;
                }
                Poll::Ready(r.unwrap_or(Err(Error::Closed)))
            }
        }
    }
}

/// What an unread event counts for against its watch's buffer: its path and its own size.
fn event_cost(ev: &WatchedEvent) -> usize {
    ev.path().len() + std::mem::size_of::<WatchedEvent>()
}

#[derive(Debug)]
enum StreamItem {
    Event(WatchedEvent),
    /// Events were dropped after the ones before this; the count is in [`StreamBuffer`].
    Lagged,
}

/// The accounting both ends of a persistent watch share.
#[derive(Debug, Default)]
struct StreamBuffer {
    /// Cost of the events queued and not yet read.
    queued: AtomicUsize,
    /// Events dropped since the reader last heard of it.
    missed: AtomicU64,
    /// A `Lagged` marker is queued and not yet read.
    lag_queued: AtomicBool,
}

/// The session task's end of a persistent watch: queues events up to the buffer limit, and
/// counts the ones over it, so that a reader that does not keep up (or a server that floods)
/// costs bounded memory instead of an ever-growing queue.
#[derive(Debug)]
pub(crate) struct StreamTx {
    tx: mpsc::UnboundedSender<StreamItem>,
    buffer: Arc<StreamBuffer>,
    limit: usize,
}

impl StreamTx {
    /// Queues `ev`, or counts it as missed when the buffer is full. False once the reader is
    /// gone.
    pub fn send(&self, ev: &WatchedEvent) -> bool {
        if self.tx.is_closed() {
            return false;
        }
        let cost = event_cost(ev);
        let queued = self.buffer.queued.load(SeqCst);
        // An empty buffer takes any event, so that one long path is not dropped every time.
        if queued == 0 || queued.saturating_add(cost) <= self.limit {
            self.buffer.queued.fetch_add(cost, SeqCst);
            return self.tx.send(StreamItem::Event(ev.clone())).is_ok();
        }
        self.buffer.missed.fetch_add(1, SeqCst);
        // One marker at a time: it wakes the reader once the events before it are read.
        if !self.buffer.lag_queued.swap(true, SeqCst) {
            return self.tx.send(StreamItem::Lagged).is_ok();
        }
        true
    }

    /// The reader is gone.
    #[cfg(test)]
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// The reader's end of a persistent watch.
#[derive(Debug)]
pub(crate) struct StreamRx {
    rx: mpsc::UnboundedReceiver<StreamItem>,
    buffer: Arc<StreamBuffer>,
}

/// A persistent watch's channel, holding at most `limit` bytes of unread events (and always
/// at least one event).
pub(crate) fn stream_channel(limit: usize) -> (StreamTx, StreamRx) {
    let (tx, rx) = mpsc::unbounded_channel();
    let buffer = Arc::new(StreamBuffer::default());
    (
        StreamTx {
            tx,
            buffer: buffer.clone(),
            limit,
        },
        StreamRx { rx, buffer },
    )
}

impl StreamRx {
    async fn next(&mut self) -> Option<Result<WatchedEvent, Error>> {
        loop {
            let item = self.rx.recv().await?;
            if let Some(r) = self.take(item) {
                return Some(r);
            }
        }
    }

    /// What the reader makes of `item`: `None` for a marker whose misses were reported already.
    fn take(&self, item: StreamItem) -> Option<Result<WatchedEvent, Error>> {
        match item {
            StreamItem::Event(ev) => {
                self.buffer.queued.fetch_sub(event_cost(&ev), SeqCst);
                Some(Ok(ev))
            }
            StreamItem::Lagged => {
                // Cleared before the count is taken: a miss in between queues a new marker,
                // so no miss is left without one.
                self.buffer.lag_queued.store(false, SeqCst);
                let missed = self.buffer.missed.swap(0, SeqCst);
                (missed > 0).then_some(Err(Error::WatchLagged { missed }))
            }
        }
    }

    /// The next item without waiting, for tests.
    #[cfg(test)]
    pub(crate) fn try_recv(
        &mut self,
    ) -> Result<Result<WatchedEvent, Error>, mpsc::error::TryRecvError> {
        loop {
            let item = self.rx.try_recv()?;
            if let Some(r) = self.take(item) {
                return Ok(r);
            }
        }
    }
}

/// A persistent (or persistent-recursive) watch from [`Client::add_watch`](crate::Client::add_watch):
/// a stream of every change, which survives reconnects.
///
/// Unread events are held up to a limit
/// ([`ClientBuilder::persistent_watch_buffer`](crate::ClientBuilder::persistent_watch_buffer),
/// 4 MiB by default). When a reader falls that far behind, further events are dropped and
/// counted, and the stream yields [`Error::WatchLagged`] once the events queued before the
/// first dropped one have been read; then it goes on. Each change behind a dropped event was
/// made before `WatchLagged` is returned, so reading the znodes again then sees it.
///
/// Dropping the watch removes the server-side watch.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_session::Result<()> {
/// use zk_session::{AddWatchMode, Error};
/// let mut watch = client.add_watch("/app", AddWatchMode::PersistentRecursive).await?;
/// while let Some(event) = watch.next().await {
///     match event {
///         Ok(event) => println!("{:?} {}", event.event_type(), event.path()),
///         Err(Error::WatchLagged { missed }) => println!("{missed} events missed: re-read /app"),
///         Err(e) => return Err(e),
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct PersistentWatch {
    rx: StreamRx,
    _notice: DropNotice,
}

impl PersistentWatch {
    pub(crate) fn new(rx: StreamRx, notice: DropNotice) -> Self {
        PersistentWatch {
            rx,
            _notice: notice,
        }
    }

    /// The next event, or [`Error::WatchLagged`] after events were dropped because the
    /// buffer was full (the stream goes on after it); `None` once the session has ended
    /// (expired or closed) or the watch was removed.
    ///
    /// Cancellation-safe: nothing is lost when the future is dropped before it completes.
    ///
    /// See the example on [`PersistentWatch`].
    pub async fn next(&mut self) -> Option<Result<WatchedEvent, Error>> {
        self.rx.next().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zk_proto::EventType;

    use crate::watched_event::DEFAULT_PERSISTENT_WATCH_BUFFER;

    fn event(path: &str) -> WatchedEvent {
        WatchedEvent::new(EventType::NodeDataChanged, path.to_owned())
    }

    fn cost(path: &str) -> usize {
        event_cost(&event(path))
    }

    #[test]
    fn events_over_the_limit_are_counted_and_reported_after_the_queued_ones() {
        let (tx, mut rx) = stream_channel(3 * cost("/a"));
        for i in 0..10 {
            assert!(tx.send(&event(&format!("/{}", (b'a' + i) as char))));
        }
        let got: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        assert_eq!(got.len(), 4, "{got:?}");
        let paths: Vec<_> = got[..3]
            .iter()
            .map(|r| r.as_ref().unwrap().path().to_owned())
            .collect();
        assert_eq!(paths, ["/a", "/b", "/c"]);
        assert!(matches!(got[3], Err(Error::WatchLagged { missed: 7 })));
        assert_eq!(rx.buffer.queued.load(SeqCst), 0);

        // Read: the buffer takes events again, and nothing more is reported missing.
        assert!(tx.send(&event("/k")));
        assert_eq!(rx.try_recv().unwrap().unwrap().path(), "/k");
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_miss_after_the_reader_caught_up_is_reported_at_its_place() {
        let (tx, mut rx) = stream_channel(2 * cost("/a"));
        for p in ["/a", "/b", "/c"] {
            tx.send(&event(p));
        }
        // The reader takes one event; one more fits; the next is missed again.
        assert_eq!(rx.try_recv().unwrap().unwrap().path(), "/a");
        for p in ["/d", "/e"] {
            tx.send(&event(p));
        }
        let got: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        let shown: Vec<String> = got
            .iter()
            .map(|r| match r {
                Ok(e) => e.path().to_owned(),
                Err(Error::WatchLagged { missed }) => format!("lagged {missed}"),
                Err(e) => panic!("{e}"),
            })
            .collect();
        // Both misses are reported by the first marker; the second marker has nothing left.
        assert_eq!(shown, ["/b", "lagged 2", "/d"]);
    }

    #[test]
    fn an_event_larger_than_the_limit_still_gets_through_an_empty_buffer() {
        let long = format!("/{}", "x".repeat(1000));
        let (tx, mut rx) = stream_channel(10);
        tx.send(&event(&long));
        tx.send(&event(&long));
        assert_eq!(rx.try_recv().unwrap().unwrap().path(), long);
        assert!(matches!(
            rx.try_recv(),
            Ok(Err(Error::WatchLagged { missed: 1 }))
        ));
        tx.send(&event(&long));
        assert_eq!(rx.try_recv().unwrap().unwrap().path(), long);
    }

    #[test]
    fn send_fails_once_the_reader_is_gone() {
        let (tx, rx) = stream_channel(DEFAULT_PERSISTENT_WATCH_BUFFER);
        assert!(tx.send(&event("/a")));
        drop(rx);
        assert!(tx.is_closed());
        assert!(!tx.send(&event("/a")));
    }

    /// The marker wakes a reader that waits on an empty stream: a miss is never left unheard
    /// until some later event.
    #[tokio::test]
    async fn a_waiting_reader_hears_of_a_miss_without_a_later_event() {
        let (tx, mut rx) = stream_channel(cost("/a"));
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(r) = rx.next().await {
                got.push(r.map(|e| e.into_path()).map_err(|e| e.to_string()));
                if got.len() == 2 {
                    break;
                }
            }
            got
        });
        tokio::task::yield_now().await;
        tx.send(&event("/a"));
        tx.send(&event("/b"));
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), reader)
            .await
            .expect("the reader is woken")
            .unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], Ok("/a".to_owned()));
        assert!(got[1].as_ref().unwrap_err().contains("1 events"), "{got:?}");
    }
}
