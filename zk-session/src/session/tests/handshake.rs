//! The connect handshake as input to the core: new, resumed, expired and read-only sessions,
//! malformed responses, and requests, closes and timers around it.

use std::time::Duration;

use bytes::{BufMut, BytesMut};
use zk_proto::{jute::Record, OpCode};

use super::harness::{config, frame, get_data, refused, response, Harness, SESSION, TIMEOUT_MS};
use super::sasl::{assert_no_attempt, events};
use crate::{
    session::{Action, End, Phase},
    state::{EndReason, SessionEvent, SessionState},
    Error, ErrorCode, SessionId,
};

/// The actions the core asks for now.
fn actions(h: &mut Harness) -> Vec<Action> {
    std::iter::from_fn(|| h.core.poll_action()).collect()
}

#[test]
fn a_new_session_is_asked_for_with_id_zero_and_announced_with_what_the_server_gave() {
    let mut h = Harness::new(config(3));
    let mut events_rx = h.shared.publisher.subscribe();
    let (_, request) = h.open().expect("a first attempt");
    assert_eq!((request.session_id, request.timeout), (0, TIMEOUT_MS));
    assert_eq!(&request.passwd[..], &[0; 16]);
    assert!(matches!(h.core.phase(), Phase::Handshaking { .. }));
    assert_eq!(h.shared.publisher.state(), SessionState::Connecting);
    h.respond(&response(SESSION, 4000, false));
    assert!(matches!(
        h.core.phase(),
        Phase::Connected {
            read_only: false,
            ..
        }
    ));
    assert_eq!(
        events(&mut events_rx),
        [SessionEvent::Connected {
            session_id: SessionId::new(SESSION).unwrap()
        }]
    );
    // What the handle reads is what the server gave.
    assert_eq!(h.shared.publisher.state(), SessionState::Connected);
    assert_eq!(
        h.shared
            .session_id
            .load(std::sync::atomic::Ordering::Acquire),
        SESSION
    );
    assert_eq!(
        h.shared
            .negotiated_timeout_ms
            .load(std::sync::atomic::Ordering::Acquire),
        4000
    );
    assert_eq!(&h.shared.passwd.lock().unwrap()[..], &[7; 16]);
    assert_eq!(h.shared.server.lock().unwrap().as_deref(), Some("h0:2181"));
    // Pings follow the negotiated timeout: every 4000 * 2/3 / 2 ms.
    h.advance(Duration::from_millis(1334));
    h.take_written();
    assert_eq!(h.pending.back().map(|w| w.op), Some(OpCode::Ping));
}

#[test]
fn a_resumed_session_is_asked_for_by_id_and_password_and_announced_as_reconnected() {
    let mut h = Harness::connected();
    let mut events_rx = h.shared.publisher.subscribe();
    let mut r = h.request(get_data("/a"), None);
    h.advance(Duration::from_secs(2));
    h.serve_all();
    assert!(r.answer().is_ok());
    h.cut();
    let (_, request) = h.open().expect("a reconnect");
    assert_eq!(request.session_id, SESSION);
    assert_eq!(&request.passwd[..], &[7; 16]);
    assert_eq!(request.last_zxid_seen, 10, "the zxid of the last reply");
    assert_eq!(h.shared.publisher.state(), SessionState::Suspended);
    h.respond(&response(SESSION, TIMEOUT_MS, false));
    assert_eq!(
        events(&mut events_rx),
        [SessionEvent::Suspended, SessionEvent::Reconnected]
    );
    assert_eq!(h.shared.server.lock().unwrap().as_deref(), Some("h1:2181"));
}

