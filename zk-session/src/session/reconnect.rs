//! Finding a server: host order, backoff, the handshake, and the replay of auth, watches and
//! waiting requests on a new connection; and what happens when a connection ends.

use std::time::Duration;

use bytes::Bytes;
use rand::{rngs::SmallRng, SeedableRng};
use std::time::Instant;
use zk_proto::{xid, ConnectRequest, ConnectResponse};

use super::{requests, Action, Away, Drop_, End, Output, Phase, SessionCore};
use crate::{
    backoff::Backoff, connect_error::ConnectFailure, state::SessionEvent, trace, ConnectError,
    Error, SessionId,
};

/// A connection that ends sooner than this after its handshake counts as a quick drop: the
/// next reconnection waits a backoff that grows with the run of quick drops, so a server that
/// accepts the session and hangs up at once does not get a reconnect storm.
const QUICK_DROP: Duration = Duration::from_secs(1);

/// Where the next connection attempt goes, and how long to wait before it.
#[derive(Debug)]
pub(super) struct HostCycle {
    pub next_host: usize,
    /// Failed attempts in the current pass over the hosts.
    failures_in_cycle: usize,
    /// Those of them that retrying will not fix.
    permanent_in_cycle: usize,
    /// Those of them that were refusals (nothing listening), with their errors.
    refusals: Vec<ConnectError>,
    /// Passes over every host that all failed (plus the quick drops before them).
    cycles: u32,
    /// Connections in a row that ended within [`QUICK_DROP`] of their handshake.
    quick_drops: u32,
    /// The backoff's jitter (seeded by the driver, so tests are repeatable).
    rng: SmallRng,
}

impl HostCycle {
    /// The connection was dropped on purpose: no backoff before the next attempt.
    pub fn planned_move(&mut self) {
        self.quick_drops = 0;
        self.cycles = 0;
        self.failures_in_cycle = 0;
        self.refusals.clear();
    }

    /// The session's generator, for choices other than the backoff's.
    pub fn rng(&mut self) -> &mut SmallRng {
        &mut self.rng
    }

