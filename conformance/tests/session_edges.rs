//! The session at its edges, against the real server: watches given up during an outage,
//! one-shot and persistent watches on one path (ZOOKEEPER-4466), requests before any
//! connection, and sessions that expire.

mod recipes_support;

use conformance::ephemeral_owner;
use std::time::Duration;

use conformance::shared_standalone;
use recipes_support::{soon, unique_under, until_state, watches_of, Proxy};
use zk_session::{
    AddWatchMode, Client, CreateOptions, Error, ErrorCode, EventType, SessionEvent, SessionState,
    Version,
};

async fn plain_client() -> Client {
    Client::builder(&shared_standalone().connect_string())
        .session_timeout(Duration::from_secs(10))
        .connect()
        .await
        .expect("connect")
}

async fn proxied(session_timeout: Duration) -> (Proxy, Client) {
    let proxy = Proxy::start(shared_standalone().client_addr()).await;
    let c = Client::builder(&proxy.connect_string())
        .session_timeout(session_timeout)
        .connect()
        .await
        .expect("connect");
    (proxy, c)
}

/// Issue 14 #7: a watch request given up while disconnected left a RemoveWatches queued
/// that, after the reconnect, removed the fresh watch set on the same path: it never fired.
#[tokio::test]
async fn a_watch_given_up_while_disconnected_does_not_remove_the_next_watch_on_its_path() {
    let writer = plain_client().await;
    let path = unique_under("edges", "abandoned");
    writer
        .create(&path, b"0", CreateOptions::persistent())
        .await
        .unwrap();
    let (proxy, c) = proxied(Duration::from_secs(10)).await;
    proxy.partition(true);
    until_state(&c, SessionState::Suspended).await;
    let gave_up = tokio::time::timeout(Duration::from_millis(200), c.get_data_watch(&path)).await;
    assert!(gave_up.is_err(), "nothing answers while partitioned");
    proxy.partition(false);
    until_state(&c, SessionState::Connected).await;
    let (_, _, fresh) = c.get_data_watch(&path).await.unwrap();
    // Let anything the session still had queued go out before the change.
    c.exists(&path).await.unwrap();
    writer.set_data(&path, b"1", Version::Any).await.unwrap();
    let ev = soon("the fresh watch fires", fresh).await.unwrap();
    assert_eq!(ev.event_type(), EventType::NodeDataChanged);
    writer.delete(&path, Version::Any).await.unwrap();
}

/// Issue 14 #12 (ZOOKEEPER-4466 on 3.8.0): a one-shot watch set by the same session on the
/// exact path of a persistent watch replaced it on the server; after the one-shot fired the
/// persistent watch heard nothing more. Every one-shot kind, both persistent modes.
#[tokio::test]
async fn a_persistent_watch_outlives_a_one_shot_watch_on_its_path() {
    let writer = plain_client().await;
    let c = plain_client().await;
    for mode in [AddWatchMode::PersistentRecursive, AddWatchMode::Persistent] {
        for oneshot in ["get_children", "get_data", "exists"] {
            let path = unique_under("edges", "mixed");
            writer
                .create(&path, b"0", CreateOptions::persistent())
                .await
                .unwrap();
            let mut persistent = c.add_watch(&path, mode).await.unwrap();
            let case = format!("{mode:?} + {oneshot}");
            let watch = match oneshot {
                "get_data" => c.get_data_watch(&path).await.unwrap().2,
                "exists" => c.exists_watch(&path).await.unwrap().1,
                _ => c.get_children_watch(&path).await.unwrap().2,
            };
            // Fire the one-shot.
            let child = format!("{path}/c");
            if oneshot == "get_children" {
                writer
                    .create(&child, b"", CreateOptions::persistent())
                    .await
                    .unwrap();
            } else {
                writer.set_data(&path, b"1", Version::Any).await.unwrap();
            }
            soon(&format!("{case}: the one-shot"), watch)
                .await
                .expect("the one-shot fires");
            // The persistent watch still sees every change after it.
            for v in [b"2", b"3"] {
                writer.set_data(&path, v, Version::Any).await.unwrap();
                loop {
                    let ev = soon(&format!("{case}: the persistent"), persistent.next())
                        .await
                        .expect("stream open")
                        .unwrap();
                    if ev.path() == path && ev.event_type() == EventType::NodeDataChanged {
                        break;
                    }
                }
            }
            drop(persistent);
            if oneshot == "get_children" {
                writer.delete(&child, Version::Any).await.unwrap();
            }
            writer.delete(&path, Version::Any).await.unwrap();
        }
    }
}

