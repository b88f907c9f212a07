//! The client against hostile and broken servers: a scripted fake server (see
//! `hostile_support`) sends what a case calls for, and the client must answer every pending
//! request exactly once with a value or a typed error, drop the connection when the stream
//! cannot be trusted, reconnect with the same session, never panic, and never wait past its
//! timeouts. Every wait in these tests is bounded, so a hang fails the test instead of
//! stalling it.
//!
//! This file: broken streams (frames, replies, notifications); slow, silent and hanging-up
//! servers are in hostile_server_timeouts.rs.

mod hostile_support;

use conformance::ephemeral_owner;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use hostile_support::{
    client::*, connect_response_frame, frame, get_data_reply, notification_frame, reply_frame,
    vm_rss_kib, within, FakeServer, PASSWD, SESSION_ID, STEP,
};
use zk_proto::{ErrorResponse, Response};
use zk_session::{AddWatchMode, Error, ErrorCode, EventType, SessionEvent, SessionState};

// ----- 1. a length prefix over the maximum -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn length_prefix_over_the_maximum_drops_the_connection() {
    let (mut server, client, mut peer) = connected().await;

    // One good reply first, so the reconnection has a zxid to report.
    let zxid = peer.next_zxid();
    round_trip(&client, &mut peer, "/first", zxid, b"first").await;

    let rss_before = vm_rss_kib();
    let pending = spawn_gets(&client, &["/a", "/b", "/c", "/d", "/e"]);
    peer.expect_get_data(5).await;
    // 0x100000 is one more than the default limit (0xfffff); then a stream of bytes the client
    // must not wait for.
    let mut hostile = BytesMut::new();
    hostile.put_slice(&length_prefix(0x10_0000));
    hostile.put_bytes(0, 256 * 1024);
    let closed = peer
        .expect_drop(
            &hostile,
            "the client must drop the connection after the bad length",
        )
        .await;
    assert!(closed < Duration::from_secs(2), "dropped after {closed:?}");
    assert_all_lost(pending).await;
    if let (Some(before), Some(after)) = (rss_before, vm_rss_kib()) {
        // Coarse: nothing near the declared megabyte (or the bytes behind it) was buffered.
        assert!(
            after < before + 16 * 1024,
            "RSS grew from {before} KiB to {after} KiB"
        );
    }

    assert_recovers(&mut server, &client, zxid, TIMEOUT_MS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_max_frame_len_is_the_exact_limit() {
    const MAX: usize = 4096;
    let (mut server, client, mut peer) = connected_with(|b| b.max_frame_len(MAX), TIMEOUT_MS).await;

    // A reply of exactly MAX bytes is fine: header 16 + data length 4 + data + Stat 68.
    let data = vec![b'x'; MAX - 16 - 4 - 68];
    let h = spawn_gets(&client, &["/exact"]);
    let xids = peer.expect_get_data(1).await;
    let zxid = peer.next_zxid();
    let reply = get_data_reply(xids[0].0, zxid, &data);
    assert_eq!(reply.len(), MAX + 4);
    peer.write(&reply).await.unwrap();
    let got = collect(h).await;
    assert_eq!(got[0].1.as_ref().unwrap().len(), data.len());

    // One byte more is refused: the connection goes, the request gets ConnectionLoss.
    let h = spawn_gets(&client, &["/too-big"]);
    let xids = peer.expect_get_data(1).await;
    let mut big = get_data_reply(xids[0].0, zxid, &[b'y'; MAX - 16 - 4 - 68 + 1]);
    assert_eq!(big.len(), MAX + 5);
    big.truncate(64); // the prefix is enough; the client must not wait for the rest
    peer.expect_drop(&big, "the client must drop the connection")
        .await;
    let got = collect(h).await;
    assert!(is_connection_loss(&got[0].1), "{:?}", got[0].1);

    // The same limit applies to the connect response: an over-long one is a failed attempt,
    // and the client tries again with the same session.
    let (mut peer, _) = server.accept_resuming().await;
    peer.expect_drop(
        &length_prefix(MAX as i32 + 1),
        "the client must give up on that handshake",
    )
    .await;
    assert_recovers(&mut server, &client, zxid, TIMEOUT_MS).await;
}

// ----- 2. a negative length -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negative_length_drops_the_connection() {
    let (mut server, client, mut peer) = connected().await;
    let pending = spawn_gets(&client, &["/a", "/b", "/c"]);
    peer.expect_get_data(3).await;
    peer.expect_drop(
        &length_prefix(-1),
        "the client must drop the connection after a negative length",
    )
    .await;
    assert_all_lost(pending).await;

    // The reconnection's handshake gets i32::MIN as its length: another failed attempt.
    let (mut peer, _) = server.accept_resuming().await;
    peer.expect_drop(
        &length_prefix(i32::MIN),
        "the client must give up on that handshake",
    )
    .await;

    assert_recovers(&mut server, &client, 0, TIMEOUT_MS).await;
}

