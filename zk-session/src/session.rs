//! The session task: owns the connection, the xid FIFO, the timers, the watch table and the
//! reconnect loop. The [`Client`](crate::Client) handle talks to it through [`Command`]s.

use std::{
    collections::VecDeque,
    pin::Pin,
    sync::{
        atomic::{AtomicI64, AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use bytes::Bytes;
use rand::seq::SliceRandom;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    sync::{mpsc, oneshot},
    time::{sleep, sleep_until, Instant},
};
use zk_proto::{
    jute::{Reader, Record},
    xid, AuthPacket, ConnectRequest, ErrorCode, FrameCodec, OpCode, RemoveWatchesRequest,
    ReplyHeader, Request, Response, WatcherEvent, WatcherType,
};

use crate::{
    chroot::Chroot,
    connection::{self, ConnectFailure, Connection, InFlight},
    jitter,
    redact::Redacted,
    state::{SessionEvent, SessionState, StatePublisher},
    transport::Security,
    watch::{StreamTx, WatchKind},
    watch_table::{OneshotTx, WatchTable},
    Error,
};

/// What the client handle asks of the session task.
#[derive(Debug)]
pub(crate) enum Command {
    Request(RequestCmd),
    AddAuth {
        scheme: String,
        auth: Redacted<Bytes>,
        reply: oneshot::Sender<Result<(), Error>>,
    },
    WatchDropped {
        path: String,
        kind: WatchKind,
    },
    Close {
        reply: oneshot::Sender<()>,
    },
}

/// One operation: its request (paths already under the chroot), where its reply goes, and
/// the watch it registers if it succeeds.
#[derive(Debug)]
pub(crate) struct RequestCmd {
    pub request: Request,
    pub reply: oneshot::Sender<Result<Response, Error>>,
    pub watch: Option<WatchReg>,
}

/// A watch to register when the request that sets it succeeds.
#[derive(Debug)]
pub(crate) enum WatchReg {
    /// exists/getData/getChildren: the kind follows from the op and the reply.
    Oneshot { path: String, tx: OneshotTx },
    /// addWatch.
    Stream {
        path: String,
        kind: WatchKind,
        tx: StreamTx,
    },
    /// removeWatches: end the local watches of this type when the server removed its own.
    Remove {
        path: String,
        watcher_type: WatcherType,
    },
}

impl WatchReg {
    /// The path a watch will be registered on, if this registers one.
    fn registers(&self) -> Option<&str> {
        match self {
            WatchReg::Oneshot { path, .. } | WatchReg::Stream { path, .. } => Some(path),
            WatchReg::Remove { .. } => None,
        }
    }
}

/// Whoever waits for the answer to an auth packet.
type AuthWaiter = oneshot::Sender<Result<(), Error>>;

/// Settings the task needs, fixed at build time. `Debug` (in redact.rs) hides credentials.
#[derive(Clone)]
pub(crate) struct Config {
    pub hosts: Vec<(String, u16)>,
    pub chroot: Chroot,
    pub session_timeout: Duration,
    pub connect_timeout: Option<Duration>,
    pub read_only: bool,
    pub max_frame_len: usize,
    pub auths: Vec<(String, Bytes)>,
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// An existing session to attach to (id, password).
    pub resume: Option<(i64, Bytes)>,
    /// SASL on every new connection.
    pub sasl: connection::SaslOption,
    /// Plain TCP or TLS, for every server and every reconnect.
    pub security: Security,
}

/// What the handle can read without asking the task. `Debug` (in redact.rs) hides the
/// password.
pub(crate) struct Shared {
    pub publisher: StatePublisher,
    pub session_id: AtomicI64,
    pub negotiated_timeout_ms: AtomicU64,
    pub last_zxid: AtomicI64,
    pub passwd: Mutex<Bytes>,
    /// Why the last connection attempt failed, for the error of a first connect that fails.
    pub last_connect_error: Mutex<Option<String>>,
    /// The server of the current connection, `host:port`.
    pub server: Mutex<Option<String>>,
}

/// Why the session ended for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Expired,
    AuthFailed,
    Closed,
}

impl End {
    fn error(self) -> Error {
        match self {
            End::Expired => Error::session_expired(),
            End::AuthFailed => Error::Code(ErrorCode::AuthFailed),
            End::Closed => Error::Closed,
        }
    }
}

/// Why a connection ended.
#[derive(Debug)]
enum Drop_ {
    /// Try another server (or the same one) with the same session.
    Reconnect,
    /// The session is over.
    End(End),
}

/// Write buffer size above which no more commands are taken until the socket drains, so a
/// server that stops reading cannot make us buffer without bound.
const WRITE_HIGH_WATER: usize = 4 * 1024 * 1024;

/// The error (-124) a server that enforces SASL answers an unauthenticated request with.
const SASL_REQUIRED: i32 = -124;

/// Auth packet type the server expects (always 0).
const AUTH_TYPE: i32 = 0;

/// A connection that ends sooner than this after its handshake counts as a quick drop: the
/// next reconnection waits a backoff that grows with the run of quick drops, so a server that
/// accepts the session and hangs up at once does not get a reconnect storm.
const QUICK_DROP: Duration = Duration::from_secs(1);

/// The smallest queue of waiting requests worth scanning for abandoned ones.
const MIN_WAITING_PRUNE: usize = 64;

pub(crate) struct Session {
    cfg: Config,
    shared: Arc<Shared>,
    rx: mpsc::UnboundedReceiver<Command>,
    session_id: i64,
    passwd: Bytes,
    /// The negotiated timeout once connected, the requested one before.
    timeout: Duration,
    last_zxid: i64,
    next_xid: i32,
    /// Requests that arrived while disconnected, in order.
    waiting: VecDeque<RequestCmd>,
    /// Server-side watches to remove, found while answering replies.
    removals: Vec<RemoveWatchesRequest>,
    /// Length of `waiting` at which the requests whose callers gave up are dropped from it.
    waiting_prune_at: usize,
    watches: WatchTable,
    /// Every auth ever added, re-sent on each connection; the sender waits for its first reply.
    auths: Vec<(String, Bytes, Option<AuthWaiter>)>,
    /// One entry per auth packet in flight (replies carry xid -4 and come in order).
    auth_waiters: VecDeque<Option<AuthWaiter>>,
    next_host: usize,
    ever_connected: bool,
    /// Connections in a row that ended within [`QUICK_DROP`] of their handshake.
    quick_drops: u32,
    /// A session made by a read-only server is not valid on the quorum: until a read-write
    /// server has been seen, connect with session id 0 (as the reference client does).
    seen_rw_server: bool,
    /// Set when close was asked for: answered once the session is closed.
    close_waiters: Vec<oneshot::Sender<()>>,
    /// A closeSession was sent: a connection that drops now ends the session instead of
    /// resuming it, as the Java client does (the server expires it if the close never came).
    closing: bool,
}

impl Session {
    pub fn new(mut cfg: Config, shared: Arc<Shared>, rx: mpsc::UnboundedReceiver<Command>) -> Self {
        // Shuffled, as the reference client does, so clients spread over the ensemble.
        cfg.hosts.shuffle(&mut jitter::rng());
        let auths = cfg
            .auths
            .iter()
            .map(|(s, a)| (s.clone(), a.clone(), None))
            .collect();
        let (session_id, passwd) = cfg
            .resume
            .clone()
            .unwrap_or((0, Bytes::from_static(&[0u8; 16])));
        let seen_rw_server = cfg.resume.is_some();
        Session {
            seen_rw_server,
            session_id,
            passwd,
            timeout: cfg.session_timeout,
            cfg,
            shared,
            rx,
            last_zxid: 0,
            next_xid: 1,
            waiting: VecDeque::new(),
            removals: Vec::new(),
            waiting_prune_at: MIN_WAITING_PRUNE,
            watches: WatchTable::default(),
            auths,
            auth_waiters: VecDeque::new(),
            next_host: 0,
            ever_connected: false,
            quick_drops: 0,
            close_waiters: Vec::new(),
            closing: false,
        }
    }

    fn xid(&mut self) -> i32 {
        let x = self.next_xid;
        self.next_xid = if x == i32::MAX { 1 } else { x + 1 };
        x
    }

    fn publish(&self, state: SessionState, event: SessionEvent) {
        self.shared.publisher.publish(state, event);
    }

    /// Runs the session until it ends and every client handle is gone.
    pub async fn run(mut self) {
        let end = loop {
            let conn = match self.connect_phase().await {
                Ok(c) => c,
                Err(end) => break end,
            };
            let connected_at = Instant::now();
            let dropped = self.connected_phase(conn).await;
            *self.shared.server.lock().unwrap_or_else(|e| e.into_inner()) = None;
            match dropped {
                Drop_::Reconnect if self.closing => break End::Closed,
                Drop_::Reconnect => {
                    self.quick_drops = if connected_at.elapsed() < QUICK_DROP {
                        self.quick_drops.saturating_add(1)
                    } else {
                        0
                    };
                }
                Drop_::End(end) => break end,
            }
        };
        self.finish(end).await;
    }

    // ----- disconnected -----

    /// Tries servers in turn until one accepts the session, serving commands meanwhile.
    async fn connect_phase(&mut self) -> Result<Connection, End> {
        let disconnected_at = Instant::now();
        let mut lost = self.shared.publisher.state() == SessionState::Lost;
        let mut failures_in_cycle = 0usize;
        // After quick drops, even the first attempt backs off.
        let mut cycles = self.quick_drops;
        loop {
            let n = self.cfg.hosts.len();
            let host = self.next_host % n;
            self.next_host = (host + 1) % n;
            let (session_id, passwd) = if self.seen_rw_server {
                (self.session_id, self.passwd.clone())
            } else {
                (0, Bytes::from_static(&[0u8; 16]))
            };
            let request = ConnectRequest {
                protocol_version: 0,
                last_zxid_seen: self.last_zxid,
                timeout: self.cfg.session_timeout.as_millis().min(i32::MAX as u128) as i32,
                session_id,
                passwd,
                read_only: self.cfg.read_only,
            };
            // The reference client splits the session timeout over the hosts; we split it in
            // at least three, so that a server that accepts and never answers (3.8.0 leaves a
            // connection made during its start-up that way) leaves time for another try
            // before the session expires, even with a single host.
            let per_host = self.cfg.connect_timeout.unwrap_or_else(|| {
                (self.timeout / n.max(3) as u32).max(Duration::from_millis(500))
            });
            let backoff = if failures_in_cycle == 0 && cycles > 0 {
                let exp = self.cfg.backoff_base * 2u32.saturating_pow(cycles.min(16));
                let cap = exp.min(self.cfg.backoff_max);
                cap.mul_f64(jitter::random_range(0.5..1.0))
            } else {
                Duration::ZERO
            };
            let attempt = {
                let addr = self.cfg.hosts[host].clone();
                let codec = FrameCodec::with_max_frame_len(self.cfg.max_frame_len);
                let (sasl, xid) = (self.cfg.sasl.clone(), self.next_xid);
                let security = self.cfg.security.clone();
                async move {
                    if !backoff.is_zero() {
                        sleep(backoff).await;
                    }
                    let handshake = connection::Handshake { request, sasl, xid };
                    connection::connect(addr, host, handshake, per_host, codec, security).await
                }
            };
            tokio::pin!(attempt);
            let lost_at = disconnected_at + self.timeout;
            let result = loop {
                tokio::select! {
                    r = &mut attempt => break r,
                    cmd = self.rx.recv() => match cmd {
                        Some(cmd) => self.command_while_disconnected(cmd)?,
                        // Every handle is gone and there is no connection to close politely.
                        None => return Err(End::Closed),
                    },
                    _ = sleep_until(lost_at), if self.ever_connected && !lost => {
                        lost = true;
                        self.publish(SessionState::Lost, SessionEvent::Lost);
                        // The wait for a reconnect ends here: without it, a request with no
                        // timeout would wait for as long as no server answers.
                        for rc in std::mem::take(&mut self.waiting) {
                            if let Some(path) = rc.watch.as_ref().and_then(WatchReg::registers) {
                                // Dropped watches are not re-registered: nothing to remove.
                                let _ = self.watches.end_registration(path);
                            }
                            let _ = rc.reply.send(Err(Error::connection_loss()));
                        }
                    }
                }
            };
            match result {
                Ok(conn) => {
                    if conn.response.timeout <= 0 {
                        return Err(End::Expired);
                    }
                    self.next_xid = conn.next_xid;
                    return Ok(self.established(conn));
                }
                Err(failure) => {
                    *self
                        .shared
                        .last_connect_error
                        .lock()
                        .unwrap_or_else(|e| e.into_inner()) = Some(format!(
                        "{}:{}: {failure}",
                        self.cfg.hosts[host].0, self.cfg.hosts[host].1
                    ));
                    // The same credentials would fail on every server: no retry loop.
                    if matches!(failure, ConnectFailure::AuthFailed(_)) {
                        return Err(End::AuthFailed);
                    }
                    failures_in_cycle += 1;
                    if failures_in_cycle >= n {
                        failures_in_cycle = 0;
                        cycles += 1;
                    }
                }
            }
        }
    }

    fn command_while_disconnected(&mut self, cmd: Command) -> Result<(), End> {
        match cmd {
            Command::Request(rc) if self.shared.publisher.state() == SessionState::Lost => {
                let _ = rc.reply.send(Err(Error::connection_loss()));
            }
            Command::Request(rc) => {
                if let Some(path) = rc.watch.as_ref().and_then(WatchReg::registers) {
                    self.watches.begin_registration(path);
                }
                self.waiting.push_back(rc);
                // Callers that time out while disconnected leave their requests behind: drop
                // those now and then, so a long outage cannot grow the queue without bound.
                if self.waiting.len() >= self.waiting_prune_at {
                    let watches = &mut self.watches;
                    self.waiting.retain(|rc| {
                        let abandoned = rc.reply.is_closed();
                        if let Some(path) = rc.watch.as_ref().and_then(WatchReg::registers) {
                            if abandoned {
                                // Disconnected: a dropped watch has nothing on the server.
                                let _ = watches.end_registration(path);
                            }
                        }
                        !abandoned
                    });
                    self.waiting_prune_at = (self.waiting.len() * 2).max(MIN_WAITING_PRUNE);
                }
            }
            Command::AddAuth {
                scheme,
                auth: Redacted(auth),
                reply,
            } => self.remember_auth(scheme, auth, Some(reply)),
            Command::WatchDropped { path, kind } => {
                // Not re-registered on reconnect, so nothing to remove on the server.
                let _ = self.watches.watch_dropped(&path, kind);
            }
            Command::Close { reply } => {
                self.close_waiters.push(reply);
                return Err(End::Closed);
            }
        }
        Ok(())
    }

    /// Keeps credentials for re-sending on every reconnect, once each however often they were
    /// added. `waiter` is answered by the next auth reply for them.
    fn remember_auth(&mut self, scheme: String, auth: Bytes, waiter: Option<AuthWaiter>) {
        let same = self
            .auths
            .iter_mut()
            .find(|(s, a, w)| *s == scheme && *a == auth && (w.is_none() || waiter.is_none()));
        match same {
            Some((_, _, w)) => {
                if waiter.is_some() {
                    *w = waiter;
                }
            }
            None => self.auths.push((scheme, auth, waiter)),
        }
    }

    /// Records a successful handshake and announces it.
    fn established(&mut self, conn: Connection) -> Connection {
        let r = &conn.response;
        let same_session = self.ever_connected && r.session_id == self.session_id;
        if !r.read_only {
            self.seen_rw_server = true;
        }
        self.session_id = r.session_id;
        self.passwd = r.passwd.clone();
        self.timeout = Duration::from_millis(r.timeout as u64);
        self.shared
            .session_id
            .store(r.session_id, Ordering::Release);
        self.shared
            .negotiated_timeout_ms
            .store(r.timeout as u64, Ordering::Release);
        *self.shared.passwd.lock().unwrap_or_else(|e| e.into_inner()) = r.passwd.clone();
        let state = if r.read_only {
            SessionState::ConnectedReadOnly
        } else {
            SessionState::Connected
        };
        // Read-only is announced as such even for the same session (Curator's READ_ONLY):
        // a listener must not take it for a session that can write again.
        let event = if r.read_only {
            SessionEvent::ConnectedReadOnly
        } else if same_session {
            SessionEvent::Reconnected
        } else {
            SessionEvent::Connected
        };
        self.ever_connected = true;
        let (h, p) = &self.cfg.hosts[conn.host];
        *self.shared.server.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{h}:{p}"));
        // The next attempt after a drop starts with the next server in the list.
        self.next_host = (conn.host + 1) % self.cfg.hosts.len();
        self.publish(state, event);
        conn
    }

    // ----- connected -----

    /// Serves one connection until it drops or the session ends.
    async fn connected_phase(&mut self, mut conn: Connection) -> Drop_ {
        // Reconnect order: auth packets, then watches, then the requests that waited.
        // Credentials that cannot fit a frame are refused (and forgotten) as they would have
        // been had they been added while connected.
        let wbuf = &mut conn.wbuf;
        let codec = &conn.codec;
        let waiters = &mut self.auth_waiters;
        self.auths.retain_mut(|(scheme, auth, waiter)| {
            let packet = Request::Auth(AuthPacket {
                auth_type: AUTH_TYPE,
                scheme: scheme.clone(),
                auth: Some(auth.clone()),
            });
            let waiter = waiter.take();
            match codec.encode_with(wbuf, |b| packet.encode(xid::AUTH, b)) {
                Ok(()) => {
                    waiters.push_back(waiter);
                    true
                }
                Err(e) => {
                    if let Some(w) = waiter {
                        let _ = w.send(Err(Error::InvalidArgument(e.to_string())));
                    }
                    false
                }
            }
        });
        // set_watches sizes every batch to fit the frame limit, so none fails to encode.
        let max_frame_len = conn.codec.max_frame_len();
        for req in self.watches.set_watches(self.last_zxid, max_frame_len) {
            let _ = conn
                .codec
                .encode_with(&mut conn.wbuf, |b| req.encode(xid::SET_WATCHES, b));
        }
        while let Some(rc) = self.waiting.pop_front() {
            self.send(&mut conn, rc);
        }

        let read_timeout = self.timeout * 2 / 3;
        let ping_every = (read_timeout / 2).min(Duration::from_secs(10));
        let mut last_recv = Instant::now();
        let mut last_send = Instant::now();
        let mut close_deadline: Option<Instant> = None;
        let timer = sleep_until(last_send + ping_every);
        tokio::pin!(timer);
        let mut rw_probe: Option<Pin<Box<tokio::task::JoinHandle<usize>>>> =
            if conn.response.read_only && self.cfg.hosts.len() > 1 {
                Some(Box::pin(tokio::spawn(connection::find_read_write_server(
                    self.cfg.hosts.clone(),
                    conn.host,
                    self.cfg.security.clone(),
                ))))
            } else {
                None
            };
        // Bytes that came in behind the connect response are frames like any other.
        let mut early = self.read_frames(&mut conn).err();
        let result = loop {
            if let Some(d) = early.take() {
                break d;
            }
            let take_commands = conn.wbuf.len() < WRITE_HIGH_WATER && close_deadline.is_none();
            if conn.rbuf.capacity() - conn.rbuf.len() < 8 * 1024 {
                conn.rbuf.reserve(64 * 1024);
            }
            tokio::select! {
                r = conn.rd.read_buf(&mut conn.rbuf) => match r {
                    Ok(0) | Err(_) => break Drop_::Reconnect,
                    Ok(_) => match self.read_frames(&mut conn) {
                        Ok(0) => {}
                        Ok(_) => {
                            last_recv = Instant::now();
                            for req in std::mem::take(&mut self.removals) {
                                self.send_internal(&mut conn, Request::RemoveWatches(req));
                            }
                        }
                        Err(d) => break d,
                    },
                },
                r = conn.wr.write_buf(&mut conn.wbuf), if !conn.wbuf.is_empty() => match r {
                    Ok(_) => last_send = Instant::now(),
                    Err(_) => break Drop_::Reconnect,
                },
                cmd = self.rx.recv(), if take_commands => {
                    let mut next = cmd;
                    // Drain what is queued so one write carries many requests.
                    let mut taken = 0;
                    let mut yielded = false;
                    loop {
                        match next {
                            None => {
                                // Every handle is gone: close the session politely.
                                close_deadline = Some(self.send_close(&mut conn, read_timeout));
                                break;
                            }
                            Some(Command::Close { reply }) => {
                                self.close_waiters.push(reply);
                                close_deadline = Some(self.send_close(&mut conn, read_timeout));
                                break;
                            }
                            Some(cmd) => self.command_while_connected(&mut conn, cmd),
                        }
                        taken += 1;
                        conn.owed = conn.owed.saturating_sub(1);
                        if taken >= 1024 || conn.wbuf.len() >= WRITE_HIGH_WATER {
                            break;
                        }
                        match self.rx.try_recv() {
                            Ok(c) => next = Some(c),
                            // Callers just answered (on this thread or another) are likely to
                            // send again: yield once so that their requests join this write
                            // instead of costing a write (and a server wake-up) each.
                            Err(mpsc::error::TryRecvError::Empty)
                                if conn.owed > 0 && !yielded =>
                            {
                                yielded = true;
                                tokio::task::yield_now().await;
                                match self.rx.try_recv() {
                                    Ok(c) => next = Some(c),
                                    Err(_) => {
                                        // They had nothing more to send.
                                        conn.owed = 0;
                                        break;
                                    }
                                }
                            }
                            Err(_) => break,
                        }
                    }
                }
                _ = &mut timer => {
                    let now = Instant::now();
                    if close_deadline.is_some_and(|d| now >= d) {
                        break Drop_::End(End::Closed);
                    }
                    if now.duration_since(last_recv) >= read_timeout {
                        break Drop_::Reconnect;
                    }
                    if now.duration_since(last_send) >= ping_every && conn.wbuf.is_empty() {
                        let _ = conn.codec.encode_with(&mut conn.wbuf, |b| Request::Ping.encode(xid::PING, b));
                        last_send = now;
                    }
                    let mut next = (last_recv + read_timeout).min(last_send + ping_every);
                    if let Some(d) = close_deadline {
                        next = next.min(d);
                    }
                    timer.as_mut().reset(next.max(now + Duration::from_millis(1)));
                }
                found = async { rw_probe.as_mut().unwrap().as_mut().await }, if rw_probe.is_some() => {
                    rw_probe = None;
                    if let Ok(host) = found {
                        self.next_host = host;
                        break Drop_::Reconnect;
                    }
                }
            }
        };
        if let Some(p) = rw_probe {
            p.abort();
        }
        // The state changes before the callers hear of it, so that one who looks at the state
        // on getting the error sees why.
        let err = match &result {
            Drop_::Reconnect if self.closing => {
                self.announce_end(&End::Closed);
                End::Closed.error()
            }
            Drop_::Reconnect => {
                if !self.shared.publisher.state().is_terminal() {
                    self.publish(SessionState::Suspended, SessionEvent::Suspended);
                }
                Error::connection_loss()
            }
            Drop_::End(e) => {
                self.announce_end(e);
                e.error()
            }
        };
        // Whatever was in flight on this connection is answered now, exactly once.
        self.fail_inflight(&mut conn, &err);
        // Server-side watches die with their connection.
        self.removals.clear();
        // Best effort: let the server see the close rather than wait for a timeout.
        let _ = conn.wr.shutdown().await;
        result
    }

    fn command_while_connected(&mut self, conn: &mut Connection, cmd: Command) {
        match cmd {
            Command::Request(rc) => {
                if let Some(path) = rc.watch.as_ref().and_then(WatchReg::registers) {
                    self.watches.begin_registration(path);
                }
                self.send(conn, rc);
            }
            Command::AddAuth {
                scheme,
                auth: Redacted(auth),
                reply,
            } => {
                let packet = Request::Auth(AuthPacket {
                    auth_type: AUTH_TYPE,
                    scheme: scheme.clone(),
                    auth: Some(auth.clone()),
                });
                match conn
                    .codec
                    .encode_with(&mut conn.wbuf, |b| packet.encode(xid::AUTH, b))
                {
                    Ok(()) => {
                        self.remember_auth(scheme, auth, None);
                        self.auth_waiters.push_back(Some(reply));
                    }
                    Err(e) => {
                        let _ = reply.send(Err(Error::InvalidArgument(e.to_string())));
                    }
                }
            }
            Command::WatchDropped { path, kind } => {
                if let Some(watcher_type) = self.watches.watch_dropped(&path, kind) {
                    let req = Request::RemoveWatches(RemoveWatchesRequest { path, watcher_type });
                    self.send_internal(conn, req);
                }
            }
            Command::Close { .. } => unreachable!("handled by the caller"),
        }
    }

    /// Encodes a caller's request and queues it for its reply.
    fn send(&mut self, conn: &mut Connection, rc: RequestCmd) {
        if rc.reply.is_closed() {
            // The caller gave up (timeout or cancel) while it waited for a connection.
            self.registration_failed(&rc);
            return;
        }
        let xid = self.xid();
        let op = rc.request.op_code();
        match conn
            .codec
            .encode_with(&mut conn.wbuf, |b| rc.request.encode(xid, b))
        {
            Ok(()) => conn.inflight.push_back(InFlight {
                xid,
                op,
                reply: Some(rc.reply),
                watch: rc.watch,
            }),
            Err(e) => {
                self.registration_failed(&rc);
                let _ = rc.reply.send(Err(Error::InvalidArgument(e.to_string())));
            }
        }
    }

    /// A request that would have registered a watch is not sent after all: watches dropped
    /// on its path meanwhile are checked for removal now.
    fn registration_failed(&mut self, rc: &RequestCmd) {
        if let Some(path) = rc.watch.as_ref().and_then(WatchReg::registers) {
            for kind in self.watches.end_registration(path) {
                self.drop_watch(path, kind);
            }
        }
    }

    /// Sends a request of the session's own, whose reply nobody waits for.
    fn send_internal(&mut self, conn: &mut Connection, req: Request) {
        let xid = self.xid();
        if conn
            .codec
            .encode_with(&mut conn.wbuf, |b| req.encode(xid, b))
            .is_ok()
        {
            conn.inflight.push_back(InFlight {
                xid,
                op: req.op_code(),
                reply: None,
                watch: None,
            });
        }
    }

    fn send_close(&mut self, conn: &mut Connection, wait: Duration) -> Instant {
        self.closing = true;
        self.send_internal(conn, Request::CloseSession);
        Instant::now() + wait.max(Duration::from_millis(100))
    }

    /// Decodes every complete frame in the read buffer. Returns how many there were.
    fn read_frames(&mut self, conn: &mut Connection) -> Result<usize, Drop_> {
        let mut n = 0;
        loop {
            let frame = match conn.codec.decode_frame(&mut conn.rbuf) {
                Ok(Some(f)) => f,
                Ok(None) => return Ok(n),
                // A length over the limit or below zero: nothing after it can be trusted.
                Err(_) => return Err(Drop_::Reconnect),
            };
            n += 1;
            self.frame(conn, frame)?;
        }
    }

    fn frame(&mut self, conn: &mut Connection, frame: Bytes) -> Result<(), Drop_> {
        let mut r = Reader::new(frame);
        let header = ReplyHeader::decode(&mut r).map_err(|_| Drop_::Reconnect)?;
        match header.xid {
            xid::NOTIFICATION => {
                let event = WatcherEvent::decode(&mut r).map_err(|_| Drop_::Reconnect)?;
                // Notifications never advance lastZxidSeen: their zxid is -1.
                self.watches
                    .dispatch(event.event_type, &event.path, &self.cfg.chroot);
                Ok(())
            }
            // A server that enforces SASL answers whatever comes first with -124 and hangs
            // up; no server will take this client without credentials.
            xid::PING | xid::SET_WATCHES if header.err == SASL_REQUIRED => {
                Err(Drop_::End(End::AuthFailed))
            }
            xid::PING | xid::SET_WATCHES => Ok(()),
            xid::AUTH => {
                let waiter = self.auth_waiters.pop_front().flatten();
                if header.err == ErrorCode::AuthFailed.code() {
                    if let Some(w) = waiter {
                        let _ = w.send(Err(Error::Code(ErrorCode::AuthFailed)));
                    }
                    return Err(Drop_::End(End::AuthFailed));
                }
                if let Some(w) = waiter {
                    let _ = w.send(if header.err == 0 {
                        Ok(())
                    } else {
                        Err(Error::Code(ErrorCode::from_code(header.err)))
                    });
                }
                Ok(())
            }
            got => {
                let Some(p) = conn.inflight.pop_front() else {
                    return Err(Drop_::Reconnect);
                };
                if p.reply.is_some() {
                    conn.owed += 1;
                }
                if p.xid != got {
                    let err = Error::ProtocolViolation(format!(
                        "reply xid {got} while xid {} was the oldest pending request",
                        p.xid
                    ));
                    self.answer(p, Err(err));
                    return Err(Drop_::Reconnect);
                }
                if header.zxid > 0 {
                    self.last_zxid = self.last_zxid.max(header.zxid);
                    self.shared
                        .last_zxid
                        .store(self.last_zxid, Ordering::Relaxed);
                }
                let is_close = p.op == OpCode::CloseSession;
                let result = if header.err != 0 {
                    Err(Error::Code(ErrorCode::from_code(header.err)))
                } else {
                    match Response::decode(p.op, &mut r) {
                        Ok(resp) => Ok(resp),
                        Err(e) => {
                            self.answer(p, Err(Error::Protocol(e)));
                            return Err(Drop_::Reconnect);
                        }
                    }
                };
                if header.err == SASL_REQUIRED {
                    // Published before the caller hears of it, as for any end.
                    self.announce_end(&End::AuthFailed);
                }
                self.answer(p, result);
                if is_close {
                    return Err(Drop_::End(End::Closed));
                }
                if header.err == SASL_REQUIRED {
                    return Err(Drop_::End(End::AuthFailed));
                }
                Ok(())
            }
        }
    }

    /// Delivers a reply, registering the watch the request asked for when it succeeded.
    fn answer(&mut self, p: InFlight, result: Result<Response, Error>) {
        if let Some(w) = p.watch {
            // Watches dropped on this path while the request was in flight: checked once the
            // reply's own watch is in the table.
            let deferred = match w.registers() {
                Some(path) => {
                    let kinds = self.watches.end_registration(path);
                    (!kinds.is_empty()).then(|| (path.to_owned(), kinds))
                }
                None => None,
            };
            match w {
                WatchReg::Oneshot { path, tx } => {
                    let kind = match (p.op, &result) {
                        (OpCode::Exists, Ok(_)) | (OpCode::GetData, Ok(_)) => Some(WatchKind::Data),
                        // exists on a missing znode still leaves a watch for its creation.
                        (OpCode::Exists, Err(Error::Code(ErrorCode::NoNode))) => {
                            Some(WatchKind::Exist)
                        }
                        (OpCode::GetChildren | OpCode::GetChildren2, Ok(_)) => {
                            Some(WatchKind::Child)
                        }
                        _ => None,
                    };
                    if let Some(kind) = kind {
                        if tx.is_closed() {
                            // The caller dropped the watch while the request was in flight:
                            // the server set it, so remove it unless another watch needs it.
                            self.drop_watch(&path, kind);
                        } else {
                            self.watches.add_oneshot(kind, path, tx);
                        }
                    }
                }
                WatchReg::Stream { path, kind, tx } => {
                    if result.is_ok() {
                        if tx.is_closed() {
                            self.drop_watch(&path, kind);
                        } else {
                            self.watches.add_stream(kind, path, tx);
                        }
                    }
                }
                WatchReg::Remove { path, watcher_type } => {
                    if result.is_ok() {
                        self.watches.remove_local(&path, watcher_type);
                    }
                }
            }
            if let Some((path, kinds)) = deferred {
                for kind in kinds {
                    self.drop_watch(&path, kind);
                }
            }
        }
        if let Some(reply) = p.reply {
            let _ = reply.send(result);
        }
    }

    /// Queues the removal of a server-side watch nobody listens to any more; sent by the
    /// connection loop after the frames being read.
    fn drop_watch(&mut self, path: &str, kind: WatchKind) {
        if let Some(watcher_type) = self.watches.watch_dropped(path, kind) {
            self.removals.push(RemoveWatchesRequest {
                path: path.to_owned(),
                watcher_type,
            });
        }
    }

    fn fail_inflight(&mut self, conn: &mut Connection, err: &Error) {
        while let Some(p) = conn.inflight.pop_front() {
            let is_close = p.op == OpCode::CloseSession;
            self.answer(p, Err(err.clone()));
            let _ = is_close;
        }
        while let Some(w) = self.auth_waiters.pop_front() {
            if let Some(w) = w {
                let _ = w.send(Err(err.clone()));
            }
        }
    }

    // ----- ended -----

    /// Tells everyone the session is over, then answers commands until every handle is gone.
    /// Publishes the state the session ends in, once.
    fn announce_end(&self, end: &End) {
        let (state, event) = match end {
            End::Expired => (SessionState::Expired, SessionEvent::Expired),
            End::AuthFailed => (SessionState::AuthFailed, SessionEvent::AuthFailed),
            End::Closed => (SessionState::Closed, SessionEvent::Closed),
        };
        if self.shared.publisher.state() != state {
            self.publish(state, event);
        }
    }

    async fn finish(mut self, end: End) {
        let err = end.error();
        self.announce_end(&end);
        self.watches.fail_all(&err);
        for rc in self.waiting.drain(..) {
            let _ = rc.reply.send(Err(err.clone()));
        }
        for (_, _, w) in self.auths.iter_mut() {
            if let Some(w) = w.take() {
                let _ = w.send(Err(err.clone()));
            }
        }
        for w in self.close_waiters.drain(..) {
            let _ = w.send(());
        }
        while let Some(cmd) = self.rx.recv().await {
            match cmd {
                Command::Request(rc) => {
                    if let Some(WatchReg::Oneshot { tx, .. }) = rc.watch {
                        let _ = tx.send(Err(err.clone()));
                    }
                    let _ = rc.reply.send(Err(err.clone()));
                }
                Command::AddAuth { reply, .. } => {
                    let _ = reply.send(Err(err.clone()));
                }
                Command::WatchDropped { .. } => {}
                Command::Close { reply } => {
                    let _ = reply.send(());
                }
            }
        }
    }
}
