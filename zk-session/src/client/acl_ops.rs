//! Reading and setting a znode's ACL.

use super::*;

impl Client {
    /// The znode's ACL and Stat.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::Perms;
    ///
    /// let (acl, stat) = client.get_acl("/app").await?;
    /// for entry in &acl {
    ///     let read = entry.perms.contains(Perms::READ);
    ///     println!("{}:{} may read: {read}", entry.id.scheme, entry.id.id);
    /// }
    /// println!("the ACL has changed {} times", stat.aversion);
    /// # Ok(()) }
    /// ```
    pub async fn get_acl(&self, path: &str) -> Result<(Vec<Acl>, Stat), Error> {
        self.run(ops::get_acl(&self.inner.chroot, path)?).await
    }

    /// Replaces the znode's ACL if its ACL version matches; returns the new Stat.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{Acl, Version};
    ///
    /// // Make the znode readable by everyone and writable by no one, unless its ACL has changed
    /// // since we read it (the ACL version is `aversion`, not `version`).
    /// let (_acl, stat) = client.get_acl("/app/public").await?;
    /// client.set_acl("/app/public", &Acl::read_unsafe(), Version::Exact(stat.aversion)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn set_acl(&self, path: &str, acl: &[Acl], version: Version) -> Result<Stat, Error> {
        self.run(ops::set_acl(&self.inner.chroot, path, acl, version)?)
            .await
    }
}