#[test]
fn requests_made_during_the_handshake_wait_for_it_and_go_out_behind_it() {
    let mut h = Harness::new(config(1));
    let (_, _) = h.open().expect("an attempt");
    let mut early = h.request(get_data("/a"), None);
    assert!(h.core.transmit().is_empty(), "nothing before the response");
    assert!(early.0.try_recv().is_err());
    // The response and a ping reply arrive in one read, byte by byte.
    let mut body = BytesMut::new();
    response(SESSION, TIMEOUT_MS, false).encode(&mut body);
    let mut bytes = frame(&body).to_vec();
    bytes.extend_from_slice(&super::harness::reply_frame(-2, 0, 0, None));
    let mut rbuf = BytesMut::new();
    for b in bytes {
        rbuf.put_u8(b);
        h.core.handle_input(&mut rbuf, h.now);
    }
    assert!(rbuf.is_empty());
    assert!(matches!(h.core.phase(), Phase::Connected { .. }));
    h.serve_all();
    assert!(early.answer().is_ok());
    assert_eq!(h.log.last(), Some(&(1, OpCode::GetData)));
}

#[test]
fn an_expired_session_on_reconnect_makes_a_new_one_and_a_first_one_ends() {
    // After a connection: a new session, asked for with id 0.
    let mut h = Harness::connected();
    h.advance(Duration::from_secs(2));
    h.cut();
    let mut events_rx = h.shared.publisher.subscribe();
    let _ = h.open();
    h.respond(&response(SESSION, 0, false));
    let acts = actions(&mut h);
    assert_eq!(acts.first(), Some(&Action::Disconnect), "{acts:?}");
    assert!(
        matches!(acts.get(1), Some(Action::Connect { request, .. }) if request.session_id == 0)
    );
    assert_eq!(events(&mut events_rx), [SessionEvent::Expired]);
    assert_eq!(
        h.shared
            .session_id
            .load(std::sync::atomic::Ordering::Acquire),
        0
    );
    assert!(!h.shared.ended.load(std::sync::atomic::Ordering::Acquire));
    // The first connection of a resumed session: the session ends.
    let mut cfg = config(2);
    cfg.resume = Some((SESSION, bytes::Bytes::from_static(&[7; 16])));
    let mut h = Harness::new(cfg);
    let mut waiting = h.request(get_data("/a"), None);
    let (_, request) = h.open().unwrap();
    assert_eq!(request.session_id, SESSION);
    h.respond(&response(SESSION, 0, false));
    assert_eq!(h.core.phase(), Phase::Ended(End::Expired));
    assert!(h.shared.ended.load(std::sync::atomic::Ordering::Acquire));
    assert!(matches!(
        waiting.answer(),
        Err(Error::Code(ErrorCode::SessionExpired))
    ));
    assert_no_attempt(&mut h);
}

#[test]
fn a_read_only_server_is_announced_as_such_and_probed_past() {
    let mut cfg = config(3);
    cfg.read_only = true;
    let mut h = Harness::new(cfg);
    let (host, request) = h.open().unwrap();
    assert!(request.read_only);
    h.respond(&response(SESSION, TIMEOUT_MS, true));
    assert_eq!(h.shared.publisher.state(), SessionState::ConnectedReadOnly);
    assert_eq!(actions(&mut h), [Action::ProbeReadWrite { skip: host }]);
    // A session made by a read-only server is not asked for again until a read-write
    // server has been seen.
    h.core.handle_read_write_found(2, h.now);
    let (next, request) = h.open().unwrap();
    assert_eq!((next, request.session_id), (2, 0));
    h.respond(&response(SESSION + 1, TIMEOUT_MS, false));
    assert_eq!(h.shared.publisher.state(), SessionState::Connected);
}

