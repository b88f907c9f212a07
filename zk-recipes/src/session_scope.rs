//! The session a recipe operation belongs to.
//!
//! A zk-session client outlives session expiry by default: the state goes to `Expired`, then
//! to `Connected` with a new session id, on the same handle. The ephemeral nodes and one-shot
//! watches of the old session are gone with it, so whatever an operation built on it (a lock
//! node, a place in line) is gone too. An operation therefore belongs to one session — the
//! one current when it starts, or, when it starts between an expiry and the next session (or
//! before the first), the next one — and ends when that session does, even though the client
//! carries on.

use zk_session::{Client, EndReason, SessionId, SessionState};

use crate::LostReason;

/// Why nothing can be done on `client` any more, if so: no connection for the whole session
/// timeout (the session is presumed lost and requests fail at once), or the client is over
/// for good (closed, authentication failed, expired with no new session to follow). An
/// expiry followed by a new session is not the end of the client.
pub(crate) fn client_over(client: &Client) -> Option<LostReason> {
    match client.state() {
        SessionState::Lost => Some(LostReason::SessionLost),
        SessionState::Ended(why) => Some(end_reason(why)),
        // An end published before the state caught up.
        _ if client.has_ended() => Some(LostReason::Closed),
        _ => None,
    }
}

/// Whether the ephemeral nodes of session `owner` are gone with it: it expired, or the
/// client has moved on to another session (or ended).
pub(crate) fn session_gone(client: &Client, owner: i64) -> bool {
    let now = raw_session_id(client);
    client.state() == SessionState::Expired || client.has_ended() || (now != 0 && now != owner)
}

/// What a client's end means for a recipe.
pub(crate) fn end_reason(why: EndReason) -> LostReason {
    match why {
        EndReason::SessionExpired => LostReason::Expired,
        EndReason::AuthFailed => LostReason::AuthFailed,
        // Closed, and any end this crate does not know yet.
        _ => LostReason::Closed,
    }
}

/// The client's session id as ZooKeeper's znodes carry it (`ephemeral_owner`): 0 for none.
pub(crate) fn raw_session_id(client: &Client) -> i64 {
    client.session_id().map_or(0, SessionId::get)
}

/// Whether an operation that failed retryably may be tried again: not once the session is
/// over, nor while it is presumed lost (no connection for the whole session timeout), when
/// the session fails every request at once and the caller is owed a prompt answer.
pub(crate) fn may_retry(client: &Client) -> bool {
    let state = client.state();
    state != SessionState::Lost && !state.is_terminal()
}

/// One session of a client, for an operation that must not outlive it.
#[derive(Debug, Clone)]
pub(crate) struct SessionScope {
    client: Client,
    id: i64,
}

impl SessionScope {
    /// The session to run in: the current one, or the next when none is current (before the
    /// first connection, or between an expiry and the new session). Fails when the client
    /// cannot serve ([`client_over`]).
    pub(crate) async fn enter(client: &Client) -> Result<SessionScope, LostReason> {
        let mut state = client.watch_state();
        loop {
            let s = state.get_and_update();
            if let Some(r) = client_over(client) {
                return Err(r);
            }
            let id = raw_session_id(client);
            if s != SessionState::Expired && id != 0 {
                return Ok(SessionScope {
                    client: client.clone(),
                    id,
                });
            }
            if state.changed().await.is_err() {
                return Err(LostReason::Closed);
            }
        }
    }

    /// The session id.
    pub(crate) fn id(&self) -> i64 {
        self.id
    }

    /// Why this session cannot serve the operation any more, if so: the client is over, or
    /// this session expired (whether or not a new one follows).
    pub(crate) fn ended(&self) -> Option<LostReason> {
        if let Some(r) = client_over(&self.client) {
            return Some(r);
        }
        session_gone(&self.client, self.id).then_some(LostReason::Expired)
    }

    /// Resolves when [`ended`](Self::ended) says so.
    pub(crate) async fn wait_ended(&self) -> LostReason {
        let mut state = self.client.watch_state();
        loop {
            state.get_and_update();
            if let Some(r) = self.ended() {
                return r;
            }
            if state.changed().await.is_err() {
                return LostReason::Closed;
            }
        }
    }
}
