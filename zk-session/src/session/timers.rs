//! Every deadline of the session in one table: ping, read timeout, close, lost, attempt.

use std::time::Duration;

use std::time::Instant;

use super::min_opt;

#[derive(Debug)]
pub(super) struct Timers {
    /// When the current connection last received a frame.
    pub last_recv: Instant,
    /// When the current connection last wrote (or queued a ping).
    pub last_send: Instant,
    /// No frame for this long: the server is gone (2/3 of the session timeout, as the
    /// reference client does).
    pub read_timeout: Duration,
    /// Idle for this long: send a ping.
    pub ping_every: Duration,
    /// A closeSession was sent: give up waiting for its reply then.
    pub close_at: Option<Instant>,
    /// Disconnected and not yet presumed lost: when the session will be.
    pub lost_at: Option<Instant>,
    /// When the connection attempt under way (stream, handshake, SASL) is given up.
    pub attempt_until: Option<Instant>,
}

impl Timers {
    pub fn new(now: Instant) -> Self {
        Timers {
            last_recv: now,
            last_send: now,
            read_timeout: Duration::MAX,
            ping_every: Duration::MAX,
            close_at: None,
            lost_at: None,
            attempt_until: None,
        }
    }

    /// A connection with session timeout `timeout` starts at `now`.
    pub fn connected(&mut self, timeout: Duration, now: Instant) {
        self.read_timeout = timeout * 2 / 3;
        self.ping_every = (self.read_timeout / 2).min(Duration::from_secs(10));
        self.last_recv = now;
        self.last_send = now;
        self.close_at = None;
        self.lost_at = None;
    }

    /// The next deadline while connected. A ping is only due when nothing is waiting to be
    /// written: while the write buffer is stalled, a ping could not go out anyway, and its
    /// past deadline would wake the driver over and over.
    pub fn connected_deadline(&self, write_idle: bool) -> Option<Instant> {
        let read = self.last_recv.checked_add(self.read_timeout);
        let ping = if write_idle {
            self.last_send.checked_add(self.ping_every)
        } else {
            None
        };
        min_opt(min_opt(read, ping), self.close_at)
    }

    /// The next deadline while disconnected: the session is presumed lost, or (before the
    /// first connection) a waiting request has waited long enough.
    pub fn disconnected_deadline(&self, first_wait: Option<Instant>) -> Option<Instant> {
        min_opt(self.lost_at, first_wait)
    }

    pub fn read_timed_out(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.last_recv) >= self.read_timeout
    }

    pub fn ping_due(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.last_send) >= self.ping_every
    }
}