#[test]
fn a_bad_connect_response_fails_the_attempt_and_the_next_server_is_tried() {
    let truncated = {
        let mut b = BytesMut::new();
        response(SESSION, TIMEOUT_MS, false).encode(&mut b);
        frame(&b[..20]).to_vec()
    };
    let too_long = {
        let mut b = BytesMut::new();
        response(SESSION, TIMEOUT_MS, false).encode(&mut b);
        b.put_slice(b"xx");
        frame(&b).to_vec()
    };
    let tls_alert = vec![0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32];
    let huge = 0x7fff_0000u32.to_be_bytes().to_vec();
    let cases: [(&[u8], &str); 4] = [
        (&truncated, "bad connect response"),
        (&too_long, "bad connect response"),
        (&tls_alert, "answered with TLS"),
        (&huge, "bad connect response"),
    ];
    for (bytes, why) in cases {
        let mut h = Harness::new(config(3));
        let mut waiting = h.request(get_data("/a"), None);
        let (host, _) = h.open().unwrap();
        h.input(bytes);
        assert!(h.last_error().contains(why), "{why}: {}", h.last_error());
        let acts = actions(&mut h);
        assert_eq!(acts.first(), Some(&Action::Disconnect), "{acts:?}");
        assert!(
            matches!(acts.get(1), Some(Action::Connect { host: next, .. }) if *next == host + 1),
            "{acts:?}"
        );
        assert!(waiting.0.try_recv().is_err(), "the request still waits");
        // The next server answers, and the request goes out there.
        h.core.handle_stream_opened(host + 1, h.now);
        h.core.transmit().clear();
        h.respond(&response(SESSION, TIMEOUT_MS, false));
        h.serve_all();
        assert!(waiting.answer().is_ok());
    }
}

/// A first connection's server hangs up without a word: the core asks whether the port
/// speaks plain at all.
fn silent_hang_up() -> Harness {
    let mut h = Harness::new(config(2));
    let _ = h.open().unwrap();
    h.core.handle_disconnected(h.now);
    assert_eq!(
        actions(&mut h),
        [Action::Disconnect, Action::ProbeTls { host: 0 }]
    );
    assert!(matches!(h.core.phase(), Phase::Handshaking { host: 0 }));
    h
}

#[test]
fn a_server_that_hangs_up_or_stays_silent_fails_the_attempt() {
    let mut h = silent_hang_up();
    h.core.handle_tls_probe(0, Some(true), h.now);
    assert!(
        h.last_error().contains("instead of answering"),
        "{}",
        h.last_error()
    );
    let acts = actions(&mut h);
    assert!(
        matches!(
            acts[..],
            [Action::Disconnect, Action::Connect { host: 1, .. }]
        ),
        "{acts:?}"
    );
    // The next one accepts and never answers: the attempt is given up after its timeout
    // (the session timeout over at least three: 2 s), with a wake-up for it.
    h.core.handle_stream_opened(1, h.now);
    assert_eq!(h.advance(Duration::from_millis(1999)), 0);
    assert!(matches!(h.core.phase(), Phase::Handshaking { host: 1 }));
    h.advance(Duration::from_millis(1));
    assert!(
        h.last_error().contains("no connect response in time"),
        "{}",
        h.last_error()
    );
    // Both servers failed: the next round waits a backoff first.
    assert_eq!(actions(&mut h), [Action::Disconnect]);
    assert!(matches!(h.core.phase(), Phase::Backoff { host: 0, .. }));
    assert_eq!(h.connect_action().map(|(host, _)| host), Some(0));
}

#[test]
fn a_close_during_the_handshake_ends_the_session_and_drops_the_stream() {
    let mut h = Harness::new(config(3));
    let mut waiting = h.request(get_data("/a"), None);
    let _ = h.open().unwrap();
    let mut rx = h.close();
    assert_eq!(h.core.phase(), Phase::Ended(End::Closed));
    assert_eq!(actions(&mut h), [Action::Disconnect]);
    assert!(rx.try_recv().is_ok());
    assert!(matches!(waiting.answer(), Err(Error::Closed)));
    // A response that comes late changes nothing.
    h.respond(&response(SESSION, TIMEOUT_MS, false));
    assert_eq!(h.core.phase(), Phase::Ended(End::Closed));
    assert_eq!(
        h.shared.publisher.state(),
        SessionState::Ended(EndReason::Closed)
    );
}

