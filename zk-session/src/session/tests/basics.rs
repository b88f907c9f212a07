//! The core's timers, reconnects, auth and first connection, step by step.

use std::time::Duration;

use zk_proto::{EventType, OpCode};

use super::harness::{config, get_data, refused, Harness, SESSION, TIMEOUT_MS};
use crate::{
    session::Phase,
    state::{EndReason, SessionState},
    Error, ErrorCode,
};

fn ops_since(h: &Harness, from: usize, op: OpCode) -> usize {
    h.log[from..].iter().filter(|(_, o)| *o == op).count()
}

#[test]
fn an_idle_connection_pings_and_a_silent_server_is_left_after_the_read_timeout() {
    let mut h = Harness::connected();
    assert_eq!(h.shared.publisher.state(), SessionState::Connected);
    // Ping every read_timeout / 2 = 2 s; the server answers each.
    for _ in 0..3 {
        h.advance(Duration::from_millis(2000));
        h.take_written();
        assert_eq!(h.pending.back().map(|w| w.op), Some(OpCode::Ping));
        h.serve_all();
    }
    assert!(matches!(h.core.phase(), Phase::Connected { .. }));
    // Now the server stays silent: 2/3 of the session timeout later the core gives up.
    h.advance(Duration::from_millis(TIMEOUT_MS as u64 * 2 / 3));
    assert!(!matches!(h.core.phase(), Phase::Connected { .. }));
    assert_eq!(h.shared.publisher.state(), SessionState::Suspended);
}

/// Issue 14 #9: a ping due while the write buffer is stalled used to wake the driver every
/// millisecond (about 485 times a second) until the socket drained.
#[test]
fn a_stalled_write_buffer_does_not_spin_the_timer() {
    let mut h = Harness::connected();
    // A request the socket never takes: the write buffer stays full.
    let _r = h.request(get_data("/a"), None);
    assert!(!h.core.transmit().is_empty());
    // Past the ping deadline (2 s), within the read timeout (4 s), a server notification
    // keeps the connection alive.
    let mut wakeups = h.advance(Duration::from_millis(1900));
    h.notify(EventType::NodeDataChanged, "/x");
    wakeups += h.advance(Duration::from_millis(1000));
    assert!(wakeups <= 2, "{wakeups} wake-ups in one idle second");
    assert!(matches!(h.core.phase(), Phase::Connected { .. }));
}

/// Issue 14 #10: the same credentials added twice while disconnected were re-sent twice on
/// every reconnect.
#[test]
fn credentials_added_twice_while_disconnected_are_sent_once_per_connection() {
    let mut h = Harness::connected();
    h.cut();
    let mut replies = vec![h.add_auth(b"u:p"), h.add_auth(b"u:p")];
    for _ in 0..3 {
        let from = h.log.len();
        assert!(h.accept());
        h.serve_all();
        assert_eq!(ops_since(&h, from, OpCode::Auth), 1);
        h.advance(Duration::from_secs(2));
        h.cut();
    }
    for r in &mut replies {
        assert!(
            matches!(r.try_recv(), Ok(Ok(()))),
            "both callers hear of the reply"
        );
    }
    // Added again while connected: sent at once (as the Java client does), kept once.
    assert!(h.accept());
    h.serve_all();
    let mut again = h.add_auth(b"u:p");
    h.serve_all();
    assert!(matches!(again.try_recv(), Ok(Ok(()))));
    h.advance(Duration::from_secs(2));
    h.cut();
    let from = h.log.len();
    assert!(h.accept());
    assert_eq!(ops_since(&h, from, OpCode::Auth), 1);
}

/// Issue 14 #11: requests made before the first connection waited forever when no server
/// was reachable. Now each waits at most the session timeout, then fails with
/// ConnectionLoss.
#[test]
fn requests_before_the_first_connection_fail_after_the_session_timeout() {
    let mut h = Harness::new(config(2));
    let mut early = h.request(get_data("/a"), None);
    h.advance(Duration::from_millis(3000));
    let mut later = h.request(get_data("/a"), None);
    // Every attempt fails.
    h.refuse_for(Duration::from_millis(3000));
    assert!(matches!(
        early.answer(),
        Err(Error::Code(ErrorCode::ConnectionLoss))
    ));
    assert!(later.0.try_recv().is_err(), "the later one still has time");
    h.refuse_for(Duration::from_millis(4000));
    assert!(matches!(
        later.answer(),
        Err(Error::Code(ErrorCode::ConnectionLoss))
    ));
    // The client goes on trying: a server that comes up takes the next request.
    assert_eq!(h.shared.publisher.state(), SessionState::Connecting);
    let mut next = h.request(get_data("/a"), None);
    assert!(h.accept());
    h.serve_all();
    assert!(next.answer().is_ok());
}

