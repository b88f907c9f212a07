//! What the ensemble knows of the session and of itself: ephemerals, counts, identities,
//! credentials and the dynamic configuration.

use super::*;
use crate::command::AddAuthCmd;

impl Client {
    /// The paths of this session's ephemeral znodes under `prefix` ("/" for all).
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::CreateOptions;
    ///
    /// let options = CreateOptions::ephemeral_sequential();
    /// let path = client.create("/app/workers/w-", b"", options).await?;
    /// let ours = client.get_ephemerals("/app/workers").await?;
    /// assert!(ours.contains(&path));
    /// # Ok(()) }
    /// ```
    pub async fn get_ephemerals(&self, prefix: &str) -> Result<Vec<String>, Error> {
        self.run(ops::get_ephemerals(&self.inner.chroot, prefix)?)
            .await
    }

    /// The number of descendants of `path`.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// // Children, grandchildren and so on; the znode itself does not count.
    /// let total = client.get_all_children_number("/app").await?;
    /// println!("{total} znodes below /app");
    /// # Ok(()) }
    /// ```
    pub async fn get_all_children_number(&self, path: &str) -> Result<i32, Error> {
        self.run(ops::get_all_children_number(&self.inner.chroot, path)?)
            .await
    }

    /// The identities this session is authenticated as.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// client.add_auth("digest", b"alice:secret").await?;
    /// for info in client.who_am_i().await? {
    ///     println!("{}: {}", info.auth_scheme, info.user); // e.g. "ip: 10.0.0.7", "digest: alice"
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn who_am_i(&self) -> Result<Vec<ClientInfo>, Error> {
        self.run(ops::who_am_i()).await
    }

    /// Authenticates the session (and every later connection of it) with `scheme`/`auth`.
    /// An `AuthFailed` answer ends the session, as the server closes it.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{Acl, CreateOptions};
    ///
    /// client.add_auth("digest", b"alice:secret").await?;
    /// // Only sessions authenticated as alice may read or change this znode.
    /// let options = CreateOptions::persistent().with_acl(Acl::creator_all());
    /// client.create("/app/private", b"", options).await?;
    /// # Ok(()) }
    /// ```
    pub async fn add_auth(&self, scheme: &str, auth: &[u8]) -> Result<(), Error> {
        let (tx, rx) = oneshot::channel();
        self.inner
            .tx
            .send(Command::AddAuth(Box::new(AddAuthCmd {
                scheme: scheme.to_owned(),
                auth: Redacted(Bytes::copy_from_slice(auth)),
                reply: tx,
            })))
            .map_err(|_| Error::Closed)?;
        // On a timeout the credentials stay with the session, sent on the next connection.
        self.reply(rx).await
    }

    /// The ensemble's dynamic configuration (`/zookeeper/config`) and its Stat.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// let (config, stat) = client.get_config().await?;
    /// // Lines like "server.1=zk1:2888:3888:participant;0.0.0.0:2181", then "version=…".
    /// for line in String::from_utf8_lossy(&config).lines() {
    ///     println!("{line}");
    /// }
    /// println!("config written by zxid {:#x}", stat.mzxid);
    /// # Ok(()) }
    /// ```
    pub async fn get_config(&self) -> Result<(Bytes, Stat), Error> {
        self.run(ops::get_config()).await
    }

    /// Changes the ensemble's membership: incrementally (`joining`/`leaving`, comma-separated
    /// server specs and ids) or wholesale (`new_members`). `from_config` makes it conditional
    /// on the current config version. Returns the new config and its Stat.
    ///
    /// The server must have `reconfigEnabled=true`, and the session needs the right to
    /// change `/zookeeper/config` (superuser, unless ACLs are skipped).
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// let (_config, stat) = client.get_config().await?;
    /// // Add server 4, only if the membership has not changed since that read.
    /// let joining = "server.4=zk4:2888:3888:participant;2181";
    /// let (config, _stat) = client.reconfig(Some(joining), None, None, Some(stat.mzxid)).await?;
    /// // Then remove server 1, whatever the config is by then.
    /// client.reconfig(None, Some("1"), None, None).await?;
    /// # Ok(()) }
    /// ```
    pub async fn reconfig(
        &self,
        joining: Option<&str>,
        leaving: Option<&str>,
        new_members: Option<&str>,
        from_config: Option<i64>,
    ) -> Result<(Bytes, Stat), Error> {
        let call = ops::reconfig(joining, leaving, new_members, from_config);
        self.run(call).await
    }
}
