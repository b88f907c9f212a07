//! The session core: the whole state machine of one ZooKeeper session as a plain value, with
//! no sockets, no clock and no randomness of its own.
//!
//! Its [`Phase`] is the one source of truth: backing off, connecting (the driver opens a
//! stream), handshaking (connect request, ConnectResponse, SASL), connected, ended; with
//! [`Away`] (how it stands without a connection) it makes the state the core publishes
//! ([`SessionCore::state`]). The core holds no channel and nothing shared: what it tells
//! callers and the handle comes out as values ([`Output`]).
//!
//! A driver (the tokio task in [`driver`](crate::driver), or a unit test) feeds it inputs —
//! commands from the handle, "the stream to host i is open", bytes read (the handshake's
//! frames as well as replies), "disconnected", "now" — and takes its outputs: bytes to write
//! ([`SessionCore::transmit`]), actions ([`SessionCore::poll_action`]: open a stream to a
//! host, drop the connection, probe for a read-write server), outputs
//! ([`SessionCore::poll_output`]: replies, watch events, state changes, in the order they
//! happened) and the next deadline ([`SessionCore::poll_timeout`]). Callers are named by
//! keys ([`Key`], [`WatchId`]); the driver keeps their channels.
//!
//! Call order: after every input, apply every output, write out
//! [`transmit`](SessionCore::transmit), run every action, and sleep until
//! [`poll_timeout`](SessionCore::poll_timeout), then call
//! [`handle_timeout`](SessionCore::handle_timeout) with the time. Calling `handle_timeout`
//! early is harmless: every deadline is checked against the `now` given.
//!
//! Architecture invariant: every request and auth packet taken is answered exactly once, by
//! its reply, by the end of its connection or by the end of the session.

mod auth;
mod commands;
mod expiry;
mod handshake;
mod mixed_watches;
mod output;
mod rebalance;
mod reconnect;
mod requests;
mod server_list;
mod timers;
pub(crate) mod watch_table;

#[cfg(test)]
mod tests;

use std::{collections::VecDeque, time::Duration};

use bytes::{Bytes, BytesMut};
use std::time::Instant;
use zk_proto::{ConnectRequest, ErrorCode, FrameCodec};

pub(crate) use self::output::{Key, Output, View, WatchId};
use crate::{
    chroot::Chroot,
    command::Keys,
    connect_error::ConnectFailure,
    security::SaslOption,
    security::Security,
    state::{EndReason, SessionEvent, SessionState},
    trace, Error,
};

/// A command as the core takes it: callers named by keys.
pub(crate) type Command = crate::command::Command<Keys>;
/// A request as the core takes it.
pub(crate) type RequestCmd = crate::command::RequestCmd<Keys>;
/// A watch registration as the core takes it.
pub(crate) type WatchReg = crate::command::WatchReg<Keys>;

use self::{auth::Auths, requests::Requests, timers::Timers, watch_table::WatchTable};

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
    /// Before the first connection, give up (tell `connect`) once every server refused.
    pub fail_fast_on_refusal: bool,
    /// SASL on every new connection, run by the core between the ConnectResponse and
    /// anything else.
    pub sasl: SaslOption,
    /// Plain TCP or TLS, for every server and every reconnect (the driver's business too).
    pub security: Security,
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
    /// Open a stream to `hosts[host]` (TCP, then TLS when configured); then call
    /// [`SessionCore::handle_stream_opened`] or [`SessionCore::handle_connect_failed`]. The
    /// core writes `request` and runs the rest of the handshake itself, and gives up on the
    /// attempt (with a [`Disconnect`](Action::Disconnect)) after `timeout`; the driver only
    /// logs them.
    Connect {
        host: usize,
        request: ConnectRequest,
        timeout: Duration,
    },
    /// Close the current connection or give up the current attempt (and stop any
    /// read-write probe).
    Disconnect,
    /// Look for a read-write server other than `skip`; report it with
    /// [`SessionCore::handle_read_write_found`].
    ProbeReadWrite { skip: usize },
    /// Ask `hosts[host]` whether it answers in plain (a four-letter word); report with
    /// [`SessionCore::handle_tls_probe`].
    ProbeTls { host: usize },
    /// Run a SASL mechanism's call (on the blocking pool when it
    /// [`blocks`](crate::sasl::SaslWork::blocks)) and hand its end to
    /// [`SessionCore::handle_sasl_done`] with `attempt`.
    #[cfg(feature = "sasl")]
    Sasl {
        attempt: u64,
        work: crate::sasl::SaslWork,
    },
    /// The server list is now this: host indices in later actions refer to it.
    ServerList(Vec<(String, u16)>),
}