#[test]
fn the_session_is_lost_while_every_handshake_times_out() {
    let mut h = Harness::connected();
    h.advance(Duration::from_secs(2));
    h.serve_all();
    h.cut();
    let mut waiting = h.request(get_data("/a"), None);
    // Every server accepts and stays silent.
    let end = h.now + Duration::from_secs(8);
    while h.now < end {
        if let Some((host, _)) = h.connect_action() {
            h.core.handle_stream_opened(host, h.now);
            h.core.transmit().clear();
        }
        h.advance(Duration::from_millis(100));
    }
    assert_eq!(h.shared.publisher.state(), SessionState::Lost);
    assert!(matches!(
        waiting.answer(),
        Err(Error::Code(ErrorCode::ConnectionLoss))
    ));
    // Lost is not the end: a server that answers takes the session back.
    assert_eq!(h.accept_as(SESSION, TIMEOUT_MS), Some(SESSION));
    assert_eq!(h.shared.publisher.state(), SessionState::Connected);
}

/// The connect request may already have made a session on the server: when every handle
/// goes during the handshake, the session is closed once the handshake is over, rather
/// than left on the server until it expires.
#[test]
fn handles_gone_during_the_handshake_close_the_session_it_makes() {
    let mut h = Harness::new(config(3));
    let _ = h.open().unwrap();
    h.core.handle_handles_gone(h.now);
    assert!(matches!(h.core.phase(), Phase::Handshaking { .. }));
    assert_eq!(actions(&mut h), []);
    handshake_then_only_the_close(&mut h);
    assert_eq!(actions(&mut h), [Action::Disconnect]);
}

/// The server accepts the session: the client sends the close and nothing else, and ends
/// when it is answered.
fn handshake_then_only_the_close(h: &mut Harness) {
    h.respond(&response(SESSION, TIMEOUT_MS, false));
    h.take_written();
    let sent: Vec<_> = h.pending.iter().map(|w| w.op).collect();
    assert_eq!(sent, [OpCode::CloseSession], "the close and nothing else");
    h.serve_all();
    assert_eq!(h.core.phase(), Phase::Ended(End::Closed));
}

/// A handshake that fails after every handle went ends the session: no other server is
/// tried for nobody.
#[test]
fn handles_gone_then_a_failed_handshake_end_the_session_without_another_attempt() {
    for fail in ["hang-up", "timeout", "expired"] {
        let mut h = Harness::new(config(3));
        let _ = h.open().unwrap();
        h.core.handle_handles_gone(h.now);
        match fail {
            "hang-up" => {
                h.core.handle_disconnected(h.now);
                h.core.handle_tls_probe(0, None, h.now);
            }
            "timeout" => {
                h.advance(Duration::from_secs(10));
            }
            _ => h.respond(&response(SESSION, 0, false)),
        }
        assert!(h.core.is_ended(), "{fail}: {:?}", h.core.phase());
        assert_no_attempt(&mut h);
    }
}

/// Before any connect request went out there is no session to close: the session ends at
/// once.
#[test]
fn handles_gone_before_the_stream_opens_end_the_session_at_once() {
    let mut h = Harness::new(config(3));
    let (host, _) = h.connect_action().unwrap();
    h.core.handle_handles_gone(h.now);
    assert_eq!(h.core.phase(), Phase::Ended(End::Closed));
    assert_eq!(actions(&mut h), [Action::Disconnect]);
    // The stream that opens late carries nothing.
    h.core.handle_stream_opened(host, h.now);
    assert!(h.core.transmit().is_empty());
}

/// A session that was connected is still on the server while the client reconnects: when
/// every handle goes then, one more attempt is made, only to close it.
#[test]
fn handles_gone_while_reconnecting_reconnect_only_to_close_the_session() {
    let mut h = Harness::connected();
    h.cut();
    h.core.handle_handles_gone(h.now);
    assert!(!h.core.is_ended(), "{:?}", h.core.phase());
    let (_, request) = h.open().expect("one more attempt");
    assert_eq!(request.session_id, SESSION, "for the session that is there");
    handshake_then_only_the_close(&mut h);
}

