//! The session core: the whole state machine of one ZooKeeper session as a plain value, with
//! no sockets, no clock and no randomness of its own.
//!
//! A driver (the tokio task in [`driver`](crate::driver), or a unit test) feeds it inputs —
//! commands from the handle, "connected to host i" with the connect response, bytes read,
//! "disconnected", "now" — and takes its outputs: bytes to write ([`SessionCore::transmit`]),
//! actions ([`SessionCore::poll_action`]: connect to a host, drop the connection, probe for a
//! read-write server) and the next deadline ([`SessionCore::poll_timeout`]). Replies, watch
//! events and state changes go straight out on the channels the core holds.
//!
//! Call order: after every input, write out [`transmit`](SessionCore::transmit), run every
//! action, and sleep until [`poll_timeout`](SessionCore::poll_timeout), then call
//! [`handle_timeout`](SessionCore::handle_timeout) with the time. Calling `handle_timeout`
//! early is harmless: every deadline is checked against the `now` given.
//!
//! Architecture invariant: every request and auth packet taken is answered exactly once, by
//! its reply, by the end of its connection or by the end of the session.

mod auth;
mod commands;
mod expiry;
mod mixed_watches;
mod reconnect;
mod requests;
mod timers;

#[cfg(test)]
mod tests;

use std::{
    collections::VecDeque,
    sync::{
        atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use bytes::{Bytes, BytesMut};
use tokio::{sync::oneshot, time::Instant};
use zk_proto::{ConnectRequest, ErrorCode, FrameCodec};

use crate::{
    chroot::Chroot,
    connection::SaslOption,
    state::{EndReason, SessionEvent, SessionState, StatePublisher},
    trace,
    transport::Security,
    watch_table::WatchTable,
    Error,
};

use self::{auth::Auths, requests::Requests, timers::Timers};

/// Settings the session needs, fixed at build time. `Debug` (in redact.rs) hides
/// credentials.
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
    /// Create a new session when the ensemble expires the one the client had.
    pub new_session_on_expiry: bool,
    /// SASL on every new connection; the driver hands it to `connection::connect`, the core
    /// only hears whether it failed.
    pub sasl: SaslOption,
    /// Plain TCP or TLS, for every server and every reconnect (the driver's business too).
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
    /// True once the session is over for good (set before the final state is published).
    pub ended: AtomicBool,
}

impl Shared {
    pub fn new() -> Self {
        Shared {
            publisher: StatePublisher::new(),
            session_id: AtomicI64::new(0),
            negotiated_timeout_ms: AtomicU64::new(0),
            last_zxid: AtomicI64::new(0),
            passwd: Mutex::new(Bytes::new()),
            last_connect_error: Mutex::new(None),
            server: Mutex::new(None),
            ended: AtomicBool::new(false),
        }
    }
}

/// Why the session ended for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
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

    /// The one place that maps how the core ends to what the handle sees.
    fn state(self) -> (SessionState, SessionEvent) {
        let reason = match self {
            End::Expired => EndReason::SessionExpired,
            End::AuthFailed => EndReason::AuthFailed,
            End::Closed => EndReason::Closed,
        };
        (SessionState::Ended(reason), SessionEvent::Ended(reason))
    }
}

/// Why a connection ends.
#[derive(Debug)]
pub(crate) enum Drop_ {
    /// Try another server (or the same one) with the same session.
    Reconnect,
    /// The session is over.
    End(End),
}

/// What the driver must do for the core.
#[derive(Debug, PartialEq)]
pub(crate) enum Action {
    /// Open a connection to `hosts[host]` and shake hands with `request` (then SASL, if
    /// configured, numbering its packets from `xid`), within `timeout`; then call
    /// [`SessionCore::handle_connected`], [`SessionCore::handle_connect_failed`] or, when the
    /// server refused the credentials, [`SessionCore::handle_auth_failed`].
    Connect {
        host: usize,
        request: ConnectRequest,
        xid: i32,
        timeout: Duration,
    },
    /// Close the current connection (and stop any read-write probe).
    Disconnect,
    /// Look for a read-write server other than `skip`; report it with
    /// [`SessionCore::handle_read_write_found`].
    ProbeReadWrite { skip: usize },
}

/// Where the session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting until `until` before connecting to `host`.
    Backoff { host: usize, until: Instant },
    /// A connection attempt to `host` is under way.
    Connecting { host: usize },
    /// Connected to `host` since `since`.
    Connected { host: usize, since: Instant },
    /// Over; commands are answered with the end's error.
    Ended(End),
}

/// Write buffer size above which no more commands are taken until the socket drains, so a
/// server that stops reading cannot make us buffer without bound.
pub(crate) const WRITE_HIGH_WATER: usize = 4 * 1024 * 1024;

/// The session state machine; see the module documentation.
pub(crate) struct SessionCore {
    cfg: Config,
    shared: Arc<Shared>,
    phase: Phase,
    pub(super) session_id: i64,
    passwd: Bytes,
    /// The negotiated timeout once connected, the requested one before.
    timeout: Duration,
    last_zxid: i64,
    requests: Requests,
    watches: WatchTable,
    auths: Auths,
    timers: Timers,
    reconnect: reconnect::HostCycle,
    /// The bytes to write on the current connection.
    wbuf: BytesMut,
    codec: FrameCodec,
    actions: VecDeque<Action>,
    ever_connected: bool,
    /// A session made by a read-only server is not valid on the quorum: until a read-write
    /// server has been seen, connect with session id 0 (as the reference client does).
    seen_rw_server: bool,
    /// Answered once the session is closed.
    close_waiters: Vec<oneshot::Sender<()>>,
    /// A closeSession was sent: a connection that drops now ends the session instead of
    /// resuming it, as the Java client does (the server expires it if the close never came).
    closing: bool,
    /// Callers answered whose next request has not been taken yet (an estimate the driver
    /// uses to batch writes).
    pub owed: usize,
}