    pub fn new(seed: u64) -> Self {
        HostCycle {
            next_host: 0,
            failures_in_cycle: 0,
            permanent_in_cycle: 0,
            refusals: Vec::new(),
            cycles: 0,
            quick_drops: 0,
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl SessionCore {
    /// Picks the next host, and connects to it now or after a backoff.
    pub(super) fn next_attempt(&mut self, now: Instant) {
        let n = self.cfg.hosts.len();
        let c = &mut self.reconnect;
        let host = c.next_host % n;
        c.next_host = (host + 1) % n;
        let backoff = if c.failures_in_cycle == 0 && c.cycles > 0 {
            Backoff::new(self.cfg.backoff_base, self.cfg.backoff_max)
                .delay_with(c.cycles, &mut c.rng)
        } else {
            Duration::ZERO
        };
        if backoff.is_zero() {
            self.start_attempt(host, now);
        } else {
            trace::debug!(
                server = %trace::Server(&self.cfg.hosts[host]),
                backoff_ms = backoff.as_millis() as u64,
                "waiting before the next connection attempt"
            );
            self.phase = Phase::Backoff {
                host,
                until: now + backoff,
            };
        }
    }

    /// The connect request of the next attempt.
    pub(super) fn connect_request(&self) -> ConnectRequest {
        let (session_id, passwd) = if self.seen_rw_server {
            (self.session_id, self.passwd.clone())
        } else {
            (0, Bytes::from_static(&[0u8; 16]))
        };
        ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: self.last_zxid,
            timeout: self.cfg.session_timeout.as_millis().min(i32::MAX as u128) as i32,
            session_id,
            passwd,
            read_only: self.cfg.read_only,
        }
    }

    pub(super) fn start_attempt(&mut self, host: usize, now: Instant) {
        // The reference client splits the session timeout over the hosts; we split it in at
        // least three, so that a server that accepts and never answers (3.8.0 leaves a
        // connection made during its start-up that way) leaves time for another try before
        // the session expires, even with a single host.
        let n = self.cfg.hosts.len();
        let timeout = self
            .cfg
            .connect_timeout
            .unwrap_or_else(|| (self.timeout / n.max(3) as u32).max(Duration::from_millis(500)));
        // The driver tells of the attempt ("connecting"), inside the attempt's span.
        self.phase = Phase::Connecting { host };
        self.timers.attempt_until = now.checked_add(timeout);
        self.actions.push_back(Action::Connect {
            host,
            request: self.connect_request(),
            timeout,
        });
    }

    /// The driver could not open a stream to `host` for the current attempt.
    pub fn handle_connect_failed(&mut self, host: usize, failure: ConnectFailure, now: Instant) {
        self.attempt_failed(host, failure, now);
    }

    /// The current attempt, to `host`, failed: the next server is tried, unless the server
    /// refused the credentials (SASL). Those would fail on every server, so the session ends
    /// as AuthFailed then, without trying another.
    pub(super) fn attempt_failed(&mut self, host: usize, failure: ConnectFailure, now: Instant) {
        match self.phase {
            Phase::Connecting { host: h } | Phase::Handshaking { host: h } if h == host => {}
            _ => return,
        }
        let (h, p) = &self.cfg.hosts[host];
        let permanent = failure.is_permanent();
        let refused = failure.is_refusal();
        let error = failure.at(format!("{h}:{p}"));
        #[cfg(feature = "tracing")]
        let reason = error.to_string();
        self.out.push_back(Output::AttemptFailed(error.clone()));
        self.timers.attempt_until = None;
        self.wbuf.clear();
        if let ConnectError::AuthFailed { .. } = error {
            trace::warn!(
                server = %trace::Server(&self.cfg.hosts[host]),
                reason,
                "authentication failed: the session ends"
            );
            return self.end(End::AuthFailed);
        }
        // Every handle went: another attempt only for a session there is to close.
        if self.closing && !self.closes_on_reconnect() {
            return self.end(End::Closed);
        }
        trace::debug!(server = %trace::Server(&self.cfg.hosts[host]), reason, "connect failed");
        self.actions.push_back(Action::Disconnect);
        let c = &mut self.reconnect;
        c.failures_in_cycle += 1;
        c.permanent_in_cycle += usize::from(permanent);
        if refused {
            c.refusals.push(error.clone());
        }
        if c.failures_in_cycle >= self.cfg.hosts.len() {
            let hopeless = c.permanent_in_cycle >= c.failures_in_cycle;
            let all_refused = c.refusals.len() >= c.failures_in_cycle;
            let refusals = std::mem::take(&mut c.refusals);
            c.failures_in_cycle = 0;
            c.permanent_in_cycle = 0;
            c.cycles += 1;
            // The client keeps trying (a built client may wait for a fix), but a caller of
            // `connect` hears of it now.
            if let (true, false, ConnectError::Tls(e)) = (hopeless, self.ever_connected, &error) {
                self.out.push_back(Output::Hopeless(Error::Tls(e.clone())));
            } else if all_refused && !self.ever_connected && self.cfg.fail_fast_on_refusal {
                self.out
                    .push_back(Output::Hopeless(Error::ConnectRefused { errors: refusals }));
            }
            trace::warn!(
                servers = self.cfg.hosts.len(),
                passes = c.cycles,
                last_server = %trace::Server(&self.cfg.hosts[host]),
                reason,
                "connect failed on every server"
            );
        }
        self.next_attempt(now);
    }

    /// Records a successful handshake and announces it.
    pub(super) fn established(&mut self, r: &ConnectResponse, host: usize, now: Instant) {
        let same_session = self.ever_connected && r.session_id == self.session_id;
        trace::info!(
            server = %trace::Server(&self.cfg.hosts[host]),
            session_id = %trace::SessionId(r.session_id),
            timeout_ms = r.timeout,
            read_only = r.read_only,
            new_session = !same_session,
            after_expiry = self.away == Away::Expired,
            "connected"
        );
        if !r.read_only {
            self.seen_rw_server = true;
        }
        self.session_id = r.session_id;
        self.out.push_back(Output::Established {
            session_id: r.session_id,
        });
        self.passwd = r.passwd.clone();
        self.timeout = Duration::from_millis(r.timeout as u64);
        self.negotiated = Some(self.timeout);
        self.ever_connected = true;
        self.phase = Phase::Connected {
            host,
            since: now,
            read_only: r.read_only,
        };
        self.timers.connected(self.timeout, now);
        // The next attempt after a drop starts with the next server in the list.
        self.reconnect.next_host = (host + 1) % self.cfg.hosts.len();
        // Read-only is announced as such even for the same session (Curator's READ_ONLY): a
        // listener must not take it for a session that can write again.
        let event = match SessionId::new(r.session_id) {
            Some(session_id) if r.read_only => SessionEvent::ConnectedReadOnly { session_id },
            _ if same_session => SessionEvent::Reconnected,
            Some(session_id) => SessionEvent::Connected { session_id },
            // A server that grants session 0 breaks the protocol; the handshake's timeout
            // still says the session is alive, so it is told as a reconnect.
            None => SessionEvent::Reconnected,
        };
        self.publish(event);
    }

    /// Reconnect order: auth packets, then watches, then the requests that waited.
    pub(super) fn replay(&mut self) {
        self.auths
            .resend(&self.codec, &mut self.wbuf, &mut self.out);
        // set_watches sizes every batch to fit the frame limit, so none fails to encode.
        let max = self.codec.max_frame_len();
        for req in self.watches.set_watches(self.last_zxid, max, &mut self.out) {
            let _ = self
                .codec
                .encode_with(&mut self.wbuf, |b| req.encode(xid::SET_WATCHES, b));
        }
        while let Some(w) = self.requests.waiting.pop_front() {
            self.send(w.cmd);
        }
    }

    /// The server closed the stream.
    pub fn handle_disconnected(&mut self, now: Instant) {
        match self.phase {
            Phase::Handshaking { host } => self.handshake_hung_up(host, now),
            _ => self.connection_ended(Drop_::Reconnect, now),
        }
    }

    /// Reading or writing the stream failed with `error`.
    pub fn handle_io_error(&mut self, error: std::io::Error, now: Instant) {
        match self.phase {
            Phase::Handshaking { host } => {
                self.attempt_failed(host, ConnectFailure::Io(error), now)
            }
            _ => self.connection_ended(Drop_::Reconnect, now),
        }
    }

    /// The read-write probe found `host` serving writes: move there.
    pub fn handle_read_write_found(&mut self, host: usize, now: Instant) {
        if matches!(self.phase, Phase::Connected { .. }) {
            self.reconnect.next_host = host;
            self.connection_ended(Drop_::Reconnect, now);
        }
    }

    /// The current connection is over: answers what was in flight on it, then reconnects or
    /// ends the session.
    pub(super) fn connection_ended(&mut self, why: Drop_, now: Instant) {
        let Phase::Connected { since, host, .. } = self.phase else {
            return;
        };
        trace::debug!(
            server = %trace::Server(&self.cfg.hosts[host]),
            session_id = %trace::SessionId(self.session_id),
            reconnect = matches!(why, Drop_::Reconnect),
            "connection ended"
        );
        let _ = host; // Only the log reads it (none without the `tracing` feature).
        let why = match why {
            // A close of the user's is not retried (they wait for it); with every handle
            // gone, the close goes out again on the next connection.
            Drop_::Reconnect if self.closing && !self.closes_on_reconnect() => {
                Drop_::End(End::Closed)
            }
            w => w,
        };
        if let Drop_::End(e) = why {
            // Published first, then everything in flight answered with the end's error.
            self.end(e);
            return;
        }
        self.actions.push_back(Action::Disconnect);
        let c = &mut self.reconnect;
        c.quick_drops = if now.saturating_duration_since(since) < QUICK_DROP {
            c.quick_drops.saturating_add(1)
        } else {
            0
        };
        c.cycles = c.quick_drops;
        c.failures_in_cycle = 0;
        c.permanent_in_cycle = 0;
        c.refusals.clear();
        // Not connected from here on: nothing is sent on a dead connection. The state
        // changes before the callers hear of it, so that one who looks at the state on
        // getting the error sees why.
        self.phase = Phase::Connecting { host: usize::MAX };
        self.away = Away::Suspended;
        self.publish(SessionEvent::Suspended);
        self.wbuf.clear();
        self.fail_inflight(&Error::connection_loss());
        self.watches.connection_ended();
        self.timers.lost_at = Some(now + self.timeout);
        self.next_attempt(now);
    }

    /// No connection for the whole session timeout: the session is presumed lost.
    pub(super) fn check_lost(&mut self, now: Instant) {
        if self.timers.lost_at.is_none_or(|t| now < t) {
            return;
        }
        self.timers.lost_at = None;
        if self.closing {
            // Nobody is left to hear of it, and the session that was to be closed has
            // expired by now, or is about to.
            return self.end(End::Closed);
        }
        self.away = Away::Lost;
        self.publish(SessionEvent::Lost);
        // The wait for a reconnect ends here: without it, a request with no timeout would
        // wait for as long as no server answers.
        self.requests
            .fail_waiting(&mut self.watches, &Error::connection_loss(), &mut self.out);
    }

    /// Before the first connection, a request waits at most the session timeout for it, then
    /// fails with ConnectionLoss (the Java client fails them when a connection attempt fails).
    pub(super) fn fail_overdue_waiting(&mut self, now: Instant) {
        while let Some(since) = self.requests.oldest_waiting() {
            if now < since + self.timeout {
                break;
            }
            let w = self.requests.waiting.pop_front().expect("has a front");
            self.requests.end_unsent(&mut self.watches, &w.cmd);
            requests::fail_unsent(w.cmd, &Error::connection_loss(), &mut self.out);
        }
    }
}
