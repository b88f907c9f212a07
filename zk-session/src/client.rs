//! The `Client` handle: one `async fn` per ZooKeeper operation.

use std::{
    sync::{atomic::Ordering, Arc},
    time::Duration,
};

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot, watch};
use zk_proto::{
    validate_path, Acl, AddWatchMode, AddWatchRequest, CheckVersionRequest, ClientInfo, CreateMode,
    CreateRequest, CreateTtlRequest, DeleteRequest, ErrorCode, ExistsRequest, GetAclRequest,
    GetAllChildrenNumberRequest, GetChildrenRequest, GetDataRequest, GetEphemeralsRequest, MultiOp,
    MultiRequest, MultiResult, PathKind, ReconfigRequest, RemoveWatchesRequest, Request, Response,
    SetAclRequest, SetDataRequest, Stat, SyncRequest, WatcherType,
};

use crate::{
    builder::ClientBuilder,
    chroot::Chroot,
    command::{Command, RequestCmd, WatchReg},
    session::Shared,
    state::{SessionEvents, SessionState},
    watch::{stream_channel, DropNotice, WatchKind},
    CreateOptions, Error, OneshotWatch, Op, OpResult, PersistentWatch, ReadOp, ReadResult, Version,
};

/// The znode holding the ensemble's dynamic configuration (never under the chroot).
const CONFIG_NODE: &str = "/zookeeper/config";

/// A handle on one ZooKeeper session. Cheap to clone; every clone shares the session.
///
/// The session lives in a background task that owns the connection: it pipelines requests,
/// sends heartbeats, reconnects to other servers with the same session, and re-registers
/// watches. When the last handle is dropped the session is closed.
///
/// ```no_run
/// # async fn f() -> zk_session::Result<()> {
/// use zk_session::{Client, CreateOptions, Version};
///
/// let client = Client::builder("127.0.0.1:2181").connect().await?;
/// client.create("/hello", b"world", &CreateOptions::persistent()).await?;
/// let (data, stat) = client.get_data("/hello").await?;
/// assert_eq!(&data[..], b"world");
/// client.delete("/hello", Version::Exact(stat.version)).await?;
/// client.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    tx: mpsc::UnboundedSender<Command>,
    shared: Arc<Shared>,
    chroot: Chroot,
    request_timeout: Option<Duration>,
    persistent_watch_buffer: usize,
}

impl Client {
    /// A builder for a client of the ensemble in `connect_string`
    /// (`host:port,host:port[/chroot]`).
    ///
    /// ```no_run
    /// # async fn example() -> zk_session::Result<()> {
    /// use zk_session::Client;
    ///
    /// // Three servers; every path of this client is relative to the chroot /app.
    /// let client = Client::builder("zk1:2181,zk2:2181,zk3:2181/app").connect().await?;
    /// # Ok(()) }
    /// ```
    pub fn builder(connect_string: &str) -> ClientBuilder {
        ClientBuilder::new(connect_string)
    }

    pub(crate) fn new(
        tx: mpsc::UnboundedSender<Command>,
        shared: Arc<Shared>,
        chroot: Chroot,
        request_timeout: Option<Duration>,
        persistent_watch_buffer: usize,
    ) -> Self {
        Client {
            inner: Arc::new(Inner {
                tx,
                shared,
                chroot,
                request_timeout,
                persistent_watch_buffer,
            }),
        }
    }

    // ----- session information -----

    /// The session id (0 before the first connection).
    ///
    /// The same example serves for [`session_password`](Self::session_password),
    /// [`negotiated_timeout`](Self::negotiated_timeout), [`last_zxid`](Self::last_zxid) and
    /// [`connected_server`](Self::connected_server).
    ///
    /// ```no_run
    /// # fn example(client: zk_session::Client) {
    /// println!(
    ///     "session {:#x} on {:?}: timeout {:?}, last zxid {:#x}",
    ///     client.session_id(),
    ///     client.connected_server(),
    ///     client.negotiated_timeout(),
    ///     client.last_zxid(),
    /// );
    /// // With the id, enough for ClientBuilder::resume_session in another process.
    /// let password = client.session_password();
    /// # }
    /// ```
    pub fn session_id(&self) -> i64 {
        self.inner.shared.session_id.load(Ordering::Acquire)
    }

