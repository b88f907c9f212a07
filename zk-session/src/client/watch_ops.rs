//! Persistent watches and the removal and checking of watches on the server.

use super::*;

impl Client {
    /// Adds a persistent watch (every change at `path`) or a persistent-recursive watch (every
    /// change at or below `path`, children-changed excepted), as a stream of events.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{AddWatchMode, Error, EventType};
    ///
    /// // Unlike a one-shot watch, it stays after it fires: every change arrives.
    /// let mut watch = client.add_watch("/app/config", AddWatchMode::Persistent).await?;
    /// while let Some(event) = watch.next().await {
    ///     match event {
    ///         Ok(e) if e.event_type() == EventType::NodeDataChanged => println!("config changed"),
    ///         Ok(_) => {}
    ///         // The reader fell behind by more than the buffer holds.
    ///         Err(Error::WatchLagged { .. }) => println!("config may have changed"),
    ///         Err(e) => return Err(e),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn add_watch(
        &self,
        path: &str,
        mode: AddWatchMode,
    ) -> Result<PersistentWatch, Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let kind = match mode {
            AddWatchMode::Persistent => WatchKind::Persistent,
            AddWatchMode::PersistentRecursive => WatchKind::PersistentRecursive,
        };
        let (tx, rx) = stream_channel(self.inner.persistent_watch_buffer);
        let id = self.inner.shared.watch_id();
        let notice = DropNotice {
            tx: Some(self.inner.tx.downgrade()),
            path: path.clone(),
            kind,
            id,
        };
        let reg = WatchReg::Stream {
            path: path.clone(),
            kind,
            id,
            tx,
        };
        let req = Request::AddWatch(AddWatchRequest { path, mode });
        // The server answers with an ErrorResponse; an empty body is taken as success too.
        match self.call(req, Some(reg)).await? {
            Response::Empty => Ok(PersistentWatch::new(rx, notice)),
            other => match narrow::<ErrorResponse>(other)?.err {
                0 => Ok(PersistentWatch::new(rx, notice)),
                err => Err(Error::Code(ErrorCode::from_code(err))),
            },
        }
    }

    /// Removes this session's watches of `watcher_type` on `path`, on the server and here:
    /// the local watches end with [`Error::WatchRemoved`]. Fails with `NoWatcher` if none.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{Error, ErrorCode, WatcherType};
    ///
    /// let (_data, _stat, watch) = client.get_data_watch("/app/config").await?;
    /// client.remove_watches("/app/config", WatcherType::Data).await?;
    /// assert!(matches!(watch.await, Err(Error::WatchRemoved)));
    /// let again = client.remove_watches("/app/config", WatcherType::Data).await;
    /// assert!(matches!(again, Err(Error::Code(ErrorCode::NoWatcher))));
    /// # Ok(()) }
    /// ```
    pub async fn remove_watches(&self, path: &str, watcher_type: WatcherType) -> Result<(), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let reg = WatchReg::Remove {
            path: path.clone(),
            watcher_type,
        };
        let req = Request::RemoveWatches(RemoveWatchesRequest { path, watcher_type });
        self.call(req, Some(reg)).await.map(drop)
    }

    /// Succeeds if this session has a watch of `watcher_type` on `path`; `NoWatcher` if not.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{Error, ErrorCode, WatcherType};
    ///
    /// let (_children, _stat, _watch) = client.get_children_watch("/app/workers").await?;
    /// client.check_watches("/app/workers", WatcherType::Children).await?; // it is there
    /// let elsewhere = client.check_watches("/app/other", WatcherType::Any).await;
    /// assert!(matches!(elsewhere, Err(Error::Code(ErrorCode::NoWatcher))));
    /// # Ok(()) }
    /// ```
    pub async fn check_watches(&self, path: &str, watcher_type: WatcherType) -> Result<(), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::CheckWatches(RemoveWatchesRequest { path, watcher_type });
        self.call(req, None).await.map(drop)
    }
}