/// A server that does not answer is tried again, for as long as the session could still be
/// there: once it would have expired, the session ends without another attempt.
#[test]
fn handles_gone_while_reconnecting_retry_until_the_session_would_have_expired() {
    let mut h = Harness::connected();
    h.cut();
    h.core.handle_handles_gone(h.now);
    let gone_at = h.now;
    let (mut attempts, mut last_attempt) = (0, h.now);
    while let Some((host, _)) = h.connect_action() {
        (attempts, last_attempt) = (attempts + 1, h.now);
        h.core.handle_connect_failed(host, refused(), h.now);
        assert!(attempts < 1_000, "still trying at {:?}", h.now - gone_at);
    }
    assert!(attempts > 1, "tried again after a failure");
    assert_eq!(h.core.phase(), Phase::Ended(End::Closed));
    // The session timeout counts from the cut, which came just before the handles went.
    let timeout = Duration::from_millis(TIMEOUT_MS as u64);
    assert!(
        last_attempt - gone_at < timeout,
        "an attempt after the session expired"
    );
    assert_no_attempt(&mut h);
}

/// A session the ensemble expired is not on the server: nothing to close, the new one the
/// client was making is not made.
#[test]
fn handles_gone_while_replacing_an_expired_session_end_it_at_once() {
    let mut h = Harness::connected();
    h.cut();
    assert_eq!(h.accept_as(0, 0), Some(SESSION), "the server says: expired");
    h.core.handle_handles_gone(h.now);
    assert!(h.core.is_ended(), "{:?}", h.core.phase());
    assert_no_attempt(&mut h);
}

/// The close of a client whose handles are gone goes out, and the connection drops before
/// the server has it: the session is still there, so the close goes out again on the next
/// connection. (A close the user waits for is not retried: they hear the end at once.)
#[test]
fn a_close_lost_with_its_connection_is_sent_again_when_every_handle_is_gone() {
    let mut h = Harness::connected();
    h.core.handle_handles_gone(h.now);
    h.take_written();
    let sent: Vec<_> = h.pending.iter().map(|w| w.op).collect();
    assert_eq!(sent, [OpCode::CloseSession]);
    h.cut();
    assert!(!h.core.is_ended(), "{:?}", h.core.phase());
    let (_, request) = h.open().expect("one more attempt");
    assert_eq!(request.session_id, SESSION);
    handshake_then_only_the_close(&mut h);
}

/// A plain connect request that a TLS port hangs up on: the core has the driver probe the
/// port, and a port that does not answer in plain fails the attempt as expecting TLS; a
/// hang-up after a byte came, or once connected before, is an ordinary failed attempt.
#[test]
fn a_silent_hang_up_before_the_first_connection_is_probed_for_tls() {
    let mut h = silent_hang_up();
    // Bytes that come meanwhile and a second hang-up change nothing.
    h.input(&[0, 0, 0, 1, 0]);
    h.core.handle_disconnected(h.now);
    assert!(actions(&mut h).is_empty());
    // A probe answer for another host is ignored.
    h.core.handle_tls_probe(1, Some(false), h.now);
    assert!(matches!(h.core.phase(), Phase::Handshaking { host: 0 }));
    h.core.handle_tls_probe(0, Some(false), h.now);
    assert!(h.last_error().contains("TLS"), "{}", h.last_error());
    assert!(matches!(
        actions(&mut h)[..],
        [Action::Disconnect, Action::Connect { host: 1, .. }]
    ));

    // A server that said something before hanging up is not probed.
    h.core.handle_stream_opened(1, h.now);
    h.core.transmit().clear();
    h.input(&[0, 0]);
    h.core.handle_disconnected(h.now);
    let acts = actions(&mut h);
    assert!(
        !acts.iter().any(|a| matches!(a, Action::ProbeTls { .. })),
        "{acts:?}"
    );

    // Nor is a hang-up once a first connection was made.
    let mut h = Harness::connected();
    h.cut();
    let _ = h.open().unwrap();
    h.core.handle_disconnected(h.now);
    let acts = actions(&mut h);
    assert!(
        !acts.iter().any(|a| matches!(a, Action::ProbeTls { .. })),
        "{acts:?}"
    );
}