    /// The session password, with [`session_id`](Self::session_id) enough to take the session
    /// over from another connection.
    ///
    /// See the example on [`session_id`](Self::session_id).
    pub fn session_password(&self) -> Bytes {
        self.inner
            .shared
            .passwd
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The session timeout the server granted (zero before the first connection).
    ///
    /// See the example on [`session_id`](Self::session_id).
    pub fn negotiated_timeout(&self) -> Duration {
        Duration::from_millis(
            self.inner
                .shared
                .negotiated_timeout_ms
                .load(Ordering::Acquire),
        )
    }

    /// The highest zxid seen in a reply.
    ///
    /// See the example on [`session_id`](Self::session_id).
    pub fn last_zxid(&self) -> i64 {
        self.inner.shared.last_zxid.load(Ordering::Relaxed)
    }

    pub(crate) fn last_connect_error(&self) -> Option<String> {
        self.inner
            .shared
            .last_connect_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The server (`host:port`) this session is connected to now, if any.
    ///
    /// See the example on [`session_id`](Self::session_id).
    pub fn connected_server(&self) -> Option<String> {
        self.inner
            .shared
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The current connection state.
    ///
    /// ```no_run
    /// # fn example(client: zk_session::Client) {
    /// use zk_session::SessionState;
    ///
    /// match client.state() {
    ///     SessionState::Connected => println!("connected"),
    ///     s if s.is_terminal() => println!("{s:?}: this client is done; build a new one"),
    ///     s => println!("{s:?}: writes wait for a read-write server"),
    /// }
    /// # }
    /// ```
    pub fn state(&self) -> SessionState {
        self.inner.shared.publisher.state()
    }

    /// A stream of connection state changes from now on.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) {
    /// let mut events = client.session_events();
    /// tokio::spawn(async move {
    ///     while let Some(event) = events.next().await {
    ///         eprintln!("ZooKeeper session: {event:?}");
    ///     }
    /// });
    /// # }
    /// ```
    pub fn session_events(&self) -> SessionEvents {
        SessionEvents::new(self.inner.shared.publisher.subscribe())
    }

    /// The state as a `tokio::sync::watch` receiver, for waiting on a particular state.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) {
    /// let mut state = client.watch_state();
    /// // Wait until a server takes requests again (an error only if the client is gone).
    /// let _ = state.wait_for(|s| s.is_connected() || s.is_terminal()).await;
    /// # }
    /// ```
    pub fn watch_state(&self) -> watch::Receiver<SessionState> {
        self.inner.shared.publisher.watch_state()
    }

    // ----- plumbing -----

    fn server_path(&self, path: &str, kind: PathKind) -> Result<String, Error> {
        validate_path(path, kind).map_err(|reason| Error::InvalidPath {
            path: path.to_owned(),
            reason,
        })?;
        // The server appends the sequence to "/app" itself: "/app0000000001" is a sibling of
        // the chroot, outside it (the Java client lets this through).
        if path == "/" && matches!(kind, PathKind::Sequential) && !self.inner.chroot.is_root() {
            return Err(Error::InvalidArgument(
                "a sequential znode named after the chroot would be created outside it".into(),
            ));
        }
        Ok(self.inner.chroot.to_server(path))
    }

    fn client_path(&self, server_path: &str) -> String {
        self.inner.chroot.to_client(server_path)
    }

    async fn call(&self, request: Request, watch: Option<WatchReg>) -> Result<Response, Error> {
        let (tx, rx) = oneshot::channel();
        self.inner
            .tx
            .send(Command::Request(RequestCmd {
                request,
                reply: tx,
                watch,
            }))
            .map_err(|_| Error::Closed)?;
        self.reply(rx).await
    }

    /// Waits for the session task's answer, up to the request timeout.
    async fn reply<T>(&self, rx: oneshot::Receiver<Result<T, Error>>) -> Result<T, Error> {
        match self.inner.request_timeout {
            None => rx.await.unwrap_or(Err(Error::Closed)),
            Some(t) => match tokio::time::timeout(t, rx).await {
                Ok(r) => r.unwrap_or(Err(Error::Closed)),
                Err(_) => Err(Error::Code(ErrorCode::RequestTimeout)),
            },
        }
    }

    /// A one-shot watch of `kind`: Data for getData and exists (the session treats a data
    /// and an exist watch alike when one is dropped), Child for getChildren.
    fn oneshot_watch(&self, path: &str, kind: WatchKind) -> (WatchReg, OneshotWatch) {
        let (tx, rx) = oneshot::channel();
        let notice = DropNotice {
            tx: Some(self.inner.tx.downgrade()),
            path: path.to_owned(),
            kind,
        };
        (
            WatchReg::Oneshot {
                path: path.to_owned(),
                tx,
            },
            OneshotWatch::new(rx, notice),
        )
    }

    // ----- operations -----

    fn create_request(
        &self,
        path: &str,
        data: &[u8],
        options: &CreateOptions,
    ) -> Result<Request, Error> {
        let mode = options.mode();
        let kind = if mode.is_sequential() {
            PathKind::Sequential
        } else {
            PathKind::Plain
        };
        let path = self.server_path(path, kind)?;
        let data = Some(Bytes::copy_from_slice(data));
        let acl = options.acl().to_vec();
        if mode.is_ttl() {
            let ttl = options
                .ttl_duration()
                .ok_or_else(|| Error::InvalidArgument("a TTL mode needs a TTL".into()))?;
            let ttl = ttl.as_millis();
            if ttl == 0 || ttl > (1u128 << 40) {
                return Err(Error::InvalidArgument(format!(
                    "TTL of {ttl} ms is out of range"
                )));
            }
            return Ok(Request::CreateTtl(CreateTtlRequest {
                path,
                data,
                acl,
                mode,
                ttl: ttl as i64,
            }));
        }
        if options.ttl_duration().is_some() {
            return Err(Error::InvalidArgument(format!(
                "{mode:?} does not take a TTL"
            )));
        }
        Ok(Request::Create2(CreateRequest {
            path,
            data,
            acl,
            mode,
        }))
    }

    /// Creates a znode and returns its path (with the sequence suffix for sequential modes).
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{CreateOptions, Error, ErrorCode};
    ///
    /// match client.create("/app/config", b"v1", &CreateOptions::persistent()).await {
    ///     Ok(path) => assert_eq!(path, "/app/config"),
    ///     Err(Error::Code(ErrorCode::NodeExists)) => println!("someone else created it first"),
    ///     Err(e) => return Err(e),
    /// }
    /// let sequential = CreateOptions::persistent_sequential();
    /// let job = client.create("/app/jobs/job-", b"", &sequential).await?;
    /// println!("{job}"); // e.g. /app/jobs/job-0000000007
    /// # Ok(()) }
    /// ```
    pub async fn create(
        &self,
        path: &str,
        data: &[u8],
        options: &CreateOptions,
    ) -> Result<String, Error> {
        let mut req = self.create_request(path, data, options)?;
        // Plain modes use opcode 1, which returns no Stat.
        if let Request::Create2(r) = req {
            req = if r.mode == CreateMode::Container {
                Request::CreateContainer(r)
            } else {
                Request::Create(r)
            };
        }
        match self.call(req, None).await? {
            Response::Create(r) => Ok(self.client_path(&r.path)),
            Response::Create2(r) => Ok(self.client_path(&r.path)),
            other => Err(unexpected(other)),
        }
    }

    /// Creates a znode and returns its path and Stat.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::CreateOptions;
    ///
    /// let options = CreateOptions::ephemeral_sequential();
    /// let (path, stat) = client.create_with_stat("/app/workers/w-", b"host-1", &options).await?;
    /// assert_eq!(stat.ephemeral_owner, client.session_id()); // ephemeral: ours
    /// println!("{path} created by zxid {:#x}", stat.czxid);
    /// # Ok(()) }
    /// ```
    pub async fn create_with_stat(
        &self,
        path: &str,
        data: &[u8],
        options: &CreateOptions,
    ) -> Result<(String, Stat), Error> {
        let mut req = self.create_request(path, data, options)?;
        if let Request::Create2(r) = req {
            req = if r.mode == CreateMode::Container {
                Request::CreateContainer(r)
            } else {
                Request::Create2(r)
            };
        }
        match self.call(req, None).await? {
            Response::Create2(r) => Ok((self.client_path(&r.path), r.stat)),
            other => Err(unexpected(other)),
        }
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
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::Delete(DeleteRequest {
            path,
            version: version.as_i32(),
        });
        self.call(req, None).await.map(drop)
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
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::Exists(ExistsRequest { path, watch: false });
        exists_result(self.call(req, None).await)
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
    ///     println!("{:?} {}", event.event_type, event.path);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn exists_watch(&self, path: &str) -> Result<(Option<Stat>, OneshotWatch), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let (reg, watch) = self.oneshot_watch(&path, WatchKind::Data);
        let req = Request::Exists(ExistsRequest { path, watch: true });
        let stat = exists_result(self.call(req, Some(reg)).await)?;
        Ok((stat, watch))
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
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::GetData(GetDataRequest { path, watch: false });
        data_result(self.call(req, None).await?)
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
    ///     if watch.await?.event_type == EventType::NodeDeleted {
    ///         break;
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn get_data_watch(&self, path: &str) -> Result<(Bytes, Stat, OneshotWatch), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let (reg, watch) = self.oneshot_watch(&path, WatchKind::Data);
        let req = Request::GetData(GetDataRequest { path, watch: true });
        let (data, stat) = data_result(self.call(req, Some(reg)).await?)?;
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
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::SetData(SetDataRequest {
            path,
            data: Some(Bytes::copy_from_slice(data)),
            version: version.as_i32(),
        });
        stat_result(self.call(req, None).await?)
    }

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
        let path = self.server_path(path, PathKind::Plain)?;
        match self
            .call(Request::GetAcl(GetAclRequest { path }), None)
            .await?
        {
            Response::GetAcl(r) => Ok((r.acl, r.stat)),
            other => Err(unexpected(other)),
        }
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
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::SetAcl(SetAclRequest {
            path,
            acl: acl.to_vec(),
            version: version.as_i32(),
        });
        stat_result(self.call(req, None).await?)
    }

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
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::GetChildren(GetChildrenRequest { path, watch: false });
        match self.call(req, None).await? {
            Response::GetChildren(r) => Ok(r.children),
            other => Err(unexpected(other)),
        }
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
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::GetChildren2(GetChildrenRequest { path, watch: false });
        children2_result(self.call(req, None).await?)
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
    ///     println!("{:?}", event.event_type);
    /// }
    /// # }
    /// ```
    pub async fn get_children_watch(
        &self,
        path: &str,
    ) -> Result<(Vec<String>, Stat, OneshotWatch), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let (reg, watch) = self.oneshot_watch(&path, WatchKind::Child);
        let req = Request::GetChildren2(GetChildrenRequest { path, watch: true });
        let (children, stat) = children2_result(self.call(req, Some(reg)).await?)?;
        Ok((children, stat, watch))
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
        let path = self.server_path(path, PathKind::Plain)?;
        self.call(Request::Sync(SyncRequest { path }), None)
            .await
            .map(drop)
    }

    /// Runs the writes as one transaction: all succeed or none does. A failed transaction is
    /// [`Error::Multi`], which names the op that failed.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{CreateOptions, Error, Op, Version};
    ///
    /// let ops = [
    ///     Op::set_data("/app/config", b"v5", Version::Exact(4)),
    ///     Op::create("/app/history/rev-", b"v5", CreateOptions::persistent_sequential()),
    /// ];
    /// match client.multi(ops).await {
    ///     Ok(results) => assert_eq!(results.len(), 2), // one OpResult per op
    ///     Err(Error::Multi { index, code, .. }) => println!("op {index} failed: {code}"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn multi(&self, ops: impl IntoIterator<Item = Op>) -> Result<Vec<OpResult>, Error> {
        let mut wire = Vec::new();
        for op in ops {
            wire.push(self.multi_op(op)?);
        }
        // The server would accept an empty multi, but there is nothing to send.
        if wire.is_empty() {
            return Ok(Vec::new());
        }
        let resp = self
            .call(Request::Multi(MultiRequest { ops: wire }), None)
            .await?;
        let Response::Multi(m) = resp else {
            return Err(unexpected(resp));
        };
        if let Some(err) = multi_failure(&m.results) {
            return Err(err);
        }
        m.results
            .into_iter()
            .map(|r| match r {
                MultiResult::Create(c) => Ok(OpResult::Create {
                    path: self.client_path(&c.path),
                    stat: None,
                }),
                MultiResult::Create2(c) => Ok(OpResult::Create {
                    path: self.client_path(&c.path),
                    stat: Some(c.stat),
                }),
                MultiResult::Delete => Ok(OpResult::Delete),
                MultiResult::SetData(s) => Ok(OpResult::SetData(s)),
                MultiResult::Check => Ok(OpResult::Check),
                other => Err(Error::ProtocolViolation(format!(
                    "unexpected multi result {other:?}"
                ))),
            })
            .collect()
    }

