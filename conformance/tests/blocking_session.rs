//! The blocking client's session behaviour against real servers: failover to another member
//! with the same session, watches and auth surviving it, expiry and the new session, a
//! stalled server, and requests in flight across connection cuts (each answered once).

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        mpsc::RecvTimeoutError,
        Arc,
    },
    time::{Duration, Instant},
};

use conformance::{
    expire_session,
    fault_proxy::{Direction, FaultProxy},
    shared_standalone, Ensemble,
};
use zk_session::{
    blocking::{Client, SessionEvents},
    Acl, AddWatchMode, CreateOptions, Error, ErrorCode, EventType, SessionEvent, SessionState,
    Version,
};

/// Three members that grant sessions of up to 30 s.
fn ensemble() -> Ensemble {
    let b = Ensemble::builder().max_session_timeout(Duration::from_secs(30));
    b.size(3).start().expect("ensemble")
}

/// Which member `c` is connected to.
fn member_of(ens: &Ensemble, c: &Client) -> usize {
    let on = c.connected_server().expect("connected");
    let port: u16 = on.rsplit(':').next().unwrap().parse().unwrap();
    let ports: Vec<u16> = ens.servers().iter().map(|s| s.client_port()).collect();
    ports.iter().position(|&p| p == port).expect("a member")
}

/// Waits for `want` among the events, up to `within`; returns every event seen until then.
fn wait_event(
    events: &SessionEvents,
    want: fn(&SessionEvent) -> bool,
    within: Duration,
) -> Vec<SessionEvent> {
    let until = Instant::now() + within;
    let mut seen = Vec::new();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok(ev) => {
                seen.push(ev);
                if want(&ev) {
                    return seen;
                }
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                panic!("event not seen within {within:?}; saw {seen:?}")
            }
        }
    }
}

