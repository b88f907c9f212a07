//! Carrying on after the ensemble expired the session: a new session on the same handle.

use bytes::Bytes;
use std::time::Instant;

use super::{Away, SessionCore};
use crate::{state::SessionEvent, trace, Error};

impl SessionCore {
    /// A server told us the session is expired: announce it, end what belonged to it, and
    /// connect for a new one. Credentials and persistent watches carry over (the next
    /// connection sends them); one-shot watches and waiting requests end with
    /// `SessionExpired`, as they would with a client that ends there.
    pub(super) fn session_expired(&mut self, now: Instant) {
        trace::info!(
            session_id = %trace::SessionId(self.session_id),
            "session expired: creating a new session on the same handle"
        );
        self.away = Away::Expired;
        // Logged with the id that expired; published without it.
        self.publish(SessionEvent::Expired);
        self.session_id = 0;
        self.passwd = Bytes::from_static(&[0u8; 16]);
        let err = Error::session_expired();
        self.requests
            .fail_waiting(&mut self.watches, &err, &mut self.out);
        self.watches.fail_oneshots(&err, &mut self.out);
        // Announced as a first connection, and requests made meanwhile wait at most a
        // session timeout, as before the first connection.
        self.ever_connected = false;
        self.timers.lost_at = None;
        self.next_attempt(now);
    }
}