    fn multi_op(&self, op: Op) -> Result<MultiOp, Error> {
        let kind = match &op {
            Op::Create { options, .. } if options.mode().is_sequential() => PathKind::Sequential,
            _ => PathKind::Plain,
        };
        let path = self.server_path(op.path(), kind)?;
        Ok(match op {
            Op::Create { data, options, .. } => {
                let mode = options.mode();
                let acl = options.acl().to_vec();
                if mode.is_ttl() {
                    let ttl = options
                        .ttl_duration()
                        .ok_or_else(|| Error::InvalidArgument("a TTL mode needs a TTL".into()))?;
                    MultiOp::CreateTtl(CreateTtlRequest {
                        path,
                        data: Some(data),
                        acl,
                        mode,
                        ttl: ttl.as_millis() as i64,
                    })
                } else {
                    let r = CreateRequest {
                        path,
                        data: Some(data),
                        acl,
                        mode,
                    };
                    if mode == CreateMode::Container {
                        MultiOp::CreateContainer(r)
                    } else {
                        MultiOp::Create2(r)
                    }
                }
            }
            Op::Delete { version, .. } => MultiOp::Delete(DeleteRequest {
                path,
                version: version.as_i32(),
            }),
            Op::SetData { data, version, .. } => MultiOp::SetData(SetDataRequest {
                path,
                data: Some(data),
                version: version.as_i32(),
            }),
            Op::Check { version, .. } => MultiOp::Check(CheckVersionRequest {
                path,
                version: version.as_i32(),
            }),
        })
    }