// ----- 3. a truncated frame, then close -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_frame_then_close() {
    let (mut server, client, mut peer) = connected().await;
    let mut events = client.session_events();
    let pending = spawn_gets(&client, &["/a", "/b", "/c"]);
    let xids = peer.expect_get_data(3).await;
    // The first reply, cut off after 30 of its bytes.
    let reply = get_data_reply(xids[0].0, 0x200, b"never complete");
    peer.write(&reply[..30]).await.unwrap();
    drop(peer);
    assert_all_lost(pending).await;
    assert_eq!(next_event(&mut events).await, Some(SessionEvent::Suspended));

    // A handshake cut short the same way is a failed attempt.
    let (mut peer, _) = server.accept_resuming().await;
    peer.write(&connect_response_frame(TIMEOUT_MS, true)[..20])
        .await
        .unwrap();
    drop(peer);

    // The cut-off reply's zxid was never seen: the client still reports 0.
    server.resume_and_serve(0, TIMEOUT_MS).await;
    assert_eq!(
        next_event(&mut events).await,
        Some(SessionEvent::Reconnected)
    );
    assert_serves(&client, "/after").await;
}

// ----- 4. a reply whose xid matches nothing pending -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reply_for_an_xid_nothing_waits_for() {
    let (mut server, client, mut peer) = connected().await;

    // Nothing pending at all.
    peer.expect_drop(
        &get_data_reply(4242, 0x300, b"?"),
        "a reply to nothing must drop the connection",
    )
    .await;

    // Requests pending, and a reply with an xid none of them has.
    let (mut peer, req) = server.accept_resuming().await;
    assert_eq!(
        req.last_zxid_seen, 0,
        "the stray reply's zxid does not count"
    );
    peer.write(&connect_response_frame(TIMEOUT_MS, true))
        .await
        .unwrap();
    wait_state(&client, SessionState::Connected).await;
    let pending = spawn_gets(&client, &["/a", "/b", "/c"]);
    let xids = peer.expect_get_data(3).await;
    let stray = xids.iter().map(|(x, _)| x).max().unwrap() + 1000;
    peer.expect_drop(
        &get_data_reply(stray, 0x300, b"?"),
        "the client must drop the connection",
    )
    .await;
    // The oldest request never got its reply while the server answered another.
    assert_violation_for(pending, &xids[0].1).await;

    assert_recovers(&mut server, &client, 0, TIMEOUT_MS).await;
}

// ----- 5. replies out of order -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_out_of_order() {
    let (mut server, client, mut peer) = connected().await;
    let pending = spawn_gets(&client, &["/one", "/two"]);
    let xids = peer.expect_get_data(2).await;
    let (first, second) = (&xids[0], &xids[1]);
    // Both replies in one write, the second request's first.
    let mut swapped = get_data_reply(second.0, 0x400, second.1.as_bytes());
    swapped.extend_from_slice(&get_data_reply(first.0, 0x401, first.1.as_bytes()));
    peer.expect_drop(&swapped, "the client must drop the connection")
        .await;
    // The first request's reply was skipped over; the second's came on a stream that could
    // not be trusted.
    assert_violation_for(pending, &first.1).await;
    // Neither zxid was taken.
    assert_recovers(&mut server, &client, 0, TIMEOUT_MS).await;
}

// ----- 6. a body that does not parse -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reply_body_that_does_not_parse() {
    let (mut server, client, mut peer) = connected().await;
    let pending = spawn_gets(&client, &["/a", "/b", "/c"]);
    let xids = peer.expect_get_data(3).await;

    // An error reply carries no body; junk after its header is ignored, as the Java client
    // does.
    let zxid = peer.next_zxid();
    let mut err_reply = BytesMut::new();
    err_reply.put_i32(xids[0].0);
    err_reply.put_i64(zxid);
    err_reply.put_i32(ErrorCode::NoNode.code());
    err_reply.put_slice(b"junk that is not a body");
    // A success whose data claims 0x7fff0000 bytes with ten behind it.
    let mut bad = BytesMut::new();
    bad.put_i32(xids[1].0);
    bad.put_i64(zxid);
    bad.put_i32(0);
    bad.put_i32(0x7fff_0000);
    bad.put_bytes(7, 10);
    let mut bytes = frame(&err_reply);
    bytes.extend_from_slice(&frame(&bad));
    peer.expect_drop(&bytes, "the client must drop the connection")
        .await;

    let got = collect(pending).await;
    let (a, b, c) = (
        result_for(&got, &xids[0].1),
        result_for(&got, &xids[1].1),
        result_for(&got, &xids[2].1),
    );
    assert!(matches!(a, Err(Error::Code(ErrorCode::NoNode))), "{a:?}");
    assert!(matches!(b, Err(Error::Protocol(_))), "{b:?}");
    assert!(is_connection_loss(c), "{c:?}");

    assert_recovers(&mut server, &client, zxid, TIMEOUT_MS).await;
}

