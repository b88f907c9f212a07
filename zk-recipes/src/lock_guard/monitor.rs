//! The monitor of a held lock: the two things that end its trust, the lock node's deletion
//! and the session's state, each as a future that resolves to the [`LostReason`].
//!
//! Kept apart from [`Holding`](super::holding::Holding), which runs them, because the
//! policy (which session states count as lost) is plain logic, unit tested here.

use std::sync::atomic::{AtomicBool, Ordering};

use zk_session::{
    Client, Error, ErrorCode, EventType, OneshotWatch, SessionEvent, SessionEvents, SessionState,
};

use super::LostReason;
use crate::{pending::data_watch, session_scope::end_reason, RETRY_BACKOFF};

/// Resolves when the node is deleted, keeping a data watch on it (re-armed after data
/// changes; re-registered by the client after reconnects).
pub(super) async fn own_node_gone(
    client: &Client,
    path: &str,
    first: Option<OneshotWatch>,
    watching: &AtomicBool,
) -> LostReason {
    let mut watch = first;
    let mut retry = 0;
    loop {
        let w = match watch.take() {
            Some(w) => w,
            None => match data_watch(client, path).await {
                Ok((_, _, w)) => {
                    watching.store(true, Ordering::Release);
                    w
                }
                Err(Error::Code(ErrorCode::NoNode)) => return LostReason::NodeDeleted,
                Err(e) if e.is_retryable() => {
                    tokio::time::sleep(RETRY_BACKOFF.delay(retry)).await;
                    retry += 1;
                    continue;
                }
                Err(e) => return reason_for_error(client, &e),
            },
        };
        match w.await {
            Ok(ev) if ev.event_type == EventType::NodeDeleted => return LostReason::NodeDeleted,
            Ok(_) => {}
            Err(e) => return reason_for_error(client, &e),
        }
    }
}

/// Resolves when the session state says the lock cannot be trusted. The session of the
/// node (`owner`) being replaced by a new one counts as its expiry: the client carries on
/// after an expiry, but the lock stays lost (the node went with the old session).
pub(super) async fn session_gone(
    client: &Client,
    owner: i64,
    mut events: SessionEvents,
    suspended_is_lost: bool,
) -> LostReason {
    if let Some(r) = reason_for_state(client.state(), suspended_is_lost) {
        return r;
    }
    loop {
        // Also after a lagging event stream skipped the expiry itself.
        if owner != 0 && crate::session_scope::session_gone(client, owner) {
            return LostReason::Expired;
        }
        let reason = match events.next().await {
            None => Some(LostReason::Closed),
            Some(SessionEvent::Suspended | SessionEvent::ConnectedReadOnly { .. }) => {
                suspended_is_lost.then_some(LostReason::Suspended)
            }
            Some(SessionEvent::Lost) => Some(LostReason::SessionLost),
            Some(SessionEvent::Expired) => Some(LostReason::Expired),
            Some(SessionEvent::Ended(why)) => Some(end_reason(why)),
            Some(_) => None,
        };
        if let Some(r) = reason {
            return r;
        }
    }
}

fn reason_for_state(state: SessionState, suspended_is_lost: bool) -> Option<LostReason> {
    match state {
        SessionState::Connected | SessionState::Connecting => None,
        SessionState::Lost => Some(LostReason::SessionLost),
        SessionState::Expired => Some(LostReason::Expired),
        SessionState::Ended(why) => Some(end_reason(why)),
        // Suspended, read-only, and anything this crate does not know yet.
        _ => suspended_is_lost.then_some(LostReason::Suspended),
    }
}

fn reason_for_error(client: &Client, e: &Error) -> LostReason {
    match e {
        Error::Code(ErrorCode::SessionExpired) => LostReason::Expired,
        Error::Code(ErrorCode::AuthFailed) => LostReason::AuthFailed,
        _ => reason_for_state(client.state(), true).unwrap_or(LostReason::Closed),
    }
}

#[cfg(test)]
mod tests {
    use zk_session::EndReason;

    use super::*;

    #[test]
    fn state_policy() {
        assert_eq!(reason_for_state(SessionState::Connected, true), None);
        assert_eq!(
            reason_for_state(SessionState::Suspended, true),
            Some(LostReason::Suspended)
        );
        assert_eq!(reason_for_state(SessionState::Suspended, false), None);
        assert_eq!(
            reason_for_state(SessionState::ConnectedReadOnly, false),
            None
        );
        assert_eq!(
            reason_for_state(SessionState::Lost, false),
            Some(LostReason::SessionLost)
        );
        assert_eq!(
            reason_for_state(SessionState::Expired, false),
            Some(LostReason::Expired)
        );
        assert_eq!(
            reason_for_state(SessionState::Ended(EndReason::Closed), false),
            Some(LostReason::Closed)
        );
    }
}