/// Where the session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting until `until` before connecting to `host`.
    Backoff { host: usize, until: Instant },
    /// A connection attempt to `host` is under way.
    Connecting { host: usize },
    /// The stream to `host` is open: the connect request is out, and the handshake (the
    /// connect response, then SASL when configured) is under way.
    Handshaking { host: usize },
    /// Connected to `host` since `since`, to a read-only server if `read_only`.
    Connected {
        host: usize,
        since: Instant,
        read_only: bool,
    },
    /// Over; commands are answered with the end's error.
    Ended(End),
}

/// How the session stands while it has no connection; with [`Phase`] it makes the state the
/// core publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Away {
    /// No connection yet (or yet for the session that replaces an expired one).
    FirstConnect,
    /// The connection dropped; the session may live.
    Suspended,
    /// No connection for the whole session timeout.
    Lost,
    /// The ensemble expired the session; a new one is being made.
    Expired,
}

/// Write buffer size above which no more commands are taken until the socket drains, so a
/// server that stops reading cannot make us buffer without bound.
// Only the async driver buffers writes; the blocking one writes as its callers go.
#[cfg_attr(not(feature = "tokio"), allow(dead_code))]
pub(crate) const WRITE_HIGH_WATER: usize = 4 * 1024 * 1024;
/// Write room an idle session keeps: it writes a 12-byte ping every few seconds, and with
/// thousands of sessions in a process every idle KiB counts (the buffer grows on demand).
const IDLE_WRITE_ROOM: usize = 1024;

/// The session state machine; see the module documentation.
pub(crate) struct SessionCore {
    cfg: Config,
    phase: Phase,
    away: Away,
    pub(super) session_id: i64,
    passwd: Bytes,
    /// The negotiated timeout once connected, the requested one before.
    timeout: Duration,
    /// The timeout the last handshake granted.
    negotiated: Option<Duration>,
    last_zxid: i64,
    requests: Requests,
    watches: WatchTable,
    auths: Auths,
    timers: Timers,
    /// How far the handshake is, in [`Phase::Handshaking`].
    handshake: handshake::Handshake,
    /// Some byte came on the current handshake's stream.
    handshake_heard: bool,
    /// Counts the streams opened, so that the end of work done for an attempt that is over
    /// is known as such.
    attempt_no: u64,
    reconnect: reconnect::HostCycle,
    /// The bytes to write on the current connection.
    wbuf: BytesMut,
    codec: FrameCodec,
    actions: VecDeque<Action>,
    /// What the driver applies: answers, events, states, in order.
    out: VecDeque<Output>,
    ever_connected: bool,
    /// A session made by a read-only server is not valid on the quorum: until a read-write
    /// server has been seen, connect with session id 0 (as the reference client does).
    seen_rw_server: bool,
    /// Answered once the session is closed.
    close_waiters: Vec<Key>,
    /// A closeSession was sent, or is due once a handshake is over (every handle went during
    /// it, or while the client reconnected): a connection that drops after the close went
    /// out ends the session instead of resuming it, as the Java client does (the server
    /// expires it if the close never came).
    closing: bool,
    /// Every handle is gone: nobody waits for a close, so one that a dropped connection
    /// kept from the server is tried again on a new one (`closes_on_reconnect`).
    handles_gone: bool,
    /// Callers answered whose next request has not been taken yet (an estimate the driver
    /// asks for through [`SessionCore::expects_commands`] to batch writes).
    owed: usize,
}

