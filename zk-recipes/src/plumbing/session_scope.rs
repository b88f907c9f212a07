//! The session a recipe operation belongs to.
//!
//! A zk-session client outlives session expiry by default: the state goes to `Expired`, then
//! to `Connected` with a new session id, on the same handle. The ephemeral nodes and one-shot
//! watches of the old session are gone with it, so whatever an operation built on it (a lock
//! node, a place in line) is gone too. An operation therefore belongs to one session — the
//! one current when it starts, or, when it starts between an expiry and the next session (or
//! before the first), the next one — and ends when that session does, even though the client
//! carries on.

use zk_session::Client;

use super::liveness::{client_over, session_gone, Liveness};
use crate::LostReason;

/// One session of a client, for an operation that must not outlive it.
#[derive(Debug, Clone)]
pub(crate) struct SessionScope {
    client: Client,
    id: i64,
}

impl SessionScope {
    /// The session to run in: the current one, or the next when none is current (before the
    /// first connection, or between an expiry and the new session). Fails when the client
    /// cannot serve ([`Liveness::client_over`]).
    pub(crate) async fn enter(client: &Client) -> Result<SessionScope, LostReason> {
        let mut state = client.watch_state();
        loop {
            state.borrow_and_update();
            let now = Liveness::now(client);
            if let Some(r) = now.client_over() {
                return Err(r);
            }
            let id = client.session_id();
            if now.has_session(id) {
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
            state.borrow_and_update();
            if let Some(r) = self.ended() {
                return r;
            }
            if state.changed().await.is_err() {
                return LostReason::Closed;
            }
        }
    }
}
