//! A server that answers -124 (SASL required) after the session was made; the exchange
//! itself is in `sasl_exchange.rs`.

use std::time::Duration;

use tokio::sync::broadcast::error::TryRecvError;
use zk_proto::{xid, OpCode, Response};

use super::harness::{get_data, reply_frame, Harness, Slot};
use crate::{
    session::{Action, End, Key, Phase},
    state::{EndReason, SessionEvent, SessionState},
    Error, ErrorCode,
};

/// The error a server that enforces SASL answers with.
const SASL_REQUIRED: i32 = -124;

/// The session state at the moment a caller's answer came, as the harness recorded it, so a
/// test sees what a caller looking at the state would see.
pub struct StateAtAnswer(Slot<Key, Result<Response, Error>>);

impl StateAtAnswer {
    /// Follows `slot`, which must not be answered yet.
    pub fn watch(slot: &mut Slot<Key, Result<Response, Error>>) -> Self {
        assert!(slot.state_at_answer().is_none(), "answered too early");
        StateAtAnswer(slot.follow())
    }

    pub fn seen(&self) -> Vec<SessionState> {
        self.0.state_at_answer().into_iter().collect()
    }
}

/// Every event published since `rx` subscribed.
pub fn events(rx: &mut tokio::sync::broadcast::Receiver<SessionEvent>) -> Vec<SessionEvent> {
    let mut out = Vec::new();
    loop {
        match rx.try_recv() {
            Ok(e) => out.push(e),
            Err(TryRecvError::Empty) => return out,
            Err(e) => panic!("{e:?}"),
        }
    }
}

/// No more connection attempts, however long one waits.
pub fn assert_no_attempt(h: &mut Harness) {
    h.advance(Duration::from_secs(30));
    while let Some(a) = h.core.poll_action() {
        assert!(!matches!(a, Action::Connect { .. }), "{a:?}");
    }
}

#[test]
fn a_refusal_from_an_attempt_no_longer_under_way_is_ignored() {
    let mut h = Harness::new(super::harness::config(3));
    let (host, _) = h.connect_action().expect("a first attempt");
    h.core
        .handle_connect_failed(host, super::harness::refused(), h.now);
    let late = crate::connect_error::ConnectFailure::AuthFailed {
        mechanism: "PLAIN".into(),
        reason: crate::AuthFailure::Refused {
            code: crate::ErrorCode::AuthFailed,
            server_principal: None,
        },
    };
    h.core.handle_connect_failed(host, late, h.now);
    assert!(!h.core.is_ended());
    assert!(h.accept(), "the next host is tried");
}

#[test]
fn a_minus_124_reply_publishes_auth_failed_then_answers_everyone_once() {
    let mut h = Harness::connected();
    let mut events_rx = h.shared.publisher.subscribe();
    let mut first = h.request(get_data("/a"), None);
    let mut auth = h.add_auth(b"u:p");
    let mut second = h.request(get_data("/b"), None);
    h.take_written();
    let first_state = StateAtAnswer::watch(&mut first.0);
    let second_state = StateAtAnswer::watch(&mut second.0);
    let refused = h.pending.pop_front().expect("the first request went out");
    assert_eq!(refused.op, OpCode::GetData);
    let mut frame = reply_frame(refused.xid, 0, SASL_REQUIRED, None);
    h.core.handle_input(&mut frame, h.now);

    // The state changed before anyone heard: straight from Connected to AuthFailed.
    assert_eq!(
        first_state.seen(),
        [SessionState::Ended(EndReason::AuthFailed)]
    );
    assert_eq!(
        second_state.seen(),
        [SessionState::Ended(EndReason::AuthFailed)]
    );
    assert_eq!(
        events(&mut events_rx),
        [SessionEvent::Ended(EndReason::AuthFailed)]
    );
    // The refused caller gets the server's code, the others AuthFailed: once each.
    assert!(matches!(
        first.answer(),
        Err(Error::Code(ErrorCode::SessionClosedRequireSaslAuth))
    ));
    assert!(matches!(
        second.answer(),
        Err(Error::Code(ErrorCode::AuthFailed))
    ));
    assert!(matches!(
        auth.try_recv(),
        Ok(Err(Error::Code(ErrorCode::AuthFailed)))
    ));
    assert!(first.0.try_recv().is_err() && second.0.try_recv().is_err());
    assert_eq!(h.core.phase(), Phase::Ended(End::AuthFailed));
    assert_eq!(h.core.poll_action(), Some(Action::Disconnect));
    assert_no_attempt(&mut h);
    let mut later = h.request(get_data("/c"), None);
    assert!(matches!(
        later.answer(),
        Err(Error::Code(ErrorCode::AuthFailed))
    ));
}

#[test]
fn a_minus_124_answer_to_a_ping_or_set_watches_ends_the_session_as_auth_failed() {
    for session_xid in [xid::PING, xid::SET_WATCHES] {
        let mut h = Harness::connected();
        let mut events_rx = h.shared.publisher.subscribe();
        let mut waiting = h.request(get_data("/a"), None);
        h.take_written();
        let state = StateAtAnswer::watch(&mut waiting.0);
        let mut frame = reply_frame(session_xid, 0, SASL_REQUIRED, None);
        h.core.handle_input(&mut frame, h.now);
        assert_eq!(
            state.seen(),
            [SessionState::Ended(EndReason::AuthFailed)],
            "xid {session_xid}"
        );
        assert_eq!(
            events(&mut events_rx),
            [SessionEvent::Ended(EndReason::AuthFailed)]
        );
        assert!(matches!(
            waiting.answer(),
            Err(Error::Code(ErrorCode::AuthFailed))
        ));
        assert_eq!(h.core.phase(), Phase::Ended(End::AuthFailed));
        assert_no_attempt(&mut h);
    }
}

#[test]
fn other_errors_on_a_ping_keep_the_session() {
    let mut h = Harness::connected();
    let mut frame = reply_frame(xid::PING, 0, -6, None);
    h.core.handle_input(&mut frame, h.now);
    assert!(matches!(h.core.phase(), Phase::Connected { .. }));
    let mut r = h.request(get_data("/a"), None);
    h.serve_all();
    assert!(r.answer().is_ok());
}
