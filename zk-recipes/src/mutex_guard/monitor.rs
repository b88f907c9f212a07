//! The monitor of a held lock: the two things that end its trust, the lock node's deletion
//! and the session's state, each as a future that resolves to the [`LostReason`].
//!
//! Kept apart from [`Holding`](super::holding::Holding), which runs them; which session
//! states count as lost is decided in [`liveness`](crate::plumbing::liveness).

use std::sync::atomic::{AtomicBool, Ordering};

use zk_session::{Client, Error, ErrorCode, EventType, OneshotWatch, SessionEvents};

use super::LostReason;
use crate::plumbing::{
    line::watch_node,
    liveness::{event_doubt, session_gone as owner_gone, Liveness, SuspendPolicy},
    retry::Pauses,
};

/// Resolves when the node is deleted, keeping a data watch on it (re-armed after data
/// changes; re-registered by the client after reconnects).
pub(crate) async fn own_node_gone(
    client: &Client,
    path: &str,
    first: Option<OneshotWatch>,
    watching: &AtomicBool,
) -> LostReason {
    let mut watch = first;
    let mut pauses = Pauses::default();
    loop {
        let w = match watch.take() {
            Some(w) => w,
            None => match watch_node(client, path).await {
                Ok(Some(w)) => {
                    watching.store(true, Ordering::Release);
                    w
                }
                Ok(None) => return LostReason::NodeDeleted,
                Err(e) if e.is_retryable() => {
                    pauses.pause().await;
                    continue;
                }
                Err(e) => return reason_for_error(client, &e),
            },
        };
        match w.await {
            Ok(ev) if ev.event_type() == EventType::NodeDeleted => return LostReason::NodeDeleted,
            Ok(_) => {}
            Err(e) => return reason_for_error(client, &e),
        }
    }
}

/// Resolves when the session state says the lock cannot be trusted. The session of the
/// node (`owner`) being replaced by a new one counts as its expiry: the client carries on
/// after an expiry, but the lock stays lost (the node went with the old session).
pub(crate) async fn session_gone(
    client: &Client,
    owner: i64,
    mut events: SessionEvents,
    policy: SuspendPolicy,
) -> LostReason {
    if let Some(r) = Liveness::now(client).doubt(policy) {
        return r;
    }
    loop {
        // Also after a lagging event stream skipped the expiry itself.
        if owner != 0 && owner_gone(client, owner) {
            return LostReason::Expired;
        }
        match events.next().await {
            None => return LostReason::Closed,
            Some(ev) => {
                if let Some(r) = event_doubt(ev, policy) {
                    return r;
                }
            }
        }
    }
}

fn reason_for_error(client: &Client, e: &Error) -> LostReason {
    match e {
        Error::Code(ErrorCode::SessionExpired) => LostReason::Expired,
        Error::Code(ErrorCode::AuthFailed) | Error::AuthFailed(_) => LostReason::AuthFailed,
        _ => Liveness::now(client)
            .doubt(SuspendPolicy::StepDown)
            .unwrap_or(LostReason::Closed),
    }
}
