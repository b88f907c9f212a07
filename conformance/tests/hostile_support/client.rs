//! The client's side of a hostile-server case: a client built for the fake server, getData
//! requests started in tasks, and the checks every case makes on their answers and on the
//! session's recovery.
//!
//! Each helper fails the test itself (with what it was waiting for or what came instead), so a
//! case reads as its script: what the server sends, and what the client must make of it.

use conformance::ephemeral_owner;
use std::time::Duration;

use bytes::Bytes;
use tokio::task::JoinHandle;
use zk_session::{
    Client, ClientBuilder, Error, ErrorCode, ProtocolViolation, SessionEvent, SessionEvents,
    SessionState,
};

use super::{get_data_reply, within, FakeServer, Peer, SESSION_ID, STEP};

/// The session timeout the fake servers grant unless a case needs another.
pub const TIMEOUT_MS: i32 = 10_000;

/// What a getData came back with.
pub type Got = Result<Bytes, Error>;

/// A client of `server`, asking for [`TIMEOUT_MS`] and reconnecting quickly.
pub fn builder(server: &FakeServer) -> ClientBuilder {
    Client::builder(&server.addr())
        .session_timeout(Duration::from_millis(TIMEOUT_MS as u64))
        // Reconnect quickly: the cases are about what happens, not about the pacing.
        .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(200))
}

/// Waits until the client reaches `want`.
pub async fn wait_state(client: &Client, want: SessionState) {
    let mut rx = client.watch_state();
    within(STEP, &format!("state {want:?}"), async {
        while rx.get_and_update() != want {
            rx.changed().await.expect("session task gone");
        }
    })
    .await;
}

/// [`connected_with`] the plain [`builder`] and [`TIMEOUT_MS`]: how most cases begin.
pub async fn connected() -> (FakeServer, Client, Peer) {
    connected_with(|b| b, TIMEOUT_MS).await
}

/// A fake server, and a client of it built (without waiting) with [`builder`] as `tweak`
/// changes it, whose first connection is accepted and granted a new session with the given
/// timeout.
pub async fn connected_with(
    tweak: impl FnOnce(ClientBuilder) -> ClientBuilder,
    timeout_ms: i32,
) -> (FakeServer, Client, Peer) {
    let mut server = FakeServer::bind().await;
    let client = tweak(builder(&server)).build().expect("build");
    let peer = server.accept_and_grant(timeout_ms).await;
    wait_state(&client, SessionState::Connected).await;
    assert_eq!(ephemeral_owner(&client), SESSION_ID);
    (server, client, peer)
}

/// Starts one getData per path, each in its own task.
pub fn spawn_gets(client: &Client, paths: &[&str]) -> Vec<(String, JoinHandle<Got>)> {
    paths
        .iter()
        .map(|p| {
            let c = client.clone();
            let path = p.to_string();
            let task = tokio::spawn(async move { c.get_data(&path).await.map(|(d, _)| d) });
            (p.to_string(), task)
        })
        .collect()
}

/// Every result of [`spawn_gets`], each of which must come within [`STEP`], exactly once
/// (a oneshot answered once; a dropped one would show up as `Closed`, which fails here).
pub async fn collect(handles: Vec<(String, JoinHandle<Got>)>) -> Vec<(String, Got)> {
    let mut out = Vec::new();
    for (path, h) in handles {
        let r = within(STEP, &format!("the answer to getData {path}"), h)
            .await
            .expect("the request task panicked");
        assert_typed(&r);
        out.push((path, r));
    }
    out
}

/// Ok, or a typed error: a code (the server's, or ConnectionLoss, RequestTimeout,
/// SessionExpired from the session), or a protocol error. `Closed` would mean the request
/// was dropped unanswered.
pub fn assert_typed(r: &Got) {
    match r {
        Ok(_)
        | Err(Error::Code(_))
        | Err(Error::Protocol(_))
        | Err(Error::ProtocolViolation(_)) => {}
        Err(other) => panic!("not an answer the protocol allows here: {other:?}"),
    }
}

/// The next session event. A subscriber made after the client reached a state never gets
/// the event that announced it.
pub async fn next_event(events: &mut SessionEvents) -> Option<SessionEvent> {
    within(STEP, "a session event", events.next()).await
}

/// The result for `path` among `got`. Requests started together reach the wire in any order,
/// so cases match replies to requests by the path the server read with each xid.
pub fn result_for<'a>(got: &'a [(String, Got)], path: &str) -> &'a Got {
    &got.iter()
        .find(|(p, _)| p == path)
        .unwrap_or_else(|| panic!("no result for {path}"))
        .1
}

pub fn is_connection_loss(r: &Got) -> bool {
    matches!(r, Err(Error::Code(ErrorCode::ConnectionLoss)))
}

/// Every request of `pending` fails with ConnectionLoss: the connection they were sent on
/// went before their replies came (or could be trusted).
pub async fn assert_all_lost(pending: Vec<(String, JoinHandle<Got>)>) {
    for (path, r) in collect(pending).await {
        assert!(is_connection_loss(&r), "{path}: {r:?}");
    }
}

/// The request for `broken` fails with ProtocolViolation (its reply was skipped over or
/// never came while the server answered something else: the protocol is broken), and every
/// other one of `pending` with ConnectionLoss (its reply, if any, came on a stream that could
/// not be trusted).
pub async fn assert_violation_for(pending: Vec<(String, JoinHandle<Got>)>, broken: &str) {
    for (path, r) in collect(pending).await {
        if path == broken {
            assert!(
                matches!(
                    r,
                    Err(Error::ProtocolViolation(
                        ProtocolViolation::ReplyOutOfOrder { .. }
                    ))
                ),
                "{path}: {r:?}"
            );
        } else {
            assert!(is_connection_loss(&r), "{path}: {r:?}");
        }
    }
}

/// One getData of `path` that `peer` answers with `data` at `zxid`; the client must return
/// exactly that.
pub async fn round_trip(client: &Client, peer: &mut Peer, path: &str, zxid: i64, data: &[u8]) {
    let h = spawn_gets(client, &[path]);
    let xids = peer.expect_get_data(1).await;
    assert_eq!(xids[0].1, path, "the server must get the getData just made");
    peer.write(&get_data_reply(xids[0].0, zxid, data))
        .await
        .unwrap();
    assert_eq!(&collect(h).await[0].1.as_ref().unwrap()[..], data);
}

/// The session still works: a getData comes back with the well-behaved server's answer.
pub async fn assert_serves(client: &Client, path: &str) {
    let (data, _) = within(STEP, "a request after recovery", client.get_data(path))
        .await
        .expect("a request after recovery");
    assert_eq!(&data[..], path.as_bytes());
}

/// The end of most cases: the client reconnects, resuming its session with `last_zxid` as the
/// last zxid it saw, gets it back (with `timeout_ms`) from a well-behaved server, and the
/// session serves requests again.
pub async fn assert_recovers(
    server: &mut FakeServer,
    client: &Client,
    last_zxid: i64,
    timeout_ms: i32,
) {
    server.resume_and_serve(last_zxid, timeout_ms).await;
    wait_state(client, SessionState::Connected).await;
    assert_serves(client, "/after").await;
}

/// A frame length prefix, on its own.
pub fn length_prefix(len: i32) -> [u8; 4] {
    len.to_be_bytes()
}
