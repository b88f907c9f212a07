//! Creating, reading, writing, deleting and syncing one znode.

use super::*;

impl Client {
    /// Creates a znode and returns its path (with the sequence suffix for sequential modes).
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{CreateOptions, Error, ErrorCode};
    ///
    /// match client.create("/app/config", b"v1", CreateOptions::persistent()).await {
    ///     Ok(path) => assert_eq!(path, "/app/config"),
    ///     Err(Error::Code(ErrorCode::NodeExists)) => println!("someone else created it first"),
    ///     Err(e) => return Err(e),
    /// }
    /// let sequential = CreateOptions::persistent_sequential();
    /// let job = client.create("/app/jobs/job-", b"", sequential).await?;
    /// println!("{job}"); // e.g. /app/jobs/job-0000000007
    /// # Ok(()) }
    /// ```
    pub async fn create(
        &self,
        path: &str,
        data: &[u8],
        options: CreateOptions,
    ) -> Result<String, Error> {
        self.run(ops::create(&self.inner.chroot, path, data, &options)?)
            .await
    }

    /// Creates a znode and returns its path and Stat.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{CreateOptions, SessionId};
    ///
    /// let options = CreateOptions::ephemeral_sequential();
    /// let (path, stat) = client.create_with_stat("/app/workers/w-", b"host-1", options).await?;
    /// assert_eq!(SessionId::new(stat.ephemeral_owner), client.session_id()); // ephemeral: ours
    /// println!("{path} created by zxid {:#x}", stat.czxid);
    /// # Ok(()) }
    /// ```
    pub async fn create_with_stat(
        &self,
        path: &str,
        data: &[u8],
        options: CreateOptions,
    ) -> Result<(String, Stat), Error> {
        let call = ops::create_with_stat(&self.inner.chroot, path, data, &options)?;
        self.run(call).await
    }

    /// Deletes a znode if its version matches.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{Error, ErrorCode, Version};
    ///
    /// let (_data, stat) = client.get_data("/app/lease").await?;
    /// match client.delete("/app/lease", Version::Exact(stat.version)).await {
    ///     Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => println!("gone"),
    ///     Err(Error::Code(ErrorCode::BadVersion)) => println!("changed since we read it: kept"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn delete(&self, path: &str, version: Version) -> Result<(), Error> {
        self.run(ops::delete(&self.inner.chroot, path, version)?)
            .await
    }

    /// The znode's Stat, or `None` if it does not exist.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// match client.exists("/app/ready").await? {
    ///     Some(stat) => println!("ready since zxid {:#x}", stat.czxid),
    ///     None => println!("not ready yet"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn exists(&self, path: &str) -> Result<Option<Stat>, Error> {
        self.run(ops::exists(&self.inner.chroot, path)?).await
    }

    /// Like [`exists`](Self::exists), and leaves a watch that fires when the znode is created,
    /// changed or deleted.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// let (stat, watch) = client.exists_watch("/app/ready").await?;
    /// if stat.is_none() {
    ///     // The watch fires when the znode is created.
    ///     let event = watch.await?;
    ///     println!("{:?} {}", event.event_type(), event.path());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn exists_watch(&self, path: &str) -> Result<(Option<Stat>, OneshotWatch), Error> {
        self.run_watched(ops::exists(&self.inner.chroot, path)?)
            .await
    }

    /// The znode's data (a slice of the reply frame, not a copy; empty for null data) and Stat.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{Error, ErrorCode};
    ///
    /// match client.get_data("/app/config").await {
    ///     Ok((data, stat)) => println!("{} bytes at version {}", data.len(), stat.version),
    ///     Err(Error::Code(ErrorCode::NoNode)) => println!("no config yet"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn get_data(&self, path: &str) -> Result<(Bytes, Stat), Error> {
        self.run(ops::get_data(&self.inner.chroot, path)?).await
    }

    /// Like [`get_data`](Self::get_data), and leaves a watch that fires when the data changes
    /// or the znode is deleted.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::EventType;
    ///
    /// // Reload the configuration whenever it changes, until its znode is deleted.
    /// loop {
    ///     let (data, _stat, watch) = client.get_data_watch("/app/config").await?;
    ///     println!("config: {}", String::from_utf8_lossy(&data));
    ///     if watch.await?.event_type() == EventType::NodeDeleted {
    ///         break;
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn get_data_watch(&self, path: &str) -> Result<(Bytes, Stat, OneshotWatch), Error> {
        let ((data, stat), watch) = self
            .run_watched(ops::get_data(&self.inner.chroot, path)?)
            .await?;
        Ok((data, stat, watch))
    }

    /// Replaces the znode's data if its version matches; returns the new Stat.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{Error, ErrorCode, Version};
    ///
    /// // Compare-and-set: only if nobody has written since our read.
    /// let (_data, stat) = client.get_data("/app/config").await?;
    /// match client.set_data("/app/config", b"v2", Version::Exact(stat.version)).await {
    ///     Ok(new_stat) => assert_eq!(new_stat.version, stat.version + 1),
    ///     Err(Error::Code(ErrorCode::BadVersion)) => println!("lost the race: read again"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn set_data(&self, path: &str, data: &[u8], version: Version) -> Result<Stat, Error> {
        self.run(ops::set_data(&self.inner.chroot, path, data, version)?)
            .await
    }

    /// Waits until the server this session is connected to has caught up with the leader.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// // Another process has just written /app/config through another server. Reads are served
    /// // by the server we are connected to, which may lag behind: catch up first.
    /// client.sync("/app/config").await?;
    /// let (data, _stat) = client.get_data("/app/config").await?;
    /// # Ok(()) }
    /// ```
    pub async fn sync(&self, path: &str) -> Result<(), Error> {
        self.run(ops::sync(&self.inner.chroot, path)?).await
    }
}