impl SessionCore {
    /// A session that connects to `cfg.hosts` in the order given; `seed` drives the jitter
    /// of the reconnect backoff.
    pub fn new(cfg: Config, shared: Arc<Shared>, seed: u64, now: Instant) -> Self {
        let (session_id, passwd) = cfg
            .resume
            .clone()
            .unwrap_or((0, Bytes::from_static(&[0u8; 16])));
        let mut core = SessionCore {
            seen_rw_server: cfg.resume.is_some(),
            session_id,
            passwd,
            timeout: cfg.session_timeout,
            auths: Auths::new(&cfg.auths),
            codec: FrameCodec::with_max_frame_len(cfg.max_frame_len),
            cfg,
            shared,
            phase: Phase::Ended(End::Closed),
            last_zxid: 0,
            requests: Requests::new(),
            watches: WatchTable::default(),
            timers: Timers::new(now),
            reconnect: reconnect::HostCycle::new(seed),
            wbuf: BytesMut::with_capacity(64 * 1024),
            actions: VecDeque::new(),
            ever_connected: false,
            close_waiters: Vec::new(),
            closing: false,
            owed: 0,
        };
        core.next_attempt(now);
        core
    }

    /// Where the session stands.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The next thing the driver must do, if any.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The bytes to write on the current connection; the driver takes what it wrote.
    pub fn transmit(&mut self) -> &mut BytesMut {
        &mut self.wbuf
    }

    /// Whether the driver should take more commands now: not while the write buffer is over
    /// its high-water mark or a close is under way.
    pub fn wants_commands(&self) -> bool {
        match self.phase {
            Phase::Connected { .. } => self.wbuf.len() < WRITE_HIGH_WATER && !self.closing,
            _ => true,
        }
    }

    /// The next time [`handle_timeout`](Self::handle_timeout) has something to do.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let first_wait = if self.ever_connected {
            None
        } else {
            self.requests.oldest_waiting().map(|t| t + self.timeout)
        };
        match self.phase {
            Phase::Connected { .. } => self.timers.connected_deadline(self.wbuf.is_empty()),
            Phase::Backoff { until, .. } => {
                min_opt(Some(until), self.timers.disconnected_deadline(first_wait))
            }
            Phase::Connecting { .. } => self.timers.disconnected_deadline(first_wait),
            Phase::Ended(_) => None,
        }
    }

    /// Does whatever is due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        match self.phase {
            Phase::Connected { .. } => {
                if self.timers.close_at.is_some_and(|d| now >= d) {
                    self.connection_ended(Drop_::End(End::Closed), now);
                } else if self.timers.read_timed_out(now) {
                    self.connection_ended(Drop_::Reconnect, now);
                } else if self.wbuf.is_empty() && self.timers.ping_due(now) {
                    self.send_ping(now);
                }
            }
            Phase::Backoff { host, until } => {
                self.check_lost(now);
                if now >= until {
                    self.start_attempt(host);
                }
            }
            Phase::Connecting { .. } => self.check_lost(now),
            Phase::Ended(_) => {}
        }
        if !self.ever_connected {
            self.fail_overdue_waiting(now);
        }
    }

    /// The driver wrote some of [`transmit`](Self::transmit) at `now`.
    pub fn handle_written(&mut self, now: Instant) {
        self.timers.last_send = now;
    }

    /// True once the session is over for good.
    pub fn is_ended(&self) -> bool {
        matches!(self.phase, Phase::Ended(_))
    }

    /// Every change of state goes through here, so this is where it is logged.
    fn publish(&self, state: SessionState, event: SessionEvent) {
        trace::info!(
            session_id = %trace::SessionId(self.session_id),
            ?state,
            ?event,
            "session state changed"
        );
        self.shared.publisher.publish(state, event);
    }

    fn lock_set<T>(m: &Mutex<T>, v: T) {
        *m.lock().unwrap_or_else(|e| e.into_inner()) = v;
    }

    /// Ends the session: tells everyone, answers everything still waiting.
    fn end(&mut self, end: End) {
        if self.is_ended() {
            return;
        }
        if matches!(self.phase, Phase::Connected { .. }) {
            self.actions.push_back(Action::Disconnect);
        }
        self.phase = Phase::Ended(end);
        self.announce_end(end);
        let err = end.error();
        self.requests.fail_all(&mut self.watches, &err);
        self.watches.fail_all(&err);
        self.auths.fail_all(&err);
        for w in self.close_waiters.drain(..) {
            let _ = w.send(());
        }
        self.wbuf.clear();
    }

    /// Publishes the state the session ends in, once.
    fn announce_end(&self, end: End) {
        // Before the state: whoever sees the final state must also see that it is final.
        self.shared.ended.store(true, Ordering::Release);
        let (state, event) = end.state();
        if self.shared.publisher.state() != state {
            self.publish(state, event);
        }
    }
}

fn min_opt(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}
