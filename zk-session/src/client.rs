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
    redact::Redacted,
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

    /// True once this client can serve no more requests: it was closed, authentication
    /// failed, or its session expired and no new session follows
    /// ([`OnExpiry::End`](crate::OnExpiry::End), or a session given with
    /// [`resume_session`](crate::ClientBuilder::resume_session) that had already expired).
    /// With the default [`OnExpiry::NewSession`](crate::OnExpiry::NewSession),
    /// [`SessionState::Expired`] is only a passage to the next session, and this stays false.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) {
    /// use zk_session::SessionState;
    ///
    /// if client.state() == SessionState::Expired && !client.has_ended() {
    ///     println!("the session expired; a new one is on its way");
    /// }
    /// # }
    /// ```
    pub fn has_ended(&self) -> bool {
        self.inner.shared.ended.load(Ordering::Acquire)
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

mod acl_ops;
mod children_ops;
mod ensemble_ops;
mod transactions;
mod watch_ops;
