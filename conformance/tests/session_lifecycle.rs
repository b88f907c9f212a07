//! A session's life against a real standalone server: connection loss, close, heartbeats
//! and the request timeout.

mod ops_support;
mod recipes_support;

use std::time::Duration;

use conformance::{fault_proxy::FaultProxy, shared_standalone, Standalone};
use ops_support::{base, client, proxied_client, wait_for_state, within_secs};
use zk_proto::OpCode;
use zk_session::{Client, CreateOptions, Error, ErrorCode, EventType, OneshotWatch, SessionState};

/// A caller whose request fails with ConnectionLoss finds the state already Suspended: the
/// state changes before the in-flight requests are failed. (The old order, fail then publish,
/// left only a narrow window, which this test did not hit: it guards the order.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_loss_is_reported_after_the_state_changed() {
    let (proxy, c) = proxied_client(20, |b| b).await;
    let b = base(&c, "lossorder").await;
    for round in 0..3 {
        let mut held = proxy.hold_reply(OpCode::GetData, &b);
        let pending = tokio::spawn({
            let c = c.clone();
            let b = b.clone();
            async move {
                let r = c.get_data(&b).await;
                (r, c.state())
            }
        });
        let _go = recipes_support::arrived(&mut held).await;
        proxy.partition(true);
        let (r, state) = within_secs(5, pending).await.unwrap();
        assert_eq!(r.unwrap_err().code(), Some(ErrorCode::ConnectionLoss));
        assert_eq!(state, SessionState::Suspended, "round {round}");
        proxy.partition(false);
        within_secs(20, wait_for_state(&c, SessionState::Connected)).await;
    }
}

#[tokio::test]
async fn close_ends_the_session_and_its_ephemerals() {
    let c = client().await;
    let watcher = client().await;
    let b = base(&c, "close").await;
    let e = format!("{b}/e");
    c.create(&e, b"", CreateOptions::ephemeral()).await.unwrap();
    let (_, gone) = watcher.exists_watch(&e).await.unwrap();
    let mut events = c.session_events();
    c.close().await.unwrap();
    assert_eq!(
        c.state(),
        SessionState::Ended(zk_session::EndReason::Closed)
    );
    assert_eq!(
        events.next().await,
        Some(zk_session::SessionEvent::Ended(
            zk_session::EndReason::Closed
        ))
    );
    assert!(matches!(c.get_data("/").await, Err(Error::Closed)));
    let ev = tokio::time::timeout(Duration::from_secs(5), gone)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ev.event_type(), EventType::NodeDeleted);
}

/// close() is answered even when the connection drops after the closeSession went out and
/// before its reply: the client does not go back to the session it was closing (it did, and
/// close() then waited for ever while the session lived on).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_returns_when_the_connection_drops_before_its_reply() {
    let (proxy, c) = proxied_client(10, |b| b).await;
    proxy.swallow(OpCode::CloseSession, "");
    let closing = tokio::spawn({
        let c = c.clone();
        async move { c.close().await }
    });
    recipes_support::eventually("the closeSession reached the proxy", || async {
        proxy.count(OpCode::CloseSession) == 1
    })
    .await;
    // The connection drops; the server (which never saw the close) would take the session back.
    proxy.partition(true);
    proxy.partition(false);
    within_secs(5, closing).await.unwrap().unwrap();
    assert_eq!(
        c.state(),
        SessionState::Ended(zk_session::EndReason::Closed)
    );
    assert!(matches!(c.exists("/").await, Err(Error::Closed)));
}