// ----- 7. a connect response with a 36-byte body -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_response_without_the_read_only_byte_is_accepted() {
    let mut server = FakeServer::bind().await;
    let connecting = tokio::spawn(builder(&server).connect());
    let mut peer = server.accept_new().await;
    let resp = connect_response_frame(TIMEOUT_MS, false);
    assert_eq!(resp.len(), 4 + 36);
    peer.write(&resp).await.unwrap();
    let client = within(STEP, "connect", connecting)
        .await
        .unwrap()
        .expect("a 36-byte connect response must be accepted");
    assert_eq!(client.state(), SessionState::Connected);
    assert_eq!(ephemeral_owner(&client), SESSION_ID);
    assert_eq!(&client.session_password()[..], &PASSWD);
    assert_eq!(client.negotiated_timeout(), Duration::from_secs(10));

    // A normal request works.
    round_trip(&client, &mut peer, "/x", 0x500, b"x").await;

    // And so does a reconnection answered the same way.
    drop(peer);
    let (mut peer, req) = server.accept_resuming().await;
    assert_eq!(req.last_zxid_seen, 0x500);
    peer.write(&connect_response_frame(TIMEOUT_MS, false))
        .await
        .unwrap();
    wait_state(&client, SessionState::Connected).await;
    tokio::spawn(peer.serve());
    assert_serves(&client, "/after").await;
}

// ----- 8. garbage after a valid frame -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_after_a_valid_frame() {
    let (mut server, client, mut peer) = connected().await;

    // A good reply and, in the same write, bytes that read as a negative length.
    let pending = spawn_gets(&client, &["/a", "/b"]);
    let xids = peer.expect_get_data(2).await;
    let mut bytes = get_data_reply(xids[0].0, 0x600, b"good");
    bytes.extend_from_slice(b"\xde\xad\xbe\xefgarbage");
    peer.expect_drop(&bytes, "the client must drop the connection")
        .await;
    let got = collect(pending).await;
    let answered = result_for(&got, &xids[0].1);
    assert_eq!(
        &answered.as_ref().expect("the good reply counts")[..],
        b"good"
    );
    let lost = result_for(&got, &xids[1].1);
    assert!(is_connection_loss(lost), "{lost:?}");

    // A good reply followed by a frame too short for a reply header.
    let (mut peer, req) = server.accept_resuming().await;
    assert_eq!(req.last_zxid_seen, 0x600);
    peer.write(&connect_response_frame(TIMEOUT_MS, true))
        .await
        .unwrap();
    let pending = spawn_gets(&client, &["/c"]);
    let xids = peer.expect_get_data(1).await;
    let mut bytes = get_data_reply(xids[0].0, 0x601, b"good too");
    bytes.extend_from_slice(&frame(&[1, 2, 3]));
    peer.expect_drop(&bytes, "the client must drop the connection")
        .await;
    let got = collect(pending).await;
    assert_eq!(&got[0].1.as_ref().unwrap()[..], b"good too");

    // Garbage right behind the connect response, in the same write: noticed at once, not
    // when something else arrives or the read timeout (6.7 s here) runs out.
    let (mut peer, req) = server.accept_resuming().await;
    assert_eq!(req.last_zxid_seen, 0x601);
    let mut bytes = connect_response_frame(TIMEOUT_MS, true);
    bytes.extend_from_slice(b"\xff\xff\xff\xf0");
    let closed = peer
        .expect_drop(&bytes, "the client must drop the connection")
        .await;
    assert!(closed < Duration::from_secs(2), "dropped after {closed:?}");

    assert_recovers(&mut server, &client, 0x601, TIMEOUT_MS).await;
}

