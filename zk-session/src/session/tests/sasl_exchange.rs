//! The SASL exchange as input to the core: success, refusal, a server that fails in the
//! middle of it, a close during it, and requests and timers around it.

use std::time::Duration;

use bytes::Bytes;
use zk_proto::{GetSaslResponse, OpCode, Request, Response};

use super::harness::{config, get_data, reply_frame, response, Harness, SESSION, TIMEOUT_MS};
use super::sasl::{assert_no_attempt, events, StateAtAnswer};
use crate::{
    sasl::TwoRounds,
    session::{Action, End, Phase},
    state::{EndReason, SessionEvent, SessionState},
    Error, ErrorCode, SaslConfig, SessionId,
};

fn sasl_harness(hosts: usize) -> Harness {
    let mut cfg = config(hosts);
    cfg.sasl = Some(SaslConfig::mechanism(TwoRounds));
    Harness::new(cfg)
}

/// Opens a stream and answers the connect request with a live session.
fn open_and_respond(h: &mut Harness) {
    h.open().expect("an attempt");
    h.respond(&response(SESSION, TIMEOUT_MS, false));
}

/// The SASL packet the core wrote last: its xid and token.
fn sasl_packet(h: &mut Harness) -> (i32, Vec<u8>) {
    h.take_written();
    let w = h.pending.pop_back().expect("a SASL packet");
    assert!(h.pending.is_empty(), "nothing but SASL during the exchange");
    match w.request {
        Request::Sasl(r) => (w.xid, r.token.unwrap_or_default().to_vec()),
        other => panic!("{other:?}"),
    }
}

/// The server answers the packet with `xid`.
fn answer(h: &mut Harness, xid: i32, err: i32, token: Option<&'static [u8]>) {
    let body = Response::Sasl(GetSaslResponse {
        token: token.map(Bytes::from_static),
    });
    let mut f = reply_frame(xid, 0, err, Some(&body));
    h.core.handle_input(&mut f, h.now);
}

#[test]
fn the_exchange_runs_before_anything_else_and_requests_go_out_after_it() {
    let mut h = sasl_harness(3);
    let mut events_rx = h.shared.publisher.subscribe();
    let mut early = h.request(get_data("/a"), None);
    let mut auth = h.add_auth(b"u:p");
    open_and_respond(&mut h);
    // Not connected until the exchange is over; the packets take the session's xids.
    assert!(matches!(h.core.phase(), Phase::Handshaking { .. }));
    assert_eq!(sasl_packet(&mut h), (1, b"hello".to_vec()));
    let mut during = h.request(get_data("/b"), None);
    answer(&mut h, 1, 0, Some(b"challenge"));
    assert_eq!(sasl_packet(&mut h), (2, b"more".to_vec()));
    assert_eq!(h.shared.publisher.state(), SessionState::Connecting);
    answer(&mut h, 2, 0, None);
    assert_eq!(
        events(&mut events_rx),
        [SessionEvent::Connected {
            session_id: SessionId::new(SESSION).unwrap()
        }]
    );
    h.serve_all();
    assert!(early.answer().is_ok() && during.answer().is_ok());
    assert!(matches!(auth.try_recv(), Ok(Ok(()))));
    let after: Vec<_> = h.log.iter().skip(2).copied().collect();
    assert_eq!(
        after,
        [
            (-4, OpCode::Auth),
            (3, OpCode::GetData),
            (4, OpCode::GetData)
        ]
    );
    // The next connection authenticates from scratch, its xids going on from the counter.
    h.advance(Duration::from_secs(2));
    h.serve_all();
    h.cut();
    open_and_respond(&mut h);
    assert_eq!(sasl_packet(&mut h), (5, b"hello".to_vec()));
}