    /// Runs the reads in one round trip; each succeeds or fails on its own.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::ReadOp;
    ///
    /// // The data of every child, in one round trip.
    /// let names = client.get_children("/app/workers").await?;
    /// let reads = names.iter().map(|n| ReadOp::GetData(format!("/app/workers/{n}")));
    /// let results = client.multi_read(reads).await?;
    /// assert_eq!(results.len(), names.len()); // in the order of the reads
    /// # Ok(()) }
    /// ```
    pub async fn multi_read(
        &self,
        ops: impl IntoIterator<Item = ReadOp>,
    ) -> Result<Vec<ReadResult>, Error> {
        let mut wire = Vec::new();
        for op in ops {
            wire.push(match op {
                ReadOp::GetData(p) => MultiOp::GetData(GetDataRequest {
                    path: self.server_path(&p, PathKind::Plain)?,
                    watch: false,
                }),
                ReadOp::GetChildren(p) => MultiOp::GetChildren(GetChildrenRequest {
                    path: self.server_path(&p, PathKind::Plain)?,
                    watch: false,
                }),
            });
        }
        if wire.is_empty() {
            return Ok(Vec::new());
        }
        let resp = self
            .call(Request::MultiRead(MultiRequest { ops: wire.clone() }), None)
            .await?;
        let Response::Multi(m) = resp else {
            return Err(unexpected(resp));
        };
        if m.results.len() != wire.len() {
            return Err(Error::ProtocolViolation(format!(
                "{} results for {} reads",
                m.results.len(),
                wire.len()
            )));
        }
        m.results
            .into_iter()
            .zip(wire)
            .map(|(r, op)| match (r, op) {
                (MultiResult::GetData(d), _) => {
                    Ok(ReadResult::Data(Ok((d.data.unwrap_or_default(), d.stat))))
                }
                (MultiResult::GetChildren(c), _) => Ok(ReadResult::Children(Ok(c.children))),
                (MultiResult::Error(code), MultiOp::GetData(_)) => Ok(ReadResult::Data(Err(code))),
                (MultiResult::Error(code), _) => Ok(ReadResult::Children(Err(code))),
                (other, _) => Err(Error::ProtocolViolation(format!(
                    "unexpected multiRead result {other:?}"
                ))),
            })
            .collect()
    }

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
    ///         Ok(e) if e.event_type == EventType::NodeDataChanged => println!("config changed"),
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
        let notice = DropNotice {
            tx: Some(self.inner.tx.downgrade()),
            path: path.clone(),
            kind,
        };
        let reg = WatchReg::Stream {
            path: path.clone(),
            kind,
            tx,
        };
        let req = Request::AddWatch(AddWatchRequest { path, mode });
        match self.call(req, Some(reg)).await? {
            Response::Error(e) if e.err != 0 => Err(Error::Code(ErrorCode::from_code(e.err))),
            Response::Error(_) | Response::Empty => Ok(PersistentWatch::new(rx, notice)),
            other => Err(unexpected(other)),
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

    /// The paths of this session's ephemeral znodes under `prefix` ("/" for all).
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::CreateOptions;
    ///
    /// let options = CreateOptions::ephemeral_sequential();
    /// let path = client.create("/app/workers/w-", b"", &options).await?;
    /// let ours = client.get_ephemerals("/app/workers").await?;
    /// assert!(ours.contains(&path));
    /// # Ok(()) }
    /// ```
    pub async fn get_ephemerals(&self, prefix: &str) -> Result<Vec<String>, Error> {
        let prefix_path = self.server_path(prefix, PathKind::Plain)?;
        let req = Request::GetEphemerals(GetEphemeralsRequest { prefix_path });
        match self.call(req, None).await? {
            Response::GetEphemerals(r) => {
                Ok(r.ephemerals.iter().map(|p| self.client_path(p)).collect())
            }
            other => Err(unexpected(other)),
        }
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
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::GetAllChildrenNumber(GetAllChildrenNumberRequest { path });
        match self.call(req, None).await? {
            Response::GetAllChildrenNumber(r) => Ok(r.total_number),
            other => Err(unexpected(other)),
        }
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
        match self.call(Request::WhoAmI, None).await? {
            Response::WhoAmI(r) => Ok(r.client_info),
            other => Err(unexpected(other)),
        }
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
    /// client.create("/app/private", b"", &options).await?;
    /// # Ok(()) }
    /// ```
    pub async fn add_auth(&self, scheme: &str, auth: &[u8]) -> Result<(), Error> {
        let (tx, rx) = oneshot::channel();
        self.inner
            .tx
            .send(Command::AddAuth {
                scheme: scheme.to_owned(),
                auth: Bytes::copy_from_slice(auth),
                reply: tx,
            })
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
        let req = Request::GetData(GetDataRequest {
            path: CONFIG_NODE.to_owned(),
            watch: false,
        });
        data_result(self.call(req, None).await?)
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
        let req = Request::Reconfig(ReconfigRequest {
            joining_servers: joining.map(str::to_owned),
            leaving_servers: leaving.map(str::to_owned),
            new_members: new_members.map(str::to_owned),
            cur_config_id: from_config.unwrap_or(-1),
        });
        data_result(self.call(req, None).await?)
    }

    /// Closes the session: its ephemeral znodes go, its watches end, every later request fails
    /// with [`Error::Closed`].
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{CreateOptions, Error};
    ///
    /// client.create("/app/alive", b"", &CreateOptions::ephemeral()).await?;
    /// client.close().await?; // the ephemeral znode goes with the session
    /// assert!(matches!(client.exists("/app/alive").await, Err(Error::Closed)));
    /// # Ok(()) }
    /// ```
    pub async fn close(&self) -> Result<(), Error> {
        let (tx, rx) = oneshot::channel();
        if self.inner.tx.send(Command::Close { reply: tx }).is_err() {
            return Ok(());
        }
        let _ = rx.await;
        Ok(())
    }
}

fn unexpected(resp: Response) -> Error {
    Error::ProtocolViolation(format!("unexpected response {resp:?}"))
}

fn exists_result(r: Result<Response, Error>) -> Result<Option<Stat>, Error> {
    match r {
        Ok(Response::Stat(s)) => Ok(Some(s)),
        Err(Error::Code(ErrorCode::NoNode)) => Ok(None),
        Ok(other) => Err(unexpected(other)),
        Err(e) => Err(e),
    }
}

fn data_result(r: Response) -> Result<(Bytes, Stat), Error> {
    match r {
        Response::GetData(d) => Ok((d.data.unwrap_or_default(), d.stat)),
        other => Err(unexpected(other)),
    }
}

fn stat_result(r: Response) -> Result<Stat, Error> {
    match r {
        Response::Stat(s) => Ok(s),
        other => Err(unexpected(other)),
    }
}

fn children2_result(r: Response) -> Result<(Vec<String>, Stat), Error> {
    match r {
        Response::GetChildren2(c) => Ok((c.children, c.stat)),
        other => Err(unexpected(other)),
    }
}

/// A rolled-back transaction comes back as all-error results: the op that failed carries its
/// code, the ops before it 0 and the ops after it -2 (RuntimeInconsistency).
fn multi_failure(results: &[MultiResult]) -> Option<Error> {
    let codes: Vec<ErrorCode> = results
        .iter()
        .map(|r| match r {
            MultiResult::Error(c) => *c,
            _ => ErrorCode::Ok,
        })
        .collect();
    if !results
        .iter()
        .any(|r| matches!(r, MultiResult::Error(c) if *c != ErrorCode::Ok))
    {
        return None;
    }
    let index = codes
        .iter()
        .position(|c| !matches!(c, ErrorCode::Ok | ErrorCode::RuntimeInconsistency))
        .or_else(|| codes.iter().position(|c| *c != ErrorCode::Ok))
        .unwrap_or(0);
    Some(Error::Multi {
        index,
        code: codes[index],
        results: codes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_multi_names_the_failing_op() {
        let r = [
            MultiResult::Error(ErrorCode::Ok),
            MultiResult::Error(ErrorCode::BadVersion),
            MultiResult::Error(ErrorCode::RuntimeInconsistency),
        ];
        match multi_failure(&r) {
            Some(Error::Multi {
                index,
                code,
                results,
            }) => {
                assert_eq!(index, 1);
                assert_eq!(code, ErrorCode::BadVersion);
                assert_eq!(results.len(), 3);
            }
            other => panic!("{other:?}"),
        }
        assert!(multi_failure(&[MultiResult::Delete, MultiResult::Check]).is_none());
    }
}
