//! zk-session against a real 3-node ensemble while servers die, stall and come back.

use std::{
    sync::atomic::{AtomicUsize, Ordering},
    sync::Arc,
    time::Duration,
};

use conformance::{Ensemble, Mode};
use zk_session::{
    AddWatchMode, Client, CreateOptions, Error, ErrorCode, EventType, OnExpiry, ReadOnly,
    RetryPolicy, SessionEvent, SessionState, Version,
};

fn ensemble() -> Ensemble {
    Ensemble::builder()
        .size(3)
        .max_session_timeout(Duration::from_secs(30))
        .start()
        .expect("ensemble")
}

fn index_of(ens: &Ensemble, server: &str) -> usize {
    (0..ens.len())
        .find(|&i| server.ends_with(&format!(":{}", ens.server(i).client_port())))
        .expect("connected to a member")
}

/// Runs a blocking harness call (server start/stop) without stalling the runtime.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

async fn wait_state(c: &Client, want: SessionState, within: Duration) {
    let mut rx = c.watch_state();
    let r = tokio::time::timeout(within, async {
        loop {
            if rx.get_and_update() == want {
                return;
            }
            rx.changed().await.unwrap();
        }
    })
    .await;
    assert!(
        r.is_ok(),
        "state {:?} not reached, still {:?}",
        want,
        c.state()
    );
}