#[test]
fn a_refusal_ends_the_session_as_auth_failed_without_another_server() {
    for code in [-115, -124] {
        let mut h = sasl_harness(3);
        let mut events_rx = h.shared.publisher.subscribe();
        let mut early = h.request(get_data("/a"), None);
        let early_state = StateAtAnswer::watch(&mut early.0);
        open_and_respond(&mut h);
        let (xid, _) = sasl_packet(&mut h);
        answer(&mut h, xid, 0, Some(b"challenge"));
        let (xid, _) = sasl_packet(&mut h);
        answer(&mut h, xid, code, None);
        assert_eq!(h.core.phase(), Phase::Ended(End::AuthFailed));
        assert_eq!(
            events(&mut events_rx),
            [SessionEvent::Ended(EndReason::AuthFailed)]
        );
        assert_eq!(
            early_state.seen(),
            [SessionState::Ended(EndReason::AuthFailed)]
        );
        assert!(matches!(
            early.answer(),
            Err(Error::Code(ErrorCode::AuthFailed))
        ));
        assert!(
            h.last_error().contains(&format!("({code})")),
            "{}",
            h.last_error()
        );
        assert_eq!(h.core.poll_action(), Some(Action::Disconnect));
        assert_no_attempt(&mut h);
    }
}

#[test]
fn a_mechanism_that_cannot_answer_ends_the_session_too() {
    let mut h = sasl_harness(2);
    open_and_respond(&mut h);
    let (xid, _) = sasl_packet(&mut h);
    answer(&mut h, xid, 0, Some(b"nonsense"));
    assert_eq!(h.core.phase(), Phase::Ended(End::AuthFailed));
    let why = h.last_error();
    assert!(
        why.contains("X-TWO") && why.contains("unexpected token"),
        "{why}"
    );
}

#[test]
fn a_server_failing_mid_exchange_is_an_ordinary_failed_attempt() {
    // Hang-up, a reply to another xid, and garbage: each time the next server is tried with
    // the same session, and the exchange starts over there.
    let failures: [fn(&mut Harness, i32); 3] = [
        |h, _| h.core.handle_disconnected(h.now),
        |h, xid| answer(h, xid + 1, 0, Some(b"challenge")),
        |h, _| h.input(&[0, 0, 0, 2, 1, 2]),
    ];
    for fail in failures {
        let mut h = sasl_harness(3);
        let mut waiting = h.request(get_data("/a"), None);
        open_and_respond(&mut h);
        let (xid, _) = sasl_packet(&mut h);
        fail(&mut h, xid);
        assert!(!h.core.is_ended(), "{}", h.last_error());
        assert!(waiting.0.try_recv().is_err(), "the request still waits");
        open_and_respond(&mut h);
        let (xid, token) = sasl_packet(&mut h);
        assert_eq!(token, b"hello");
        answer(&mut h, xid, 0, Some(b"challenge"));
        let (xid, _) = sasl_packet(&mut h);
        answer(&mut h, xid, 0, None);
        h.serve_all();
        assert!(waiting.answer().is_ok());
        assert_eq!(h.shared.publisher.state(), SessionState::Connected);
    }
}

#[test]
fn a_close_or_an_abandoned_request_during_the_exchange_leaves_nothing_behind() {
    let mut h = sasl_harness(3);
    let abandoned = h.request(get_data("/gone"), None);
    open_and_respond(&mut h);
    let (xid, _) = sasl_packet(&mut h);
    abandoned.abandon();
    answer(&mut h, xid, 0, Some(b"challenge"));
    let (xid, _) = sasl_packet(&mut h);
    answer(&mut h, xid, 0, None);
    h.take_written();
    assert!(h.pending.is_empty(), "the abandoned request is not sent");
    // A close in the middle of the next connection's exchange.
    h.advance(Duration::from_secs(2));
    h.serve_all();
    h.cut();
    let mut waiting = h.request(get_data("/a"), None);
    open_and_respond(&mut h);
    let _ = sasl_packet(&mut h);
    let mut rx = h.close();
    assert_eq!(h.core.phase(), Phase::Ended(End::Closed));
    assert!(rx.try_recv().is_ok());
    assert!(matches!(waiting.answer(), Err(Error::Closed)));
    assert!(h.core.transmit().is_empty());
    assert_eq!(
        h.shared.publisher.state(),
        SessionState::Ended(EndReason::Closed)
    );
}