// ----- 9. a notification for a path the client never watched -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notification_for_an_unwatched_path_is_ignored() {
    let (mut server, client, mut peer) = connected().await;
    let mut events = client.session_events();

    // One real watch, on /w.
    let c = client.clone();
    let watching = tokio::spawn(async move { c.get_data_watch("/w").await });
    let (h, _) = peer.expect_request().await;
    peer.write(&get_data_reply(h.xid, 0x700, b"w"))
        .await
        .unwrap();
    let (_, _, watch) = within(STEP, "getData with a watch", watching)
        .await
        .unwrap()
        .expect("getData with a watch");

    // Notifications nobody asked for, and ones of the wrong kind or unknown type for /w.
    let pending = spawn_gets(&client, &["/still-here"]);
    let xids = peer.expect_get_data(1).await;
    let mut bytes = BytesMut::new();
    for (t, p) in [
        (EventType::NodeDataChanged, "/never-watched"),
        (EventType::NodeDeleted, "/"),
        (EventType::NodeCreated, ""),
        (EventType::NodeDeleted, "no-leading-slash"),
        (EventType::NodeChildrenChanged, "/w"),
        (EventType::Unknown(42), "/w"),
        (EventType::None, "/w"),
    ] {
        bytes.extend_from_slice(&notification_frame(t, p));
    }
    bytes.extend_from_slice(&get_data_reply(xids[0].0, 0x701, b"still here"));
    peer.write(&bytes).await.unwrap();
    let got = collect(pending).await;
    assert_eq!(&got[0].1.as_ref().unwrap()[..], b"still here");

    // The connection stayed up, and the real watch is still armed and fires on its event.
    tokio::pin!(watch);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), &mut watch)
            .await
            .is_err(),
        "no stray notification may fire the watch on /w"
    );
    peer.write(&notification_frame(EventType::NodeDataChanged, "/w"))
        .await
        .unwrap();
    let ev = within(STEP, "the watch on /w", watch)
        .await
        .expect("the watch fires");
    assert_eq!(
        (ev.event_type(), ev.path()),
        (EventType::NodeDataChanged, "/w")
    );
    assert!(server
        .try_accept(Duration::from_millis(300))
        .await
        .is_none());
    assert_eq!(client.state(), SessionState::Connected);
    assert!(
        tokio::time::timeout(Duration::from_millis(10), next_event(&mut events))
            .await
            .is_err(),
        "no state change"
    );
    round_trip(&client, &mut peer, "/more", 0x702, b"more").await;
}

/// A server that floods a persistent watch whose reader is slow: the client holds at most the
/// watch's buffer (4 MiB by default), counts what it drops, and stays connected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notification_flood_on_a_persistent_watch_costs_bounded_memory() {
    const EVENTS: usize = 10_000;
    let (_server, client, mut peer) = connected().await;
    let c = client.clone();
    let adding =
        tokio::spawn(async move { c.add_watch("/", AddWatchMode::PersistentRecursive).await });
    let (h, _) = peer.expect_request().await;
    let zxid = peer.next_zxid();
    // addWatch is answered with an ErrorResponse body of 0.
    let ok = Response::Error(ErrorResponse { err: 0 });
    peer.write(&reply_frame(h.xid, zxid, 0, Some(&ok)))
        .await
        .unwrap();
    let mut watch = within(STEP, "addWatch", adding)
        .await
        .unwrap()
        .expect("addWatch");

    // 10,000 events of 10 KB paths (100 MB) that nobody reads yet, then a reply behind them:
    // once it is in, every notification before it has been handled.
    let pending = spawn_gets(&client, &["/after"]);
    let xids = peer.expect_get_data(1).await;
    let rss_before = vm_rss_kib();
    let path = format!("/{}", "f".repeat(10_000));
    let one = notification_frame(EventType::NodeDataChanged, &path);
    let mut chunk = BytesMut::with_capacity(one.len() * 100);
    for _ in 0..EVENTS / 100 {
        chunk.clear();
        for _ in 0..100 {
            chunk.extend_from_slice(&one);
        }
        peer.write(&chunk).await.unwrap();
    }
    let zxid = peer.next_zxid();
    peer.write(&get_data_reply(xids[0].0, zxid, b"after"))
        .await
        .unwrap();
    let got = collect(pending).await;
    assert_eq!(&got[0].1.as_ref().unwrap()[..], b"after");
    if let (Some(before), Some(after)) = (rss_before, vm_rss_kib()) {
        assert!(
            after < before + 32 * 1024,
            "RSS grew from {before} KiB to {after} KiB"
        );
    }

    let (mut held, mut missed) = (0usize, 0u64);
    while held + (missed as usize) < EVENTS {
        match within(STEP, "the flooded watch", watch.next()).await {
            Some(Ok(ev)) => {
                assert_eq!(ev.path().len(), path.len());
                held += 1;
            }
            Some(Err(Error::WatchLagged { missed: m })) => missed += m,
            other => panic!("{other:?} after {held} events and {missed} missed"),
        }
    }
    assert_eq!(held + missed as usize, EVENTS);
    assert!(
        held * path.len() <= (4 << 20) + path.len(),
        "{held} events of {} bytes held",
        path.len()
    );
    assert!(held > 100, "only {held} events held");
    assert_eq!(client.state(), SessionState::Connected);
    let zxid = peer.next_zxid();
    round_trip(&client, &mut peer, "/more", zxid, b"more").await;
}
