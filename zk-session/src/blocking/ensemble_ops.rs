//! What concerns the session and the ensemble rather than one znode: credentials, watches
//! on the server, ephemerals and counts, identities, the dynamic configuration and the
//! server list.

use bytes::Bytes;
use zk_proto::{AddWatchMode, ClientInfo, Stat, WatcherType};

use super::{
    client::Client,
    session::Command,
    slot::slot,
    watch::{stream, DropNotice, OneshotWatch, PersistentWatch},
};
use crate::{command::AddAuthCmd, command::WatchReg, ops, redact::Redacted, Error};

impl Client {
    /// Adds a credential to the session (`digest` with `user:password`, …); the client
    /// sends it again on every reconnect.
    pub fn add_auth(&self, scheme: &str, auth: &[u8]) -> Result<(), Error> {
        let (reply, rx) = slot();
        let cmd = AddAuthCmd {
            scheme: scheme.to_owned(),
            auth: Redacted(Bytes::copy_from_slice(auth)),
            reply,
        };
        self.handle.session.submit(Command::AddAuth(Box::new(cmd)));
        self.wait(rx)
    }

    /// A persistent (or persistent-recursive) watch on `path`: every change, until dropped.
    pub fn add_watch(&self, path: &str, mode: AddWatchMode) -> Result<PersistentWatch, Error> {
        let call = ops::add_watch(&self.handle.chroot, path, mode)?;
        let ops::Stream { path, kind } = call.watch;
        let (tx, shared) = stream(self.handle.persistent_watch_buffer);
        let session = &self.handle.session;
        let id = session.watch_id();
        let notice = DropNotice {
            session: Some(std::sync::Arc::downgrade(session)),
            path: path.clone(),
            kind,
            id,
        };
        let reg = WatchReg::Stream { path, kind, id, tx };
        (call.decode)(self.call(call.request, Some(reg)))?;
        Ok(PersistentWatch::new(shared, notice))
    }

    /// Removes this session's watches of `watcher_type` on `path` from the server (and
    /// ends the local ones).
    pub fn remove_watches(&self, path: &str, watcher_type: WatcherType) -> Result<(), Error> {
        let call = ops::remove_watches(&self.handle.chroot, path, watcher_type)?;
        let ops::Remove { path, watcher_type } = call.watch;
        let reg = WatchReg::Remove { path, watcher_type };
        (call.decode)(self.call(call.request, Some(reg)))
    }

    /// Whether the server holds a watch of `watcher_type` on `path` for this session
    /// (`NoWatcher` when not).
    pub fn check_watches(&self, path: &str, watcher_type: WatcherType) -> Result<(), Error> {
        self.run(ops::check_watches(&self.handle.chroot, path, watcher_type)?)
    }

    /// The paths of this session's ephemerals under `prefix`.
    pub fn get_ephemerals(&self, prefix: &str) -> Result<Vec<String>, Error> {
        self.run(ops::get_ephemerals(&self.handle.chroot, prefix)?)
    }

    /// How many znodes are under `path`, at any depth.
    pub fn get_all_children_number(&self, path: &str) -> Result<i32, Error> {
        self.run(ops::get_all_children_number(&self.handle.chroot, path)?)
    }

    /// Who the server takes this session for: its authenticated identities.
    pub fn who_am_i(&self) -> Result<Vec<ClientInfo>, Error> {
        self.run(ops::who_am_i())
    }

    /// The ensemble's dynamic configuration (`/zookeeper/config`) and its Stat.
    pub fn get_config(&self) -> Result<(Bytes, Stat), Error> {
        self.run(ops::get_config())
    }

    /// Like [`get_config`](Self::get_config), with a watch on the configuration.
    pub fn get_config_watch(&self) -> Result<(Bytes, Stat, OneshotWatch), Error> {
        let ((data, stat), watch) = self.run_watched(ops::get_config())?;
        Ok((data, stat, watch))
    }

    /// Changes the ensemble's membership (dynamic reconfiguration): incrementally with
    /// `joining`/`leaving`, or wholesale with `new_members`; `from_config` makes it
    /// conditional on the current configuration's version. Returns the new configuration.
    pub fn reconfig(
        &self,
        joining: Option<&str>,
        leaving: Option<&str>,
        new_members: Option<&str>,
        from_config: Option<i64>,
    ) -> Result<(Bytes, Stat), Error> {
        self.run(ops::reconfig(joining, leaving, new_members, from_config))
    }

    /// Replaces the server list (`host:port,…`, with the client's chroot or none); the
    /// connection moves when the current server is not in it, or to rebalance, as
    /// [`crate::Client::update_server_list`] does.
    pub fn update_server_list(&self, servers: &str) -> Result<(), Error> {
        self.set_server_list(ops::server_list(&self.handle.chroot, servers)?)
    }

    /// Replaces the server list with `hosts` (not empty).
    pub(super) fn set_server_list(&self, hosts: Vec<(String, u16)>) -> Result<(), Error> {
        let (reply, rx) = slot();
        let hosts = hosts.into_boxed_slice();
        self.handle
            .session
            .submit(Command::ServerList { hosts, reply });
        rx.wait().ok_or(Error::Closed)
    }
}
