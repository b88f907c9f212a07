//! expire_session against a real server: a live session is closed from outside (its
//! ephemeral znode goes, its client learns of the expiry), a dead one is reported as such.

use std::time::Duration;

use zk_proto::OpCode;
use zk_session::{Client, CreateOptions, EndReason, OnExpiry, SessionState};
use zk_testkit::{expire_session, fault_proxy::FaultProxy, shared_standalone, SessionExpiry};

const SOON: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_client_finds_its_session_expired() {
    let server = shared_standalone().client_addr();
    let proxy = FaultProxy::start(server).await;
    let client = Client::builder(&proxy.connect_string())
        .session_timeout(Duration::from_secs(20))
        .on_session_expiry(OnExpiry::End)
        .connect()
        .await
        .unwrap();
    let path = format!("/testkit-expiry-{}", std::process::id());
    client
        .create(&path, b"", CreateOptions::ephemeral())
        .await
        .unwrap();

    proxy.partition(true);
    let (id, password) = (
        client.session_id().unwrap().get(),
        client.session_password(),
    );
    let outcome = tokio::task::spawn_blocking(move || expire_session(server, id, &password))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome, SessionExpiry::Closed);
    assert_eq!(
        proxy.count(OpCode::CloseSession),
        0,
        "not through the proxy"
    );

    let observer = Client::builder(&server.to_string())
        .connect()
        .await
        .unwrap();
    assert!(
        observer.exists(&path).await.unwrap().is_none(),
        "ephemeral gone"
    );

    proxy.partition(false);
    let mut state = client.watch_state();
    // With OnExpiry::End the expiry is the client's end.
    let expired = SessionState::Ended(EndReason::SessionExpired);
    tokio::time::timeout(SOON, state.wait_for(|s| s == expired))
        .await
        .expect("the client learns of the expiry")
        .unwrap();
    observer.close().await.unwrap();
}

#[test]
fn an_unknown_session_is_already_expired() {
    let server = shared_standalone().client_addr();
    let outcome = expire_session(server, 0x7eed_0000_0000_0001, &[7; 16]).unwrap();
    assert_eq!(outcome, SessionExpiry::AlreadyExpired);
}
