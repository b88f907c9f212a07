//! A client that follows the ensemble's configuration across a full change of membership,
//! on a real ZooKeeper 3.8 ensemble with dynamic reconfiguration: three members join, then
//! the three original members leave and are stopped. The client, started with only the
//! original members, keeps its session, its watch, a held lock and a won leadership; so does
//! one told of the new list by `update_server_list`.

use std::time::{Duration, Instant};

use conformance::Ensemble;
use zk_recipes::{InterProcessMutex, LeaderLatch, SuspendPolicy};
use zk_session::{Client, CreateOptions, EventType, ServerList, SessionState};

const WITHIN: Duration = Duration::from_secs(60);

fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

async fn wait_connected_to(c: &Client, ports: &[u16]) {
    let deadline = Instant::now() + WITHIN;
    loop {
        let on = c.connected_server();
        let port = on
            .as_deref()
            .and_then(|s| s.rsplit(':').next())
            .and_then(|p| p.parse::<u16>().ok());
        if c.state() == SessionState::Connected && port.is_some_and(|p| ports.contains(&p)) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "not on {ports:?}: {on:?}, {:?}",
            c.state()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Removes `leaving` by reconfig; the leader leaving may cost the reply (ConnectionLoss),
/// so a retryable failure reads the config to see whether it happened. Returns the config.
async fn remove_members(admin: &Client, leaving: &str, gone: &str) -> String {
    let deadline = Instant::now() + WITHIN;
    loop {
        match admin.reconfig(None, Some(leaving), None, None).await {
            Ok((config, _)) => return String::from_utf8_lossy(&config).into_owned(),
            Err(e) if e.is_retryable() && Instant::now() < deadline => {
                eprintln!("reconfig: {e}; reading the config");
                tokio::time::sleep(Duration::from_millis(200)).await;
                if let Ok((config, _)) = admin.get_config().await {
                    let config = String::from_utf8_lossy(&config).into_owned();
                    if !config.contains(gone) {
                        return config;
                    }
                }
            }
            Err(e) => panic!("removing members {leaving}: {e:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_following_client_keeps_its_session_while_every_member_is_replaced() {
    let ens = Ensemble::start_reconfigurable(3).expect("ensemble");
    let original = ens.connect_string();
    let c = Client::builder(&original)
        .session_timeout(Duration::from_secs(20))
        .server_list(ServerList::FollowEnsemble)
        .connect()
        .await
        .unwrap();
    let sid = c.session_id();
    // Another client, told of the new list by hand.
    let manual = Client::builder(&original)
        .session_timeout(Duration::from_secs(20))
        .connect()
        .await
        .unwrap();
    let manual_sid = manual.session_id();
    c.create("/moves", b"v0", CreateOptions::persistent())
        .await
        .unwrap();
    let (_, _, watch) = c.get_data_watch("/moves").await.unwrap();
    // Likewise a lock that counts every Suspended as lost (Curator's standard policy).
    let lock = InterProcessMutex::builder(c.clone(), "/moves-lock")
        .suspend_policy(SuspendPolicy::WaitForLost)
        .build();
    let guard = lock.acquire().await.unwrap();
    // A move is a reconnect: a leader that steps down on every Suspended would hand over.
    let latch = LeaderLatch::builder(c.clone(), "/moves-leader")
        .suspend_policy(SuspendPolicy::WaitForLost)
        .start()
        .await
        .unwrap();
    tokio::time::timeout(WITHIN, latch.status().wait_for(|s| s.is_leader()))
        .await
        .expect("leading in time")
        .unwrap();

    // Three members join.
    let admin = Client::builder(&original).connect().await.unwrap();
    let joiners: Vec<_> = (4..=6)
        .map(|id| blocking(|| ens.start_joiner(id, WITHIN)).expect("joiner"))
        .collect();
    let address = ens.options().client_address;
    let joining: Vec<String> = joiners.iter().map(|j| j.server_line(address)).collect();
    admin
        .reconfig(Some(&joining.join(",")), None, None, None)
        .await
        .expect("adding members 4, 5, 6");
    // The original three leave, then are stopped for good.
    let new_ports: Vec<u16> = joiners.iter().map(|j| j.peer.client_port).collect();
    let new_list: Vec<String> = new_ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let admin = Client::builder(&new_list.join(","))
        .connect()
        .await
        .unwrap();
    let config = remove_members(&admin, "1,2,3", "server.1=").await;
    eprintln!("configuration now:\n{config}");
    assert!(!config.contains("server.1="), "{config}");
    wait_connected_to(&c, &new_ports).await;
    manual
        .update_server_list(&new_list.join(","))
        .await
        .unwrap();
    wait_connected_to(&manual, &new_ports).await;
    for i in 0..3 {
        blocking(|| ens.server(i).stop()).unwrap();
    }

    // Same session, watch, lock and leadership, on the new members only.
    wait_connected_to(&c, &new_ports).await;
    assert_eq!(c.session_id(), sid);
    wait_connected_to(&manual, &new_ports).await;
    assert_eq!(manual.session_id(), manual_sid);
    manual.exists("/moves").await.unwrap().expect("the znode");
    admin
        .set_data("/moves", b"v1", zk_session::Version::Any)
        .await
        .unwrap();
    let event = tokio::time::timeout(WITHIN, watch)
        .await
        .expect("the watch fires")
        .unwrap();
    assert_eq!(event.event_type(), EventType::NodeDataChanged);
    assert!(guard.is_held(), "{:?}", guard.lost_reason());
    assert!(latch.has_leadership());
    assert_eq!(c.get_data("/moves").await.unwrap().0, &b"v1"[..]);
    guard.release().await.unwrap();
}