#[tokio::test]
async fn heartbeats_keep_an_idle_session_alive() {
    // Idle for several session timeouts: only pings flow. A short timeout, but not the
    // server's 400 ms minimum, so a loaded machine's scheduling delays do not end the session.
    let c = Client::builder(&shared_standalone().connect_string())
        .session_timeout(Duration::from_millis(1500))
        .connect()
        .await
        .unwrap();
    let negotiated = c.negotiated_timeout();
    assert_eq!(negotiated, Duration::from_millis(1500));
    let sid = c.session_id();
    let b = base(&c, "heartbeat").await;
    c.create(&format!("{b}/e"), b"", CreateOptions::ephemeral())
        .await
        .unwrap();
    let mut events = c.session_events();
    tokio::time::sleep(negotiated * 5).await;
    assert_eq!(c.state(), SessionState::Connected);
    assert_eq!(c.session_id(), sid);
    assert!(
        tokio::time::timeout(Duration::from_millis(10), events.next())
            .await
            .is_err(),
        "the connection changed state while idle"
    );
    assert!(c.exists(&format!("{b}/e")).await.unwrap().is_some());
}

#[tokio::test]
async fn request_timeout_fails_requests_made_while_disconnected() {
    let zk = Standalone::start().unwrap();
    let c = Client::builder(&zk.connect_string())
        .session_timeout(Duration::from_secs(4))
        .operation_timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap();
    let mut state = c.watch_state();
    zk.kill9();
    // Wait until the client knows; a request sent before that fails with ConnectionLoss.
    tokio::time::timeout(
        Duration::from_secs(10),
        state.wait_for(|s| s == SessionState::Suspended),
    )
    .await
    .unwrap()
    .unwrap();
    let e = c.get_data("/").await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RequestTimeout));
    // add_auth too: the credentials stay queued for the next connection.
    let e = c.add_auth("digest", b"late:secret").await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RequestTimeout));
    // Nothing is left behind: once the server is back, requests work again.
    zk.restart().unwrap();
    let mut ok = false;
    for _ in 0..50 {
        if c.get_data("/").await.is_ok() {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ok);
}

/// A client behind its own fault proxy (30 s session) with an ephemeral znode, and another
/// client (kept, or its watch ends) with a watch on that znode.
async fn proxied_with_ephemeral(tag: &str) -> (FaultProxy, Client, (Client, OneshotWatch)) {
    let (proxy, c) = proxied_client(30, |b| b).await;
    let watcher = client().await;
    let e = format!("{}/e", base(&watcher, tag).await);
    c.create(&e, b"", CreateOptions::ephemeral()).await.unwrap();
    let (_, gone) = watcher.exists_watch(&e).await.unwrap();
    (proxy, c, (watcher, gone))
}

/// The ephemeral goes with the closed session, far sooner than the 30 s session timeout.
async fn deleted_soon((_watcher, gone): (Client, OneshotWatch)) {
    let ev = tokio::time::timeout(Duration::from_secs(10), gone)
        .await
        .expect("the ephemeral goes with the closed session")
        .unwrap();
    assert_eq!(ev.event_type(), EventType::NodeDeleted);
}

/// A client whose last handle goes while it reconnects does not leave its session, and its
/// ephemerals, on the server until the session expires: it goes on reconnecting only to
/// close it. (The Java client and kazoo leave it to expire.)
#[tokio::test]
async fn a_client_dropped_while_reconnecting_closes_its_session_once_back() {
    let (proxy, c, gone) = proxied_with_ephemeral("dropreconnect").await;
    proxy.partition(true);
    within_secs(10, wait_for_state(&c, SessionState::Suspended)).await;
    drop(c);
    // Refused meanwhile: the client keeps trying rather than give up on the first refusal.
    tokio::time::sleep(Duration::from_millis(500)).await;
    proxy.partition(false);
    deleted_soon(gone).await;
}

/// The close of a dropped client is lost with its connection (the proxy cuts it before the
/// server has it): the client sends it again on a new connection rather than leave the
/// session, and its ephemerals, until it expires.
#[tokio::test]
async fn a_dropped_clients_close_lost_with_its_connection_is_sent_again() {
    let (proxy, c, gone) = proxied_with_ephemeral("droplostclose").await;
    proxy.cut_request(OpCode::CloseSession, "");
    drop(c);
    deleted_soon(gone).await;
    assert_eq!(
        proxy.count(OpCode::CloseSession),
        2,
        "the cut close, then the one sent again"
    );
}