impl SessionCore {
    /// A session that connects to `cfg.hosts` in the order given; `seed` drives the jitter
    /// of the reconnect backoff.
    pub fn new(cfg: Config, seed: u64, now: Instant) -> Self {
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
            phase: Phase::Ended(End::Closed),
            away: Away::FirstConnect,
            negotiated: None,
            last_zxid: 0,
            requests: Requests::new(),
            watches: WatchTable::default(),
            timers: Timers::new(now),
            handshake: handshake::Handshake::Response,
            handshake_heard: false,
            attempt_no: 0,
            reconnect: reconnect::HostCycle::new(seed),
            wbuf: BytesMut::new(),
            actions: VecDeque::new(),
            out: VecDeque::new(),
            ever_connected: false,
            close_waiters: Vec::new(),
            closing: false,
            handles_gone: false,
            owed: 0,
        };
        core.next_attempt(now);
        core
    }

    /// Where the session stands.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Whether [`poll_action`](Self::poll_action) has something.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub fn has_actions(&self) -> bool {
        !self.actions.is_empty()
    }

    /// The next thing the driver must do, if any.
    pub fn poll_action(&mut self) -> Option<Action> {
        let action = self.actions.pop_front();
        if action.is_some() && self.actions.is_empty() {
            // Actions come a few per connection: an idle session keeps no room for them.
            self.actions = VecDeque::new();
        }
        action
    }

    /// The next thing to tell a caller or the handle, in the order it happened: the driver
    /// applies every output after every input, before anything else.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// The highest zxid seen so far (for the handle; read after each input).
    pub fn last_zxid(&self) -> i64 {
        self.last_zxid
    }

    /// The bytes to write on the current connection; the driver takes what it wrote.
    pub fn transmit(&mut self) -> &mut BytesMut {
        &mut self.wbuf
    }

    /// Whether the driver should take more commands now: not while the write buffer is over
    /// its high-water mark or a close is under way.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
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
            Phase::Connecting { .. } | Phase::Handshaking { .. } => min_opt(
                self.timers.attempt_until,
                self.timers.disconnected_deadline(first_wait),
            ),
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
                    // Idle for a ping period: give back the room a burst of requests grew.
                    if self.wbuf.capacity() > IDLE_WRITE_ROOM {
                        self.wbuf = BytesMut::new();
                    }
                    self.send_ping(now);
                }
            }
            Phase::Backoff { host, until } => {
                self.check_lost(now);
                // Lost may end a session that only waited to be closed.
                if now >= until && !self.is_ended() {
                    self.start_attempt(host, now);
                }
            }
            Phase::Connecting { host } | Phase::Handshaking { host } => {
                self.check_lost(now);
                if self.timers.attempt_until.is_some_and(|t| now >= t) {
                    self.attempt_failed(host, ConnectFailure::Timeout, now);
                }
            }
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

    /// The state the handle sees, derived from the phase (and, without a connection, from
    /// how the session stands).
    pub fn state(&self) -> SessionState {
        match self.phase {
            Phase::Connected {
                read_only: true, ..
            } => SessionState::ConnectedReadOnly,
            Phase::Connected { .. } => SessionState::Connected,
            Phase::Ended(end) => end.state().0,
            Phase::Backoff { .. } | Phase::Connecting { .. } | Phase::Handshaking { .. } => {
                match self.away {
                    Away::FirstConnect => SessionState::Connecting,
                    Away::Suspended => SessionState::Suspended,
                    Away::Lost => SessionState::Lost,
                    Away::Expired => SessionState::Expired,
                }
            }
        }
    }

    /// Every change of state goes through here, so this is where it is logged: publishes
    /// [`state`](Self::state) with `event`, and what the handle reads beside it.
    fn publish(&mut self, event: SessionEvent) {
        self.publish_view(Some(event));
    }

    // Without the `tracing` feature the log line, the only reader of `event`, is compiled out.
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    fn publish_view(&mut self, event: Option<SessionEvent>) {
        let state = self.state();
        if let Some(event) = event {
            trace::info!(
                session_id = %trace::SessionId(self.session_id),
                ?state,
                event = %trace::EventName(event),
                "session state changed"
            );
            let _ = event; // Only the log reads it (none without the `tracing` feature).
        }
        let server = match self.phase {
            Phase::Connected { host, .. } => {
                let (h, p) = &self.cfg.hosts[host];
                Some(format!("{h}:{p}"))
            }
            _ => None,
        };
        // An expired session is no session, until the next one is made.
        let expired = self.away == Away::Expired && !matches!(self.phase, Phase::Connected { .. });
        self.out.push_back(Output::Publish(View {
            state,
            event,
            session_id: if expired { 0 } else { self.session_id },
            passwd: self.passwd.clone(),
            negotiated_timeout: self.negotiated,
            server,
            ended: self.is_ended(),
        }));
    }

    /// Whether callers just answered are likely to send their next request soon: then the
    /// driver waits a moment for it, so that one write carries many requests.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub fn expects_commands(&self) -> bool {
        self.owed > 0
    }

    /// The driver found no command after waiting for the callers just answered: they had
    /// nothing more to send.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub fn handle_commands_drained(&mut self) {
        self.owed = 0;
    }

    /// Ends the session: tells everyone, answers everything still waiting.
    fn end(&mut self, end: End) {
        if self.is_ended() {
            return;
        }
        if matches!(
            self.phase,
            Phase::Connected { .. } | Phase::Handshaking { .. } | Phase::Connecting { .. }
        ) {
            self.actions.push_back(Action::Disconnect);
        }
        // Published before anyone hears the error, so that a caller who looks at the state
        // on getting it sees why; once (an expired session may end as expired).
        let before = self.state();
        self.phase = Phase::Ended(end);
        let changed = self.state() != before;
        self.publish_view(changed.then_some(end.state().1));
        let err = end.error();
        self.requests.fail_all(&err, &mut self.out);
        self.watches.fail_all(&err, &mut self.out);
        self.auths.fail_all(&err, &mut self.out);
        for to in self.close_waiters.drain(..) {
            self.out.push_back(Output::Done { to });
        }
        self.wbuf.clear();
    }
}

fn min_opt(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}
