//! Listing a znode's children, with or without its stat and a child watch.

use super::*;

impl Client {
    /// The names of the znode's children.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// let mut children = client.get_children("/app/workers").await?;
    /// children.sort(); // the server lists them in no particular order
    /// for name in &children {
    ///     println!("/app/workers/{name}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn get_children(&self, path: &str) -> Result<Vec<String>, Error> {
        self.run(ops::get_children(&self.inner.chroot, path)?).await
    }

    /// The names of the znode's children and its Stat.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// let (children, stat) = client.get_children_with_stat("/app/workers").await?;
    /// assert_eq!(children.len(), stat.num_children as usize);
    /// println!("the children have changed {} times", stat.cversion);
    /// # Ok(()) }
    /// ```
    pub async fn get_children_with_stat(&self, path: &str) -> Result<(Vec<String>, Stat), Error> {
        self.run(ops::get_children_with_stat(&self.inner.chroot, path)?)
            .await
    }

    /// Like [`get_children_with_stat`](Self::get_children_with_stat), and leaves a watch that
    /// fires when a child is added or removed or the znode is deleted.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// // Follow the members of a group: list, wait for a change, list again.
    /// loop {
    ///     let (members, _stat, watch) = client.get_children_watch("/app/members").await?;
    ///     println!("{} members", members.len());
    ///     let event = watch.await?; // NodeChildrenChanged, or NodeDeleted
    ///     println!("{:?}", event.event_type());
    /// }
    /// # }
    /// ```
    pub async fn get_children_watch(
        &self,
        path: &str,
    ) -> Result<(Vec<String>, Stat, OneshotWatch), Error> {
        let call = ops::get_children_with_stat(&self.inner.chroot, path)?;
        let ((children, stat), watch) = self.run_watched(call).await?;
        Ok((children, stat, watch))
    }
}