fn retry() -> RetryPolicy {
    RetryPolicy::exponential_backoff(Duration::from_millis(100), 20)
        .with_max_sleep(Duration::from_secs(1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_with_1000_requests_in_flight() {
    let ens = ensemble();
    let c = Client::builder(&ens.connect_string())
        .session_timeout(Duration::from_secs(20))
        .connect()
        .await
        .unwrap();
    c.create("/k", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    let sid = c.session_id();
    let victim = index_of(&ens, &c.connected_server().unwrap());
    let mut events = c.session_events();
    let answered = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..1000 {
        let c = c.clone();
        let answered = answered.clone();
        tasks.push(tokio::spawn(async move {
            let r = if i % 2 == 0 {
                c.set_data("/k", b"x", Version::Any).await.map(drop)
            } else {
                c.get_data("/k").await.map(drop)
            };
            answered.fetch_add(1, Ordering::SeqCst);
            r
        }));
    }
    blocking(|| ens.server(victim).kill9());
    let (mut ok, mut lost) = (0, 0);
    for t in tasks {
        match tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .expect("request hung")
            .unwrap()
        {
            Ok(()) => ok += 1,
            Err(Error::Code(ErrorCode::ConnectionLoss)) => lost += 1,
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert_eq!(ok + lost, 1000);
    assert_eq!(
        answered.load(Ordering::SeqCst),
        1000,
        "a request was answered twice or never"
    );
    println!("after kill -9: {ok} succeeded, {lost} connection loss");
    wait_state(&c, SessionState::Connected, Duration::from_secs(30)).await;
    assert_eq!(c.session_id(), sid, "the session must survive the failover");
    assert_ne!(index_of(&ens, &c.connected_server().unwrap()), victim);
    let mut saw = Vec::new();
    while let Ok(Some(ev)) = tokio::time::timeout(Duration::from_millis(200), events.next()).await {
        saw.push(ev);
    }
    assert!(
        saw.contains(&SessionEvent::Suspended) && saw.contains(&SessionEvent::Reconnected),
        "{saw:?}"
    );
    // The session goes on: writes work through another member.
    retry()
        .run(|| c.set_data("/k", b"after", Version::Any))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_fire_for_changes_made_while_disconnected() {
    let ens = ensemble();
    // The watching client can only reach server 0, so it stays away while 0 is down.
    let a = 0;
    let watcher = Client::builder(&ens.server(a).connect_string())
        .session_timeout(Duration::from_secs(20))
        .connect()
        .await
        .unwrap();
    let others: Vec<String> = (1..3).map(|i| ens.server(i).connect_string()).collect();
    let writer = Client::builder(&others.join(",")).connect().await.unwrap();
    writer
        .create("/w", b"0", &CreateOptions::persistent())
        .await
        .unwrap();
    writer
        .create("/w/c", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    watcher.sync("/").await.unwrap();
    let sid = watcher.session_id();
    let (_, _, data_w) = watcher.get_data_watch("/w").await.unwrap();
    let (none, exist_w) = watcher.exists_watch("/w/new").await.unwrap();
    assert!(none.is_none());
    let (_, _, child_w) = watcher.get_children_watch("/w/c").await.unwrap();
    let mut rec = watcher
        .add_watch("/w", AddWatchMode::PersistentRecursive)
        .await
        .unwrap();

    blocking(|| ens.server(a).kill9());
    wait_state(&watcher, SessionState::Suspended, Duration::from_secs(10)).await;
    retry()
        .run(|| writer.set_data("/w", b"1", Version::Any))
        .await
        .unwrap();
    let persistent = CreateOptions::persistent();
    retry()
        .run(|| writer.create("/w/new", b"", &persistent))
        .await
        .unwrap();
    retry()
        .run(|| writer.create("/w/c/kid", b"", &persistent))
        .await
        .unwrap();
    blocking(|| ens.server(a).restart()).unwrap();
    wait_state(&watcher, SessionState::Connected, Duration::from_secs(30)).await;
    assert_eq!(watcher.session_id(), sid);
    let t = Duration::from_secs(10);
    let ev = tokio::time::timeout(t, data_w)
        .await
        .expect("data watch")
        .unwrap();
    assert_eq!(
        (ev.event_type, ev.path.as_str()),
        (EventType::NodeDataChanged, "/w")
    );
    let ev = tokio::time::timeout(t, exist_w)
        .await
        .expect("exist watch")
        .unwrap();
    assert_eq!(
        (ev.event_type, ev.path.as_str()),
        (EventType::NodeCreated, "/w/new")
    );
    let ev = tokio::time::timeout(t, child_w)
        .await
        .expect("child watch")
        .unwrap();
    assert_eq!(
        (ev.event_type, ev.path.as_str()),
        (EventType::NodeChildrenChanged, "/w/c")
    );
    // The persistent recursive watch survived the reconnect: it sees what happens next.
    writer
        .set_data("/w/c/kid", b"k", Version::Any)
        .await
        .unwrap();
    let ev = tokio::time::timeout(t, async {
        loop {
            let ev = rec
                .next()
                .await
                .expect("stream open")
                .expect("no event dropped");
            if ev.path == "/w/c/kid" && ev.event_type == EventType::NodeDataChanged {
                return ev;
            }
        }
    })
    .await
    .expect("recursive watch after reconnect");
    assert_eq!(ev.path, "/w/c/kid");
}

/// Connects a client to a follower, so that stalling its server does not also stall the
/// ensemble's leader election.
async fn client_on_follower(ens: &Ensemble) -> Client {
    for _ in 0..20 {
        let c = Client::builder(&ens.connect_string())
            .session_timeout(Duration::from_secs(4))
            .connect()
            .await
            .unwrap();
        let i = index_of(ens, &c.connected_server().unwrap());
        if Some(i) != ens.leader_index() {
            return c;
        }
        c.close().await.unwrap();
    }
    panic!("never connected to a follower");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigstop_past_the_read_timeout_moves_to_another_member() {
    let ens = ensemble();
    let c = client_on_follower(&ens).await;
    let sid = c.session_id();
    let stalled = index_of(&ens, &c.connected_server().unwrap());
    let negotiated = c.negotiated_timeout();
    assert!(negotiated <= Duration::from_secs(4), "{negotiated:?}");
    blocking(|| ens.server(stalled).pause()).unwrap();
    // Nothing arrives from the stalled server: after 2/3 of the timeout the client leaves it.
    wait_state(&c, SessionState::Suspended, negotiated * 2).await;
    wait_state(&c, SessionState::Connected, Duration::from_secs(30)).await;
    assert_eq!(c.session_id(), sid);
    assert_ne!(index_of(&ens, &c.connected_server().unwrap()), stalled);
    c.create("/after-stop", b"", &CreateOptions::ephemeral())
        .await
        .unwrap();
    blocking(|| ens.server(stalled).resume()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_closed_from_a_second_connection_expires_the_first() {
    let ens = ensemble();
    let a = 0;
    let c = Client::builder(&ens.server(a).connect_string())
        .session_timeout(Duration::from_secs(20))
        .on_session_expiry(OnExpiry::End)
        .connect()
        .await
        .unwrap();
    c.create("/exp", b"", &CreateOptions::ephemeral())
        .await
        .unwrap();
    let (_, watch) = c.exists_watch("/never").await.unwrap();
    let mut events = c.session_events();
    blocking(|| ens.server(a).pause()).unwrap();
    wait_state(&c, SessionState::Suspended, Duration::from_secs(20)).await;
    // Requests made while disconnected wait for the reconnect.
    let pending: Vec<_> = (0..10)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { c.get_data("/").await })
        })
        .collect();
    // Another connection takes the session over and closes it.
    let others: Vec<String> = (1..3).map(|i| ens.server(i).connect_string()).collect();
    let thief = Client::builder(&others.join(","))
        .resume_session(c.session_id().unwrap(), c.session_password())
        .connect()
        .await
        .unwrap();
    assert_eq!(thief.session_id(), c.session_id());
    thief.close().await.unwrap();
    blocking(|| ens.server(a).resume()).unwrap();
    wait_state(
        &c,
        SessionState::Ended(zk_session::EndReason::SessionExpired),
        Duration::from_secs(30),
    )
    .await;
    for p in pending {
        let r = tokio::time::timeout(Duration::from_secs(10), p)
            .await
            .expect("hung")
            .unwrap();
        assert_eq!(r.unwrap_err().code(), Some(ErrorCode::SessionExpired));
    }
    let e = tokio::time::timeout(Duration::from_secs(5), watch)
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::SessionExpired));
    assert_eq!(
        c.get_data("/").await.unwrap_err().code(),
        Some(ErrorCode::SessionExpired)
    );
    let mut saw = Vec::new();
    while let Ok(Some(ev)) = tokio::time::timeout(Duration::from_millis(200), events.next()).await {
        saw.push(ev);
    }
    assert_eq!(
        saw.last(),
        Some(&SessionEvent::Ended(zk_session::EndReason::SessionExpired)),
        "{saw:?}"
    );
    // The ephemeral went with the session; a new client works.
    let fresh = Client::builder(&ens.connect_string())
        .connect()
        .await
        .unwrap();
    assert!(fresh.exists("/exp").await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_connection_for_the_session_timeout_is_reported_lost() {
    let ens = ensemble();
    let a = 0;
    let c = Client::builder(&ens.server(a).connect_string())
        .session_timeout(Duration::from_secs(4))
        .on_session_expiry(OnExpiry::End)
        .connect()
        .await
        .unwrap();
    let negotiated = c.negotiated_timeout();
    let mut events = c.session_events();
    blocking(|| ens.server(a).kill9());
    wait_state(&c, SessionState::Suspended, negotiated).await;
    // A request made while suspended waits for a reconnect, but not past the point where the
    // session is presumed lost: then it fails with ConnectionLoss (no request timeout is set).
    let waiting = tokio::spawn({
        let c = c.clone();
        async move { c.exists("/").await }
    });
    wait_state(&c, SessionState::Lost, negotiated * 3).await;
    assert_eq!(events.next().await, Some(SessionEvent::Suspended));
    assert_eq!(events.next().await, Some(SessionEvent::Lost));
    let r = tokio::time::timeout(Duration::from_secs(1), waiting)
        .await
        .expect("a waiting request outlived the session's presumed loss")
        .unwrap();
    assert_eq!(r.unwrap_err().code(), Some(ErrorCode::ConnectionLoss));
    // While lost, requests fail at once.
    let r = tokio::time::timeout(Duration::from_secs(1), c.get_data("/"))
        .await
        .expect("a request made while lost waited");
    assert_eq!(r.unwrap_err().code(), Some(ErrorCode::ConnectionLoss));
    // The ensemble expired the session meanwhile: on return the verdict is Expired.
    tokio::time::sleep(negotiated).await;
    blocking(|| ens.server(a).restart()).unwrap();
    wait_state(
        &c,
        SessionState::Ended(zk_session::EndReason::SessionExpired),
        Duration::from_secs(30),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_mode_serves_reads_then_finds_a_read_write_server() {
    // A 3.8 server in read-only mode refuses global sessions ("Refusing global session
    // reconnection in RO mode") and cannot create one: read-only clients need local sessions.
    let ens = Ensemble::builder()
        .size(3)
        .read_only_mode(true)
        .config("localSessionsEnabled", "true")
        .config("localSessionsUpgradingEnabled", "true")
        .start()
        .expect("ensemble");
    let setup = Client::builder(&ens.connect_string())
        .connect()
        .await
        .unwrap();
    setup
        .create("/ro", b"data", &CreateOptions::persistent())
        .await
        .unwrap();
    setup.close().await.unwrap();
    // Leave server 2 alone without a quorum: it turns read-only.
    blocking(|| {
        ens.server(0).stop().unwrap();
        ens.server(1).stop().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while ens.server(2).mode() != Some(Mode::ReadOnly) {
            assert!(
                std::time::Instant::now() < deadline,
                "server 2 never turned read-only"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let c = Client::builder(&ens.connect_string())
        .read_only(ReadOnly::Allowed)
        .session_timeout(Duration::from_secs(4))
        .first_connection_timeout(Duration::from_secs(60))
        .connect()
        .await
        .unwrap();
    assert_eq!(c.state(), SessionState::ConnectedReadOnly);
    assert_eq!(&c.get_data("/ro").await.unwrap().0[..], b"data");
    let e = c
        .create("/ro/x", b"", &CreateOptions::persistent())
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NotReadOnly));
    let mut events = c.session_events();
    // The client keeps probing for a read-write server (`isro`) and moves there on its own.
    blocking(|| {
        ens.server(0).restart().unwrap();
        ens.server(1).restart().unwrap();
    });
    wait_state(&c, SessionState::Connected, Duration::from_secs(60)).await;
    let mut saw = Vec::new();
    while let Ok(Some(ev)) = tokio::time::timeout(Duration::from_millis(200), events.next()).await {
        saw.push(ev);
    }
    // The read-only session was local to that server: the quorum gives a new one.
    assert!(
        matches!(saw.last(), Some(SessionEvent::Connected { .. })),
        "{saw:?}"
    );
    retry()
        .run(|| c.set_data("/ro", b"rw again", Version::Any))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_config_and_reconfig() {
    let ens = Ensemble::builder()
        .size(3)
        .reconfig_enabled(true)
        .skip_acl(true)
        .start()
        .expect("ensemble");
    let c = Client::builder(&ens.connect_string())
        .connect()
        .await
        .unwrap();
    let (config, stat) = c.get_config().await.unwrap();
    let text = String::from_utf8(config.to_vec()).unwrap();
    assert!(
        text.contains("server.1=") && text.contains("server.3="),
        "{text}"
    );
    // Remove member 3 (myid 3), then put it back, conditional on the config version.
    let leaving = if ens.leader_index() == Some(2) {
        "2"
    } else {
        "3"
    };
    let (after, _) = c.reconfig(None, Some(leaving), None, None).await.unwrap();
    let after = String::from_utf8(after.to_vec()).unwrap();
    assert!(!after.contains(&format!("server.{leaving}=")), "{after}");
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("server.{leaving}=")))
        .unwrap()
        .to_owned();
    let (_, stat2) = c.get_config().await.unwrap();
    assert!(stat2.mzxid > stat.mzxid);
    let e = c
        .reconfig(Some(&line), None, None, Some(stat.mzxid))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::BadVersion));
    let (back, _) = c
        .reconfig(Some(&line), None, None, Some(stat2.mzxid))
        .await
        .unwrap();
    assert!(String::from_utf8(back.to_vec()).unwrap().contains(&line));
}

/// A relay in front of one server that relays its first connection, swallows the second
/// (accepts it, then neither answers nor closes it, as ZooKeeper 3.8.0 does with a connection
/// that arrives while it is starting up), and relays the rest.
struct SwallowingRelay {
    addr: std::net::SocketAddr,
    first: tokio::sync::oneshot::Receiver<tokio::task::AbortHandle>,
    accept: tokio::task::AbortHandle,
}

impl SwallowingRelay {
    async fn start(target: std::net::SocketAddr) -> SwallowingRelay {
        use tokio::net::{TcpListener, TcpStream};
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (first_tx, first) = tokio::sync::oneshot::channel();
        let accept = tokio::spawn(async move {
            let mut first_tx = Some(first_tx);
            let mut swallowed = Vec::new();
            for n in 0.. {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if n == 1 {
                    swallowed.push(client); // held open, never read, never closed
                    continue;
                }
                let relay = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                if let Some(tx) = first_tx.take() {
                    let _ = tx.send(relay.abort_handle());
                }
            }
        });
        SwallowingRelay {
            addr,
            first,
            accept: accept.abort_handle(),
        }
    }

    /// Drops the first connection (both ends closed), so that the client reconnects.
    async fn cut_first(&mut self) {
        (&mut self.first).await.expect("a first connection").abort();
    }
}

impl Drop for SwallowingRelay {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// A server that accepts a reconnect and never answers must not cost the session: against a
/// single server the reference client waits the whole session timeout on such a connection
/// (its per-server connect timeout is the session timeout divided by the number of servers),
/// by which time the server has expired the session. Ours gives up on it after a third of the
/// session timeout and tries again in time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_during_reconnect_does_not_cost_the_session() {
    let mut relay = SwallowingRelay::start(conformance::shared_standalone().client_addr()).await;
    let c = Client::builder(&relay.addr.to_string())
        .session_timeout(Duration::from_secs(6))
        .connect()
        .await
        .unwrap();
    let id = c.session_id();
    let mut events = c.session_events();
    relay.cut_first().await;
    let survived = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match events.next().await {
                Some(SessionEvent::Reconnected) => return true,
                Some(SessionEvent::Expired) | None => return false,
                Some(_) => {}
            }
        }
    })
    .await
    .expect("neither reconnected nor expired within 30 s");
    assert!(survived, "the session expired behind a silent connection");
    assert_eq!(c.session_id(), id);
    c.exists("/").await.unwrap();
}
