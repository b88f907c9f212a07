//! What concerns the session and the ensemble rather than one znode: credentials, watches
//! on the server, ephemerals and counts, identities, the dynamic configuration and the
//! server list.

use bytes::Bytes;
use zk_proto::{
    AddWatchMode, AddWatchRequest, ClientInfo, ErrorCode, ErrorResponse,
    GetAllChildrenNumberRequest, GetAllChildrenNumberResponse, GetDataRequest,
    GetEphemeralsRequest, GetEphemeralsResponse, PathKind, ReconfigRequest, RemoveWatchesRequest,
    Request, Response, Stat, WatcherType, WhoAmIResponse,
};

use super::{
    client::{data_of, narrow, Client},
    session::Command,
    slot::slot,
    watch::{stream, DropNotice, OneshotWatch, PersistentWatch},
};
use crate::{
    command::{AddAuthCmd, WatchReg},
    connect_string::ConnectString,
    redact::Redacted,
    watch::WatchKind,
    ArgumentError, Error,
};

/// The znode holding the ensemble's dynamic configuration (never under the chroot).
const CONFIG_NODE: &str = "/zookeeper/config";

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
        let path = self.server_path(path, PathKind::Plain)?;
        let kind = match mode {
            AddWatchMode::Persistent => WatchKind::Persistent,
            AddWatchMode::PersistentRecursive => WatchKind::PersistentRecursive,
        };
        let (tx, shared) = stream(self.handle.persistent_watch_buffer);
        let session = &self.handle.session;
        let id = session.watch_id();
        let notice = DropNotice {
            session: Some(std::sync::Arc::downgrade(session)),
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
        // The server answers with an ErrorResponse; an empty body is success too.
        let err = match self.call(req, Some(reg))? {
            Response::Empty => 0,
            other => narrow::<ErrorResponse>(other)?.err,
        };
        match err {
            0 => Ok(PersistentWatch::new(shared, notice)),
            err => Err(Error::Code(ErrorCode::from_code(err))),
        }
    }

    /// Removes this session's watches of `watcher_type` on `path` from the server (and
    /// ends the local ones).
    pub fn remove_watches(&self, path: &str, watcher_type: WatcherType) -> Result<(), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let reg = WatchReg::Remove {
            path: path.clone(),
            watcher_type,
        };
        let req = Request::RemoveWatches(RemoveWatchesRequest { path, watcher_type });
        self.call(req, Some(reg)).map(drop)
    }

    /// Whether the server holds a watch of `watcher_type` on `path` for this session
    /// (`NoWatcher` when not).
    pub fn check_watches(&self, path: &str, watcher_type: WatcherType) -> Result<(), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::CheckWatches(RemoveWatchesRequest { path, watcher_type });
        self.call(req, None).map(drop)
    }

    /// The paths of this session's ephemerals under `prefix`.
    pub fn get_ephemerals(&self, prefix: &str) -> Result<Vec<String>, Error> {
        let prefix_path = self.server_path(prefix, PathKind::Plain)?;
        let req = Request::GetEphemerals(GetEphemeralsRequest { prefix_path });
        let r: GetEphemeralsResponse = narrow(self.call(req, None)?)?;
        Ok(r.ephemerals.iter().map(|p| self.client_path(p)).collect())
    }

    /// How many znodes are under `path`, at any depth.
    pub fn get_all_children_number(&self, path: &str) -> Result<i32, Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::GetAllChildrenNumber(GetAllChildrenNumberRequest { path });
        let r: GetAllChildrenNumberResponse = narrow(self.call(req, None)?)?;
        Ok(r.total_number)
    }

    /// Who the server takes this session for: its authenticated identities.
    pub fn who_am_i(&self) -> Result<Vec<ClientInfo>, Error> {
        let r: WhoAmIResponse = narrow(self.call(Request::WhoAmI, None)?)?;
        Ok(r.client_info)
    }

    /// The ensemble's dynamic configuration (`/zookeeper/config`) and its Stat.
    pub fn get_config(&self) -> Result<(Bytes, Stat), Error> {
        data_of(self.call(config_request(false), None)?)
    }

    /// Like [`get_config`](Self::get_config), with a watch on the configuration.
    pub fn get_config_watch(&self) -> Result<(Bytes, Stat, OneshotWatch), Error> {
        let (reg, watch) = self.oneshot_watch(CONFIG_NODE, WatchKind::Data);
        let (data, stat) = data_of(self.call(config_request(true), Some(reg))?)?;
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
        let req = Request::Reconfig(ReconfigRequest {
            joining_servers: joining.map(str::to_owned),
            leaving_servers: leaving.map(str::to_owned),
            new_members: new_members.map(str::to_owned),
            cur_config_id: from_config.unwrap_or(-1),
        });
        data_of(self.call(req, None)?)
    }

    /// Replaces the server list (`host:port,…`, with the client's chroot or none); the
    /// connection moves when the current server is not in it, or to rebalance, as
    /// [`crate::Client::update_server_list`] does.
    pub fn update_server_list(&self, servers: &str) -> Result<(), Error> {
        let cs = ConnectString::parse(servers)?;
        if !cs.chroot.is_root() && cs.chroot != self.handle.chroot {
            let servers = servers.to_owned();
            return Err(ArgumentError::OtherChroot { servers }.into());
        }
        self.set_server_list(cs.hosts)
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

fn config_request(watch: bool) -> Request {
    Request::GetData(GetDataRequest {
        path: CONFIG_NODE.to_owned(),
        watch,
    })
}