/// The other side of ZOOKEEPER-4466: once the last persistent watch on a path is dropped
/// while a one-shot watch is held there, the server's watch (persistent, to serve both) is
/// replaced by a one-shot one: the one-shot still fires, and nothing is left behind after.
#[tokio::test]
async fn a_one_shot_watch_outlives_the_persistent_watch_on_its_path_and_leaves_nothing() {
    let writer = plain_client().await;
    let c = plain_client().await;
    let path = unique_under("edges", "downgrade");
    writer
        .create(&path, b"0", CreateOptions::persistent())
        .await
        .unwrap();
    let persistent = c.add_watch(&path, AddWatchMode::Persistent).await.unwrap();
    let (_, _, oneshot) = c.get_data_watch(&path).await.unwrap();
    drop(persistent);
    c.exists(&path).await.unwrap();
    let server = shared_standalone();
    assert_eq!(
        watches_of(server, ephemeral_owner(&c)),
        std::slice::from_ref(&path)
    );
    writer.set_data(&path, b"1", Version::Any).await.unwrap();
    let ev = soon("the one-shot fires", oneshot).await.unwrap();
    assert_eq!(ev.event_type(), EventType::NodeDataChanged);
    c.exists(&path).await.unwrap();
    assert!(
        watches_of(server, ephemeral_owner(&c)).is_empty(),
        "a watch is left on the server"
    );
    writer.delete(&path, Version::Any).await.unwrap();
}

/// Issue 14 #11: a request made before the first connection waited forever when no server
/// was reachable. It now waits the session timeout, then fails with ConnectionLoss.
#[tokio::test]
async fn a_request_before_any_connection_fails_after_the_session_timeout() {
    // A port nobody listens on: bound, then released.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let c = Client::builder(&addr.to_string())
        .session_timeout(Duration::from_millis(1500))
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(10), c.get_data("/x")).await;
    let r = r.expect("the request is answered, not left waiting");
    assert!(
        matches!(r, Err(Error::Code(ErrorCode::ConnectionLoss))),
        "{r:?}"
    );
    assert!(started.elapsed() >= Duration::from_millis(1400));
    assert_eq!(
        c.state(),
        SessionState::Connecting,
        "the client goes on trying"
    );
}

/// Issue 15: the client outlives session expiry. The session is expired from a second
/// connection that takes it over with its id and password and closes it; the handle then
/// reports Expired, gets a new session, sends its credentials again, ends its one-shot
/// watches with SessionExpired and keeps its persistent watches.
#[tokio::test]
async fn an_expired_session_is_replaced_on_the_same_handle() {
    let writer = plain_client().await;
    let path = unique_under("edges", "expiry");
    writer
        .create(&path, b"0", CreateOptions::persistent())
        .await
        .unwrap();
    let proxy = Proxy::start(shared_standalone().client_addr()).await;
    let c = Client::builder(&proxy.connect_string())
        .session_timeout(Duration::from_secs(4))
        .digest_auth("alice", "secret")
        .connect()
        .await
        .unwrap();
    let old = ephemeral_owner(&c);
    let eph = format!("{path}/eph");
    c.create(&eph, b"", CreateOptions::ephemeral())
        .await
        .unwrap();
    let mut persistent = c.add_watch(&path, AddWatchMode::Persistent).await.unwrap();
    let (_, oneshot) = c.exists_watch(&format!("{path}/none")).await.unwrap();
    let mut events = c.session_events();
    proxy.partition(true);
    until_state(&c, SessionState::Suspended).await;
    recipes_support::expire_session(&shared_standalone().connect_string(), &c).await;
    proxy.partition(false);
    let mut seen = Vec::new();
    while !matches!(seen.last(), Some(SessionEvent::Connected { .. })) {
        seen.push(soon("a new session", events.next()).await.expect("events"));
    }
    assert!(seen.contains(&SessionEvent::Expired), "{seen:?}");
    // The event of the new session carries its id.
    let Some(&SessionEvent::Connected { session_id }) = seen.last() else {
        unreachable!("the loop ends on Connected")
    };
    assert_eq!(c.session_id(), Some(session_id));
    assert!(ephemeral_owner(&c) != old && ephemeral_owner(&c) != 0);
    assert_eq!(c.state(), SessionState::Connected);
    let ended = soon("the one-shot watch ends", oneshot).await;
    assert!(
        matches!(ended, Err(Error::Code(ErrorCode::SessionExpired))),
        "{ended:?}"
    );
    assert!(
        writer.exists(&eph).await.unwrap().is_none(),
        "the old ephemeral is gone"
    );
    let me = c.who_am_i().await.unwrap();
    assert!(
        me.iter()
            .any(|i| i.auth_scheme == "digest" && i.user == "alice"),
        "{me:?}"
    );
    writer.set_data(&path, b"1", Version::Any).await.unwrap();
    loop {
        let ev = soon("the persistent watch", persistent.next())
            .await
            .expect("stream open")
            .unwrap();
        if ev.event_type() == EventType::NodeDataChanged {
            break;
        }
    }
    c.create(&eph, b"", CreateOptions::ephemeral())
        .await
        .unwrap();
    c.close().await.unwrap();
    writer.delete(&path, Version::Any).await.unwrap();
}
