//! The crate documentation's example, a user's failover test, run for real: a client keeps
//! its session and its ephemeral znode when the ensemble member it is connected to is killed.

use std::time::{Duration, Instant};

use zk_session::{Client, CreateOptions, SessionState};
use zk_testkit::Ensemble;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_survives_the_death_of_its_server() {
    let ens = Ensemble::start(3).unwrap();
    let client = Client::builder(&ens.connect_string())
        .session_timeout(Duration::from_secs(10))
        .connect()
        .await
        .unwrap();
    client
        .create("/my-service", b"up", CreateOptions::ephemeral())
        .await
        .unwrap();
    let session = client.session_id();

    let server = client.connected_server().unwrap();
    let victim = ens
        .servers()
        .iter()
        .position(|s| s.connect_string() == server)
        .unwrap();
    ens.server(victim).kill9();
    assert!(!ens.server(victim).is_running());

    let deadline = Instant::now() + Duration::from_secs(30);
    while client.state() != SessionState::Connected
        || client.connected_server() == Some(server.clone())
    {
        assert!(Instant::now() < deadline, "no failover");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(client.session_id(), session);
    assert!(client.exists("/my-service").await.unwrap().is_some());

    // The member comes back with its data and rejoins.
    ens.server(victim).start().unwrap();
    ens.wait_healthy(Duration::from_secs(30)).unwrap();
    client.close().await.unwrap();
}