#[test]
fn an_exchange_that_stalls_is_given_up_at_the_attempt_timeout_without_pings() {
    let mut h = sasl_harness(2);
    open_and_respond(&mut h);
    let _ = sasl_packet(&mut h);
    // Past the ping interval of a connected session (2 s): no ping during the exchange.
    h.advance(Duration::from_millis(1900));
    h.take_written();
    assert!(h.pending.is_empty());
    h.advance(Duration::from_millis(100));
    assert!(
        h.last_error().contains("no connect response in time"),
        "{}",
        h.last_error()
    );
    assert!(h.connect_action().is_some(), "the next server is tried");
}

#[test]
fn an_expired_session_gets_no_sasl() {
    let mut h = sasl_harness(2);
    open_and_respond(&mut h);
    let (xid, _) = sasl_packet(&mut h);
    answer(&mut h, xid, 0, Some(b"challenge"));
    let (xid, _) = sasl_packet(&mut h);
    answer(&mut h, xid, 0, None);
    h.advance(Duration::from_secs(2));
    h.serve_all();
    h.cut();
    h.open().unwrap();
    h.respond(&response(SESSION, 0, false));
    h.take_written();
    assert!(
        h.pending.is_empty(),
        "no SASL packet after an expired response"
    );
    assert_eq!(h.shared.publisher.state(), SessionState::Expired);
}

/// The server made the session with its ConnectResponse: when every handle goes during the
/// exchange, the exchange ends and the session is closed, not left to expire.
#[test]
fn handles_gone_during_the_exchange_close_the_session_after_it() {
    let mut h = sasl_harness(3);
    open_and_respond(&mut h);
    let (xid, _) = sasl_packet(&mut h);
    h.core.handle_handles_gone(h.now);
    assert!(matches!(h.core.phase(), Phase::Handshaking { .. }));
    answer(&mut h, xid, 0, Some(b"challenge"));
    let (xid, _) = sasl_packet(&mut h);
    answer(&mut h, xid, 0, None);
    h.take_written();
    let sent: Vec<_> = h.pending.iter().map(|w| w.op).collect();
    assert_eq!(sent, [OpCode::CloseSession]);
    h.serve_all();
    assert_eq!(h.core.phase(), Phase::Ended(End::Closed));
}

/// The mechanism's calls are actions the driver runs (on the blocking pool for a mechanism
/// that may block): the core writes nothing until their end comes back, and the end of work
/// done for an attempt that is over (timed out meanwhile) changes nothing.
#[test]
fn the_mechanisms_calls_are_work_for_the_driver_and_a_late_end_is_dropped() {
    let mut h = sasl_harness(3);
    h.core.auto_sasl = false;
    open_and_respond(&mut h);
    assert_eq!(
        h.core.sasl_work.len(),
        1,
        "the mechanism starts in the driver"
    );
    assert!(
        h.core.sasl_work[0].1.blocks(),
        "a mechanism may block unless it says not"
    );
    h.take_written();
    assert!(
        h.pending.is_empty(),
        "nothing written before the first token"
    );
    h.core.run_sasl_work(h.now);
    assert_eq!(sasl_packet(&mut h), (1, b"hello".to_vec()));
    answer(&mut h, 1, 0, Some(b"challenge"));
    assert_eq!(
        h.core.sasl_work.len(),
        1,
        "the server's token goes to the mechanism"
    );
    // The call takes longer than the attempt may: the attempt fails, the next one starts.
    h.advance(Duration::from_secs(3));
    assert!(!matches!(h.core.phase(), Phase::Handshaking { host: 0 }));
    let stale = h.core.sasl_work.len();
    h.core.run_sasl_work(h.now);
    assert_eq!(h.core.sasl_work.len(), stale - 1);
    h.take_written();
    assert!(
        !h.pending
            .iter()
            .any(|w| matches!(w.request, Request::Sasl(_))),
        "the late end of the old attempt's call sends nothing"
    );
    assert!(!h.core.is_ended());
}
