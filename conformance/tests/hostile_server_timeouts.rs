//! The client against slow, silent and hanging-up servers (a scripted fake server, see
//! `hostile_support` and hostile_server.rs): it must fail requests with typed errors at its
//! timeouts, expire sessions the server says are gone, and never storm a server with
//! reconnects. Every wait in these tests is bounded, so a hang fails the test instead of
//! stalling it.

mod hostile_support;

use std::time::{Duration, Instant};

use hostile_support::{
    client::*, connect_response_frame, connect_response_frame_for, get_data_reply, reply_frame,
    vm_rss_kib, within, FakeServer, SESSION_ID, STEP,
};
use zk_session::{ConnectError, Error, ErrorCode, OnExpiry, SessionEvent, SessionState};

// ----- 10. slow-loris: one byte per second -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_loris_reply_is_dropped_at_the_read_timeout() {
    // Negotiated 3 s: the read timeout is 2 s, and only whole frames count as received.
    const NEGOTIATED_MS: i32 = 3_000;
    let mut server = FakeServer::bind().await;
    let client = builder(&server).build().unwrap();
    let mut peer = server.accept_and_grant(NEGOTIATED_MS).await;
    let handshake_done = Instant::now();
    wait_state(&client, SessionState::Connected).await;

    let pending = spawn_gets(&client, &["/slow"]);
    let xids = peer.expect_get_data(1).await;
    let reply = get_data_reply(xids[0].0, 0x800, b"one byte at a time");
    let (sent, closed) = within(
        STEP,
        "slow-loris",
        peer.dribble(&reply, Duration::from_secs(1)),
    )
    .await;
    let closed = closed.expect("the client must give up on the connection");
    let after = closed - handshake_done;
    assert!(
        after >= Duration::from_millis(1_800) && after < Duration::from_millis(3_500),
        "dropped {after:?} after the last whole frame; read timeout 2 s"
    );
    assert!(sent < reply.len(), "{sent} of {} bytes sent", reply.len());
    let got = collect(pending).await;
    assert!(is_connection_loss(&got[0].1), "{:?}", got[0].1);

    assert_recovers(&mut server, &client, 0, NEGOTIATED_MS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_loris_handshake_is_dropped_at_the_connect_timeout() {
    let mut server = FakeServer::bind().await;
    let connecting = tokio::spawn(
        builder(&server)
            .connect_attempt_timeout(Duration::from_millis(1_500))
            .first_connection_timeout(STEP)
            .connect(),
    );
    let mut peer = server.accept_new().await;
    let start = Instant::now();
    let resp = connect_response_frame(TIMEOUT_MS, true);
    let (sent, closed) = within(
        STEP,
        "slow-loris",
        peer.dribble(&resp, Duration::from_secs(1)),
    )
    .await;
    let after = closed.expect("the client must give up on the handshake") - start;
    assert!(
        after < Duration::from_millis(2_500) && sent < resp.len(),
        "gave up after {after:?} and {sent} bytes; connect timeout 1.5 s"
    );

    // The next attempt is answered properly.
    let peer = server.accept_and_grant(TIMEOUT_MS).await;
    let client = within(STEP, "connect", connecting)
        .await
        .unwrap()
        .expect("the retry connects");
    tokio::spawn(peer.serve());
    assert_serves(&client, "/after").await;
}

// ----- 11. nothing at all -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_server_connect_times_out_and_retries() {
    let mut server = FakeServer::bind().await;
    let connecting = tokio::spawn(
        builder(&server)
            .connect_attempt_timeout(Duration::from_millis(400))
            .first_connection_timeout(Duration::from_millis(1_500))
            .connect(),
    );
    // Accept every attempt and keep it open without a word.
    let mut silent = Vec::new();
    let collecting = async {
        loop {
            silent.push(server.accept_new().await);
        }
    };
    let result = tokio::select! {
        r = connecting => r.unwrap(),
        _ = collecting => unreachable!(),
    };
    match result {
        Err(Error::ConnectTimeout {
            waited,
            last_error: Some(last),
        }) => {
            assert_eq!(waited, Duration::from_millis(1_500));
            assert!(matches!(last, ConnectError::Timeout { .. }), "{last}");
        }
        other => panic!("expected ConnectTimeout, got {other:?}"),
    }
    assert!(
        silent.len() >= 2,
        "the client must retry after its connect timeout; {} attempts",
        silent.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_server_requests_fail_with_request_timeout() {
    let mut server = FakeServer::bind().await;
    let client = builder(&server)
        .connect_attempt_timeout(Duration::from_millis(500))
        .operation_timeout(Duration::from_millis(700))
        .build()
        .unwrap();
    let first = server.accept_new().await;

    let start = Instant::now();
    let pending = spawn_gets(&client, &["/a", "/b", "/c", "/d", "/e"]);
    for (path, r) in collect(pending).await {
        assert!(
            matches!(r, Err(Error::Code(ErrorCode::RequestTimeout))),
            "{path}: {r:?}"
        );
    }
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(client.state(), SessionState::Connecting);

    // A later attempt is answered: the session starts, and the requests that timed out are
    // not sent after all; the first request the server sees is the next one.
    let mut peer = server.accept_and_grant(TIMEOUT_MS).await;
    wait_state(&client, SessionState::Connected).await;
    // round_trip checks that what the server gets is /next: timed-out requests must not be
    // sent.
    round_trip(&client, &mut peer, "/next", 0x900, b"next").await;
    drop(first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_server_timed_out_requests_do_not_pile_up() {
    // Requests made while disconnected wait in the session for a connection; those whose
    // callers gave up must not stay there for as long as the outage lasts.
    let mut server = FakeServer::bind().await;
    let client = builder(&server)
        .connect_attempt_timeout(Duration::from_secs(60))
        .operation_timeout(Duration::from_millis(1))
        .build()
        .unwrap();
    let silent = server.accept_new().await;
    let path = "/a/path/of/some/length/for/requests/that/time/out/while/disconnected";
    let mut rss = Vec::new();
    for _ in 0..12 {
        let tasks: Vec<_> = (0..10_000)
            .map(|_| {
                let c = client.clone();
                tokio::spawn(async move { c.get_data(path).await })
            })
            .collect();
        for t in tasks {
            let r = within(STEP, "a timed-out request", t).await.unwrap();
            assert!(
                matches!(r, Err(Error::Code(ErrorCode::RequestTimeout))),
                "{r:?}"
            );
        }
        rss.extend(vm_rss_kib());
    }
    if rss.len() == 12 {
        // About 400 bytes a request were kept before: 90,000 requests, some 36 MB.
        let grown = rss[11].min(rss[10]).saturating_sub(rss[2]);
        assert!(grown < 16 * 1024, "RSS grew {grown} KiB: {rss:?}");
    }
    assert_eq!(client.state(), SessionState::Connecting);
    drop(silent);
}

// ----- a connect response with timeOut 0 -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_timeout_on_the_first_connect_means_expired() {
    let mut server = FakeServer::bind().await;
    let connecting = tokio::spawn(builder(&server).connect());
    let mut peer = server.accept_new().await;
    peer.write(&connect_response_frame_for(0, 0, true))
        .await
        .unwrap();
    let r = within(STEP, "connect", connecting).await.unwrap();
    assert!(
        matches!(r, Err(Error::Code(ErrorCode::SessionExpired))),
        "{r:?}"
    );
    assert!(server
        .try_accept(Duration::from_millis(500))
        .await
        .is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_timeout_on_a_reconnect_expires_the_session() {
    let (mut server, client, mut peer) =
        connected_with(|b| b.on_session_expiry(OnExpiry::End), TIMEOUT_MS).await;
    let mut events = client.session_events();
    let c = client.clone();
    let watching = tokio::spawn(async move { c.exists_watch("/w").await });
    let (h, _) = peer.expect_request().await;
    peer.write(&reply_frame(h.xid, 0xa00, ErrorCode::NoNode.code(), None))
        .await
        .unwrap();
    let (stat, watch) = within(STEP, "exists with a watch", watching)
        .await
        .unwrap()
        .unwrap();
    assert!(stat.is_none());
    drop(peer);
    assert_eq!(next_event(&mut events).await, Some(SessionEvent::Suspended));

    let (mut peer, req) = server.accept_resuming().await;
    assert_eq!(req.last_zxid_seen, 0xa00);
    // A request made while disconnected waits for this handshake.
    let queued = spawn_gets(&client, &["/queued"]);
    tokio::time::sleep(Duration::from_millis(200)).await;
    peer.write(&connect_response_frame_for(0, 0, true))
        .await
        .unwrap();

    let got = collect(queued).await;
    assert!(
        matches!(got[0].1, Err(Error::Code(ErrorCode::SessionExpired))),
        "{:?}",
        got[0].1
    );
    let w = within(STEP, "the watch ends", watch).await;
    assert!(
        matches!(w, Err(Error::Code(ErrorCode::SessionExpired))),
        "{w:?}"
    );
    assert_eq!(
        next_event(&mut events).await,
        Some(SessionEvent::Ended(zk_session::EndReason::SessionExpired))
    );
    assert_eq!(
        client.state(),
        SessionState::Ended(zk_session::EndReason::SessionExpired)
    );
    let later = collect(spawn_gets(&client, &["/later"])).await;
    assert!(matches!(
        later[0].1,
        Err(Error::Code(ErrorCode::SessionExpired))
    ));
    assert!(
        server
            .try_accept(Duration::from_millis(500))
            .await
            .is_none(),
        "an expired session does not reconnect"
    );
}

// ----- a server that closes right after accepting -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_that_closes_right_after_accepting() {
    let mut server = FakeServer::bind().await;
    let connecting = tokio::spawn(
        builder(&server)
            .first_connection_timeout(Duration::from_millis(1_500))
            .connect(),
    );
    let closing = async {
        loop {
            drop(server.accept().await);
        }
    };
    let result = tokio::select! {
        r = connecting => r.unwrap(),
        _ = closing => unreachable!(),
    };
    match result {
        Err(Error::ConnectTimeout {
            last_error: Some(_),
            ..
        }) => {}
        other => panic!("expected ConnectTimeout, got {other:?}"),
    }
    // It retried, with backoff rather than in a tight loop.
    let attempts = server.accepted;
    assert!((2..=60).contains(&attempts), "{attempts} attempts in 1.5 s");

    // A client whose server comes good after three such closes gets its session, and a
    // request made before that is answered then.
    let mut server = FakeServer::bind().await;
    let client = builder(&server).build().unwrap();
    let early = spawn_gets(&client, &["/early"]);
    for _ in 0..3 {
        drop(server.accept().await);
    }
    let peer = server.accept_and_grant(TIMEOUT_MS).await;
    tokio::spawn(peer.serve());
    let got = collect(early).await;
    assert_eq!(&got[0].1.as_ref().unwrap()[..], b"/early");
}

// ----- a server that accepts the session and then hangs up, again and again -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_that_hangs_up_after_each_handshake_does_not_cause_a_reconnect_storm() {
    let (mut server, client, peer) = connected().await;
    drop(peer);
    let start = Instant::now();
    let hanging_up = async {
        loop {
            let (mut peer, _) = server.accept_resuming().await;
            let _ = peer.write(&connect_response_frame(TIMEOUT_MS, true)).await;
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), hanging_up).await;
    let attempts = server.accepted - 1;
    eprintln!("{attempts} reconnections in {:?}", start.elapsed());
    assert!(attempts >= 2, "{attempts} reconnections");
    assert!(attempts <= 100, "{attempts} reconnections in 2 s");
    // The session is still alive and answers.
    server.resume_and_serve(0, TIMEOUT_MS).await;
    assert_serves(&client, "/after").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_millisecond_session_timeout_fails_requests_without_a_storm() {
    // A read timeout of 0: every connection is given up at once. Requests get typed errors,
    // and the reconnections back off.
    let mut server = FakeServer::bind().await;
    let client = builder(&server).build().unwrap();
    let pending = spawn_gets(&client, &["/a", "/b", "/c"]);
    let first = server.accept_and_grant(1).await;
    let start = Instant::now();
    let granting = async {
        let mut peers = vec![first];
        loop {
            let (mut peer, _) = server.accept_resuming().await;
            let _ = peer.write(&connect_response_frame(1, true)).await;
            peers.push(peer);
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), granting).await;
    assert_all_lost(pending).await;
    let attempts = server.accepted;
    eprintln!("{attempts} connections in {:?}", start.elapsed());
    assert!(attempts <= 100, "{attempts} connections in 2 s");

    // Granted a real timeout at last, the session carries on.
    assert_recovers(&mut server, &client, 0, TIMEOUT_MS).await;
}

// ----- a server that hangs up right after the first handshake -----

/// Issue 14 #8: `connect()` returned `Err(Closed)` when the connection dropped right after
/// the handshake, before the waiter saw the Connected state, abandoning a live session.
#[tokio::test]
async fn connect_returns_the_client_when_the_connection_drops_right_after_the_handshake() {
    for attempt in 0..10 {
        let mut server = FakeServer::bind().await;
        let connecting = tokio::spawn(builder(&server).connect());
        drop(server.accept_and_grant(TIMEOUT_MS).await);
        let client = within(STEP, "connect", connecting)
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("try {attempt}: {e}"));
        assert_eq!(client.session_id(), zk_session::SessionId::new(SESSION_ID));
        // The session lives on: the client takes it back on the next connection.
        server.resume_and_serve(0, TIMEOUT_MS).await;
        assert_serves(&client, "/after").await;
    }
}
