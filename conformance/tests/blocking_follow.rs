//! The blocking client with `ServerList::FollowEnsemble` on a real ensemble with dynamic
//! reconfiguration: told of one member only, it learns the others from `/zookeeper/config`
//! and moves to one of them, with its session, when its member stops.

use std::time::{Duration, Instant};

use conformance::Ensemble;
use zk_session::{blocking::Client, CreateOptions, ServerList, SessionEvent};

#[test]
fn a_following_client_reaches_members_it_was_never_told_of() {
    let ens = Ensemble::start_reconfigurable(3).expect("ensemble");
    let only_first = ens.server(0).connect_string();
    let c = Client::builder(&only_first)
        .session_timeout(Duration::from_secs(20))
        .server_list(ServerList::FollowEnsemble)
        .connect_blocking()
        .unwrap();
    // Without following, the same setup has nowhere to go.
    let stuck = Client::builder(&only_first)
        .session_timeout(Duration::from_secs(20))
        .connect_blocking()
        .unwrap();
    // The follower reads the configuration right after connecting, and the new list may
    // move the connection (to spread clients): until it settles, ConnectionLoss is fair.
    std::thread::sleep(Duration::from_secs(1));
    let until = Instant::now() + Duration::from_secs(30);
    while let Err(e) = c.create("/follow", b"", CreateOptions::persistent()) {
        assert!(e.is_retryable() && Instant::now() < until, "{e}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let sid = c.session_id();
    let events = c.session_events();
    let stuck_events = stuck.session_events();
    // A follower already on another member learned of it from the configuration; one on
    // the first member must move to another when it stops.
    let first_port = format!(":{}", ens.server(0).client_port());
    let on_first = c.connected_server().unwrap().ends_with(&first_port);
    ens.server(0).stop().unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let mut moved = !on_first;
    while !moved {
        let left = until.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok(ev) => moved = ev == SessionEvent::Reconnected,
            Err(e) => panic!("not reconnected: {e}, state {:?}", c.state()),
        }
    }
    assert_eq!(c.session_id(), sid);
    let server = c.connected_server().unwrap();
    assert!(!server.ends_with(&first_port), "{server}");
    c.exists("/follow").unwrap().expect("the znode");
    // The other one lost its only server and stays away.
    let seen: Vec<_> =
        std::iter::from_fn(|| stuck_events.recv_timeout(Duration::from_secs(3)).ok()).collect();
    assert!(!seen.contains(&SessionEvent::Reconnected), "{seen:?}");
    assert!(!stuck.state().is_connected());
}
