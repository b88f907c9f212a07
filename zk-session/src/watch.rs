//! The caller's side of watches: one-shot watch futures and persistent watch streams.

use std::{
    future::Future,
    pin::Pin,
    task::{Context, Poll},
};

use tokio::sync::{mpsc, oneshot};
use zk_proto::EventType;

use crate::{session::Command, Error};

/// A change to a znode, as delivered to a watch. The path is relative to the chroot.
///
/// ```no_run
/// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
/// use zk_session::EventType;
///
/// let (_stat, watch) = client.exists_watch("/app/leader").await?;
/// let event = watch.await?;
/// match event.event_type {
///     EventType::NodeCreated => println!("{} appeared", event.path),
///     EventType::NodeDeleted => println!("{} is gone: run for leader", event.path),
///     _ => println!("{} changed", event.path),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchedEvent {
    /// What happened.
    pub event_type: EventType,
    /// The znode it happened to.
    pub path: String,
}

/// Which server-side watch a caller-side watch stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum WatchKind {
    /// Set by getData, or by exists on a znode that exists.
    Data,
    /// Set by exists on a znode that does not exist.
    Exist,
    /// Set by getChildren.
    Child,
    /// addWatch in persistent mode.
    Persistent,
    /// addWatch in persistent-recursive mode.
    PersistentRecursive,
}

/// Tells the session task that a watch was dropped, so it can remove the server-side watch
/// once nobody listens any more.
#[derive(Debug)]
pub(crate) struct DropNotice {
    /// `None` once the watch fired: then there is nothing left to remove.
    pub tx: Option<mpsc::WeakUnboundedSender<Command>>,
    pub path: String,
    pub kind: WatchKind,
}

impl Drop for DropNotice {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take().and_then(|t| t.upgrade()) {
            let _ = tx.send(Command::WatchDropped {
                path: std::mem::take(&mut self.path),
                kind: self.kind,
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
/// println!("{} changed: {:?}", event.path, event.event_type);
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

/// A persistent (or persistent-recursive) watch from [`Client::add_watch`](crate::Client::add_watch):
/// a stream of every change, which survives reconnects.
///
/// Dropping it removes the server-side watch.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_session::Result<()> {
/// use zk_session::AddWatchMode;
/// let mut watch = client.add_watch("/app", AddWatchMode::PersistentRecursive).await?;
/// while let Some(event) = watch.next().await {
///     println!("{:?} {}", event.event_type, event.path);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct PersistentWatch {
    rx: mpsc::UnboundedReceiver<WatchedEvent>,
    _notice: DropNotice,
}

impl PersistentWatch {
    pub(crate) fn new(rx: mpsc::UnboundedReceiver<WatchedEvent>, notice: DropNotice) -> Self {
        PersistentWatch {
            rx,
            _notice: notice,
        }
    }

    /// The next event; `None` once the session has ended (expired or closed).
    ///
    /// See the example on [`PersistentWatch`].
    pub async fn next(&mut self) -> Option<WatchedEvent> {
        self.rx.recv().await
    }
}
