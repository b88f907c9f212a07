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
        let call = ops::add_watch(&self.inner.chroot, path, mode)?;
        let ops::Stream { path, kind } = call.watch;
        let (tx, rx) = stream_channel(self.inner.persistent_watch_buffer);
        let id = self.inner.shared.watch_id();
        let notice = DropNotice {
            tx: Some(self.inner.tx.downgrade()),
            path: path.clone(),
            kind,
            id,
        };
        let reg = WatchReg::Stream { path, kind, id, tx };
        (call.decode)(self.call(call.request, Some(reg)).await)?;
        Ok(PersistentWatch::new(rx, notice))
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
        let call = ops::remove_watches(&self.inner.chroot, path, watcher_type)?;
        let ops::Remove { path, watcher_type } = call.watch;
        let reg = WatchReg::Remove { path, watcher_type };
        (call.decode)(self.call(call.request, Some(reg)).await)
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
        self.run(ops::check_watches(&self.inner.chroot, path, watcher_type)?)
            .await
    }
}