/// Retries `f` while the connection is being re-made.
fn retry<T>(mut f: impl FnMut() -> Result<T, Error>) -> T {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        match f() {
            Ok(v) => return v,
            Err(Error::Code(ErrorCode::ConnectionLoss)) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn kill_9_with_requests_in_flight_keeps_the_session_on_another_member() {
    let ens = ensemble();
    let c = Client::builder(&ens.connect_string())
        .session_timeout(Duration::from_secs(20))
        .connect_blocking()
        .unwrap();
    c.create("/k", b"", CreateOptions::persistent()).unwrap();
    let sid = c.session_id();
    let victim = member_of(&ens, &c);
    let events = c.session_events();
    let answered = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (c, answered) = (c.clone(), answered.clone());
            std::thread::spawn(move || {
                let (mut ok, mut lost) = (0, 0);
                for i in 0..150 {
                    let r = if (t + i) % 2 == 0 {
                        c.set_data("/k", b"x", Version::Any).map(drop)
                    } else {
                        c.get_data("/k").map(drop)
                    };
                    answered.fetch_add(1, Ordering::SeqCst);
                    match r {
                        Ok(()) => ok += 1,
                        Err(Error::Code(ErrorCode::ConnectionLoss)) => lost += 1,
                        Err(e) => panic!("unexpected error {e}"),
                    }
                }
                (ok, lost)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(20));
    ens.server(victim).kill9();
    let (mut ok, mut lost) = (0, 0);
    for t in threads {
        let (o, l) = t.join().unwrap();
        (ok, lost) = (ok + o, lost + l);
    }
    assert_eq!(
        answered.load(Ordering::SeqCst),
        8 * 150,
        "answered twice or never"
    );
    println!("after kill -9: {ok} succeeded, {lost} connection loss");
    let seen = wait_event(
        &events,
        |e| *e == SessionEvent::Reconnected,
        Duration::from_secs(30),
    );
    assert!(seen.contains(&SessionEvent::Suspended), "{seen:?}");
    assert_eq!(c.state(), SessionState::Connected);
    assert_eq!(c.session_id(), sid, "the session must survive the failover");
    assert_ne!(member_of(&ens, &c), victim);
    retry(|| c.set_data("/k", b"after", Version::Any));
}

#[test]
fn watches_and_auth_survive_a_server_kill() {
    let ens = ensemble();
    let c = Client::builder(&ens.connect_string())
        .session_timeout(Duration::from_secs(20))
        .digest_auth("alice", "secret")
        .connect_blocking()
        .unwrap();
    // Only alice may read it; and credentials added later are re-sent as well.
    c.create(
        "/acl",
        b"mine",
        CreateOptions::persistent().with_acl(Acl::creator_all()),
    )
    .unwrap();
    c.add_auth("digest", b"bob:pw").unwrap();
    c.create("/w", b"0", CreateOptions::persistent()).unwrap();
    c.create("/p", b"", CreateOptions::persistent()).unwrap();
    let (_, _, oneshot) = c.get_data_watch("/w").unwrap();
    let persistent = c
        .add_watch("/p", AddWatchMode::PersistentRecursive)
        .unwrap();
    let sid = c.session_id();
    let victim = member_of(&ens, &c);
    let events = c.session_events();
    ens.server(victim).kill9();
    wait_event(
        &events,
        |e| *e == SessionEvent::Reconnected,
        Duration::from_secs(30),
    );
    assert_eq!(c.session_id(), sid);
    // Reconnected is told as the handshake ends, with the watches' re-registration
    // (SetWatches) sent but not yet answered. The server replays what a one-shot watch
    // missed but not what a persistent one did, so a change made before it has the
    // SetWatches would be lost for good: one round trip on this session (answered after the
    // SetWatches, in order) makes sure the server has it.
    c.exists("/").unwrap();

    // Changes made through another client after the failover reach the re-registered
    // watches.
    let others: Vec<String> = (0..3)
        .filter(|&i| i != victim)
        .map(|i| ens.server(i).connect_string())
        .collect();
    let writer = Client::builder(&others.join(","))
        .connect_blocking()
        .unwrap();
    writer.set_data("/w", b"1", Version::Any).unwrap();
    writer
        .create("/p/a", b"", CreateOptions::persistent())
        .unwrap();
    let mut oneshot = oneshot;
    let ev = oneshot
        .wait_timeout(Duration::from_secs(30))
        .expect("fired")
        .unwrap();
    assert_eq!(
        (ev.event_type(), ev.path()),
        (EventType::NodeDataChanged, "/w")
    );
    let ev = persistent
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (ev.event_type(), ev.path()),
        (EventType::NodeCreated, "/p/a")
    );

    // The credentials went with the session to the new server.
    assert_eq!(&retry(|| c.get_data("/acl")).0[..], b"mine");
    let who = c.who_am_i().unwrap();
    let users: Vec<&str> = who.iter().map(|i| i.user.as_str()).collect();
    assert!(
        users.contains(&"alice") && users.contains(&"bob"),
        "{who:?}"
    );
    let e = writer.get_data("/acl").unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NoAuth));
}

/// A fault proxy in front of the shared standalone server (its tasks on `rt`), and a client
/// connected through it with `session_timeout`.
fn proxied(rt: &tokio::runtime::Runtime, session_timeout: Duration) -> (FaultProxy, Client) {
    let proxy = rt.block_on(FaultProxy::start(shared_standalone().client_addr()));
    let c = Client::builder(&proxy.connect_string())
        .session_timeout(session_timeout)
        .connect_blocking()
        .unwrap();
    (proxy, c)
}

#[test]
fn an_expired_session_is_replaced_on_the_same_handle() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (proxy, c) = proxied(&rt, Duration::from_secs(20));
    let p = format!("/blocking-expiry-{}", rand::random::<u32>());
    c.create(&p, b"", CreateOptions::ephemeral()).unwrap();
    let (_, watch) = c.exists_watch(&p).unwrap();
    let old = c.session_id().unwrap();
    let events = c.session_events();
    proxy.partition(true);
    let password = c.session_password();
    expire_session(shared_standalone().client_addr(), old.get(), &password).unwrap();
    proxy.partition(false);
    let seen = wait_event(
        &events,
        |e| matches!(e, SessionEvent::Connected { .. }),
        Duration::from_secs(30),
    );
    assert!(seen.contains(&SessionEvent::Expired), "{seen:?}");
    let new = c.session_id().unwrap();
    assert_ne!(new, old, "a new session");
    assert_eq!(c.state(), SessionState::Connected);
    // The old session's ephemeral and watch went with it.
    assert!(watch.wait().is_err());
    assert_eq!(c.exists(&p).unwrap(), None);
    c.create(&p, b"", CreateOptions::ephemeral()).unwrap();
}

