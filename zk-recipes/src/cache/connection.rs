//! What the session's events mean for the view: the first connection after a disconnection
//! calls for a full re-read, since a persistent watch does not replay what it missed; a new
//! session id says the session expired and the client went on with a new one.

use zk_session::{SessionEvent, SessionId};

use super::event::ResyncReason;
use crate::plumbing::liveness::Turn;

/// The session as the cache follows it.
#[derive(Debug)]
pub(crate) struct Connection {
    disconnected: bool,
    session_id: Option<SessionId>,
}

impl Connection {
    /// Following a client connected with `session_id` (or not yet connected).
    pub(crate) fn new(session_id: Option<SessionId>) -> Self {
        Connection {
            disconnected: false,
            session_id,
        }
    }

    /// The resync `ev` calls for, if any.
    pub(crate) fn on_event(&mut self, ev: SessionEvent) -> Option<ResyncReason> {
        let now = match Turn::of(ev)? {
            Turn::Away | Turn::Expired => {
                self.disconnected = true;
                return None;
            }
            Turn::Back { session, .. } => session.or(self.session_id),
            Turn::Ended(_) => return None,
        };
        // The first connection of the cache's life needs no resync: the load is under way.
        if !std::mem::take(&mut self.disconnected) {
            self.session_id = now;
            return None;
        }
        let reason = if now != self.session_id {
            ResyncReason::NewSession
        } else {
            ResyncReason::Reconnected
        };
        self.session_id = now;
        Some(reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(raw: i64) -> SessionId {
        SessionId::new(raw).expect("non-zero")
    }

    #[test]
    fn a_reconnect_and_a_new_session_each_call_for_a_resync_once() {
        let mut c = Connection::new(Some(id(7)));
        assert_eq!(c.on_event(SessionEvent::Suspended), None);
        assert_eq!(
            c.on_event(SessionEvent::Reconnected),
            Some(ResyncReason::Reconnected)
        );
        assert_eq!(c.on_event(SessionEvent::Reconnected), None, "once");
        for ev in [
            SessionEvent::Suspended,
            SessionEvent::Lost,
            SessionEvent::Expired,
        ] {
            assert_eq!(c.on_event(ev), None);
        }
        let next = SessionEvent::Connected { session_id: id(8) };
        assert_eq!(c.on_event(next), Some(ResyncReason::NewSession));
        // The same session id back after a read-only spell is a reconnect.
        c.on_event(SessionEvent::Suspended);
        let ro = SessionEvent::ConnectedReadOnly { session_id: id(8) };
        assert_eq!(c.on_event(ro), Some(ResyncReason::Reconnected));
    }

    #[test]
    fn the_first_connection_of_a_client_not_yet_connected_is_no_resync() {
        let mut c = Connection::new(None);
        let first = SessionEvent::Connected { session_id: id(3) };
        assert_eq!(c.on_event(first), None);
        c.on_event(SessionEvent::Suspended);
        assert_eq!(
            c.on_event(SessionEvent::Reconnected),
            Some(ResyncReason::Reconnected)
        );
    }
}