#[test]
fn reconnects_go_round_the_hosts_and_back_off_after_a_failed_round() {
    let mut h = Harness::new(config(3));
    let mut tried = Vec::new();
    for _ in 0..6 {
        let (host, _) = h.connect_action().expect("an attempt");
        tried.push(host);
        h.core.handle_connect_failed(host, refused(), h.now);
    }
    assert_eq!(tried, [0, 1, 2, 0, 1, 2]);
    // A whole round failed: the next one waits a backoff (50..100 ms after the first).
    assert!(matches!(h.core.phase(), Phase::Backoff { .. }));
    let Phase::Backoff { until, .. } = h.core.phase() else {
        unreachable!()
    };
    let wait = until - h.now;
    assert!(
        wait >= Duration::from_millis(100) && wait < Duration::from_millis(400),
        "{wait:?}"
    );
}

#[test]
fn the_session_is_presumed_lost_after_the_timeout_and_waiting_requests_fail() {
    let mut h = Harness::connected();
    h.advance(Duration::from_secs(2));
    h.serve_all();
    h.cut();
    let mut waiting = h.request(get_data("/a"), None);
    h.refuse_for(Duration::from_secs(10));
    assert_eq!(h.shared.publisher.state(), SessionState::Lost);
    assert!(matches!(
        waiting.answer(),
        Err(Error::Code(ErrorCode::ConnectionLoss))
    ));
    // While lost, requests fail at once; a server that takes the session back ends that.
    let mut now = h.request(get_data("/a"), None);
    assert!(now.answer().is_err());
    assert!(h.accept());
    assert_eq!(h.shared.publisher.state(), SessionState::Connected);
    assert_eq!(h.core.session_id, SESSION);
}

#[test]
fn close_sends_close_session_and_ends_on_its_reply() {
    let mut h = Harness::connected();
    let mut inflight = h.request(get_data("/a"), None);
    let mut rx = h.close();
    h.take_written();
    assert_eq!(h.pending.back().map(|w| w.op), Some(OpCode::CloseSession));
    h.serve_all();
    assert!(inflight.answer().is_ok());
    assert!(rx.try_recv().is_ok());
    assert_eq!(
        h.shared.publisher.state(),
        SessionState::Ended(EndReason::Closed)
    );
    let mut after = h.request(get_data("/a"), None);
    assert!(matches!(after.answer(), Err(Error::Closed)));
}

#[test]
fn an_expired_session_is_replaced_with_its_credentials_and_without_its_one_shot_watches() {
    let mut h = Harness::connected();
    let mut auth = h.add_auth(b"u:p");
    let (mut r, mut watch) = h.get_data_watch("/a");
    h.serve_all();
    assert!(r.answer().is_ok() && matches!(auth.try_recv(), Ok(Ok(()))));
    let mut events = h.shared.publisher.subscribe();
    h.advance(Duration::from_secs(2));
    h.cut();
    let mut waiting = h.request(get_data("/b"), None);
    // The ensemble has expired the session.
    assert_eq!(h.accept_as(SESSION, 0), Some(SESSION));
    assert_eq!(h.shared.publisher.state(), SessionState::Expired);
    let expired = |e: Error| matches!(e, Error::Code(ErrorCode::SessionExpired));
    assert!(expired(
        watch.rx.as_mut().unwrap().try_recv().unwrap().unwrap_err()
    ));
    assert!(expired(waiting.answer().unwrap_err()));
    // A new session, asked for with session id 0, with the credential sent first.
    let from = h.log.len();
    assert_eq!(h.accept_as(SESSION + 1, TIMEOUT_MS), Some(0));
    assert_eq!(ops_since(&h, from, OpCode::Auth), 1);
    assert_eq!(
        ops_since(&h, from, OpCode::SetWatches),
        0,
        "no watch of the old session"
    );
    assert_eq!(h.shared.publisher.state(), SessionState::Connected);
    assert_eq!(h.core.session_id, SESSION + 1);
    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        seen.push(e);
    }
    use crate::SessionEvent::*;
    let session_id = crate::SessionId::new(SESSION + 1).unwrap();
    assert_eq!(seen, [Suspended, Expired, Connected { session_id }]);
}

#[test]
fn with_new_sessions_off_an_expired_session_ends() {
    let mut cfg = config(1);
    cfg.new_session_on_expiry = false;
    let mut h = Harness::new(cfg);
    assert!(h.accept());
    h.advance(Duration::from_secs(2));
    h.cut();
    assert!(h.accept_as(SESSION, 0).is_some());
    assert_eq!(
        h.shared.publisher.state(),
        SessionState::Ended(EndReason::SessionExpired)
    );
    assert!(h.core.is_ended());
    assert!(h.connect_action().is_none());
}

#[test]
fn a_persistent_watch_gets_every_event_as_a_value_and_ends_with_the_session() {
    let mut h = Harness::connected();
    let (mut added, stream) = h.add_watch("/p");
    h.serve_all();
    assert!(added.answer().is_ok());
    h.change(EventType::NodeDataChanged, "/p");
    h.change(EventType::NodeDeleted, "/p");
    let got: Vec<_> = stream.events().iter().map(|e| e.event_type()).collect();
    assert_eq!(got, [EventType::NodeDataChanged, EventType::NodeDeleted]);
    assert!(!stream.ended());
    let mut closed = h.close();
    h.serve_all();
    assert!(closed.try_recv().is_ok());
    assert!(stream.ended(), "the session's end ends the stream");
}