#[test]
fn a_server_that_stops_answering_is_left_for_a_new_connection() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (proxy, c) = proxied(&rt, Duration::from_secs(4));
    let sid = c.session_id();
    let events = c.session_events();
    // Replies stop: only the I/O thread's read timeout can notice.
    proxy.stall(Direction::ToClient, true);
    wait_event(
        &events,
        |e| *e == SessionEvent::Suspended,
        Duration::from_secs(10),
    );
    proxy.cut_connections();
    proxy.stall(Direction::ToClient, false);
    wait_event(
        &events,
        |e| *e == SessionEvent::Reconnected,
        Duration::from_secs(10),
    );
    assert_eq!(c.session_id(), sid);
    c.exists("/").unwrap();
}

/// Threads keep requests in flight while the proxy cuts the connection again and again:
/// each call returns once, with its own znode's data or ConnectionLoss.
#[test]
fn every_request_is_answered_once_across_connection_cuts() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (proxy, c) = proxied(&rt, Duration::from_secs(20));
    let b = format!("/blocking-cuts-{}", rand::random::<u32>());
    c.create(&b, b"", CreateOptions::persistent()).unwrap();
    for t in 0..8 {
        let data = format!("thread {t}");
        c.create(
            &format!("{b}/{t}"),
            data.as_bytes(),
            CreateOptions::persistent(),
        )
        .unwrap();
    }
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (c, b, stop) = (c.clone(), b.clone(), stop.clone());
            std::thread::spawn(move || {
                let (mut calls, mut ok, mut lost) = (0u64, 0u64, 0u64);
                while !stop.load(Ordering::SeqCst) {
                    calls += 1;
                    match c.get_data(&format!("{b}/{t}")) {
                        Ok((data, _)) => {
                            assert_eq!(&data[..], format!("thread {t}").as_bytes());
                            ok += 1;
                        }
                        Err(Error::Code(ErrorCode::ConnectionLoss)) => lost += 1,
                        Err(e) => panic!("unexpected error {e}"),
                    }
                }
                (calls, ok, lost)
            })
        })
        .collect();
    let events = c.session_events();
    for _ in 0..5 {
        // Each cut hits a live connection with requests on it.
        std::thread::sleep(Duration::from_millis(150));
        proxy.cut_connections();
        let reconnected = |e: &SessionEvent| *e == SessionEvent::Reconnected;
        wait_event(&events, reconnected, Duration::from_secs(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    let (mut ok, mut lost) = (0, 0);
    for t in threads {
        let (calls, o, l) = t.join().unwrap();
        assert_eq!(calls, o + l, "each call answered exactly once");
        (ok, lost) = (ok + o, lost + l);
    }
    println!("across 5 cuts: {ok} answered, {lost} connection loss");
    assert!(
        ok > 0 && lost > 0,
        "{ok} ok, {lost} lost: the cuts must have hit requests"
    );
    let conns = proxy.connections();
    assert!(
        conns >= 6,
        "reconnected after each cut: {conns} connections"
    );
    retry(|| c.get_data(&format!("{b}/0")));
}

/// A reply that does not come within the operation timeout is `RequestTimeout` for its
/// caller; when it comes later it goes nowhere, and the session carries on.
#[test]
fn a_late_reply_is_a_request_timeout_and_the_session_carries_on() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let proxy = rt.block_on(FaultProxy::start(shared_standalone().client_addr()));
    let c = Client::builder(&proxy.connect_string())
        .session_timeout(Duration::from_secs(20))
        .operation_timeout(Duration::from_millis(300))
        .connect_blocking()
        .unwrap();
    let p = format!("/blocking-late-{}", rand::random::<u32>());
    c.create(&p, b"late", CreateOptions::persistent()).unwrap();
    proxy.stall(Direction::ToClient, true);
    let e = c.get_data(&p).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RequestTimeout), "{e}");
    let e = c.exists(&p).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RequestTimeout), "{e}");
    proxy.stall(Direction::ToClient, false);
    // The late replies arrive first, for callers gone; this one gets its own.
    assert_eq!(&c.get_data(&p).unwrap().0[..], b"late");
    assert_eq!(c.exists(&p).unwrap().unwrap().data_length, 4);
    assert_eq!(c.state(), SessionState::Connected);
}
