//! Changing the server list at run time: by hand, or by following the ensemble's own
//! configuration.

use std::{sync::Weak, time::Duration};

use super::*;
use crate::ensemble_config;

impl Client {
    /// Replaces the servers this client connects to, e.g. after the ensemble was
    /// reconfigured, without a restart. `servers` is a connect string
    /// (`host:port,host:port`); a chroot in it must be the client's own.
    ///
    /// The connection moves only when needed: when its server is no longer listed, or, for
    /// a share of the clients chosen at random, when servers were added, so that clients
    /// spread over the new list as evenly as they did over the old one (the Java client's
    /// `updateServerList` does the same). Moving is a reconnect: the session and its watches
    /// are kept, requests in flight fail with `ConnectionLoss` as on any reconnect. A client
    /// that is not connected uses the new list for its next attempt.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// // zk4 and zk5 joined; zk1 left.
    /// client.update_server_list("zk2:2181,zk3:2181,zk4:2181,zk5:2181").await?;
    /// # Ok(()) }
    /// ```
    pub async fn update_server_list(&self, servers: &str) -> Result<(), Error> {
        self.set_server_list(ops::server_list(&self.inner.chroot, servers)?)
            .await
    }

    async fn set_server_list(&self, hosts: Vec<(String, u16)>) -> Result<(), Error> {
        let (reply, rx) = oneshot::channel();
        self.inner
            .tx
            .send(Command::ServerList {
                hosts: hosts.into_boxed_slice(),
                reply,
            })
            .map_err(|_| Error::Closed)?;
        rx.await.map_err(|_| Error::Closed)
    }

    /// Like [`get_config`](Self::get_config), and leaves a watch that fires when the
    /// configuration changes. The config znode is outside any chroot.
    pub async fn get_config_watch(&self) -> Result<(Bytes, Stat, OneshotWatch), Error> {
        let ((data, stat), watch) = self.run_watched(ops::get_config()).await?;
        Ok((data, stat, watch))
    }

    /// Starts the task behind [`ServerList::FollowEnsemble`](crate::ServerList): it holds
    /// the client weakly, so it ends with the last handle.
    pub(crate) fn follow_ensemble_config(&self) {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(follow(weak));
    }
}

/// Reads the config with a watch, applies its server list, waits for the watch; again.
async fn follow(weak: Weak<Inner>) {
    let mut pause = Duration::from_millis(100);
    loop {
        let Some(inner) = weak.upgrade() else { return };
        let client = Client { inner };
        let watch = match client.get_config_watch().await {
            Ok((config, _stat, watch)) => {
                if let Some(hosts) =
                    ensemble_config::client_addresses(&String::from_utf8_lossy(&config))
                {
                    if client.set_server_list(hosts).await.is_err() {
                        return;
                    }
                }
                pause = Duration::from_millis(100);
                Some(watch)
            }
            Err(Error::Closed) => return,
            Err(_) if client.inner.shared.ended.load(Ordering::Acquire) => return,
            Err(_) => None,
        };
        drop(client);
        match watch {
            // Fired, or ended with the connection or the session: read it again.
            Some(w) => {
                let _ = w.await;
            }
            None => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(5));
            }
        }
    }
}
