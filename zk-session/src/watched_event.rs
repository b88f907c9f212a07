//! What a watch delivers, and which server-side watch a caller's watch stands for: the same
//! for every driver.

use zk_proto::EventType;

/// A change to a znode, as delivered to a watch. The path is relative to the chroot.
///
/// ```no_run
/// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
/// use zk_session::EventType;
///
/// let (_stat, watch) = client.exists_watch("/app/leader").await?;
/// let event = watch.await?;
/// match event.event_type() {
///     EventType::NodeCreated => println!("{} appeared", event.path()),
///     EventType::NodeDeleted => println!("{} is gone: run for leader", event.path()),
///     _ => println!("{} changed", event.path()),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WatchedEvent {
    event_type: EventType,
    path: String,
}

impl WatchedEvent {
    pub(crate) fn new(event_type: EventType, path: String) -> Self {
        WatchedEvent { event_type, path }
    }

    /// What happened.
    ///
    /// See the example on [`WatchedEvent`].
    pub fn event_type(&self) -> EventType {
        self.event_type
    }

    /// The znode it happened to, relative to the chroot.
    ///
    /// See the example on [`WatchedEvent`].
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The path, taken out of the event.
    ///
    /// ```rust
    /// # fn f(event: zk_session::WatchedEvent) {
    /// let path: String = event.into_path();
    /// # }
    /// ```
    pub fn into_path(self) -> String {
        self.path
    }
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

/// What a persistent watch may hold unread, by default: 4 MiB of events.
pub(crate) const DEFAULT_PERSISTENT_WATCH_BUFFER: usize = 4 << 20;
