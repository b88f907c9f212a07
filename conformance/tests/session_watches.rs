//! zk-session's watches against a real standalone server: one-shot and persistent watches,
//! their removal when dropped, and their re-registration after a reconnect.

mod ops_support;
mod recipes_support;

use std::time::Duration;

use conformance::shared_standalone;
use ops_support::{base, client, proxied_client, reconnect_through, within_secs};
use zk_session::{
    AddWatchMode, Client, CreateOptions, Error, ErrorCode, EventType, Version, WatcherType,
};

#[tokio::test]
async fn watches_fire_once_and_persistent_watches_stream() {
    let c = client().await;
    let other = client().await;
    let b = base(&c, "watch").await;
    let p = format!("{b}/w");
    // exists on a missing znode leaves a watch for its creation.
    let (stat, created) = c.exists_watch(&p).await.unwrap();
    assert_eq!(stat, None);
    other
        .create(&p, b"", CreateOptions::persistent())
        .await
        .unwrap();
    let ev = within(created).await.unwrap();
    assert_eq!(
        (ev.event_type(), ev.path()),
        (EventType::NodeCreated, p.as_str())
    );
    // Two data watches on one path both fire, once.
    let (_, _, w1) = c.get_data_watch(&p).await.unwrap();
    let (_, _, w2) = c.get_data_watch(&p).await.unwrap();
    let (_, _, kids) = c.get_children_watch(&b).await.unwrap();
    other.set_data(&p, b"x", Version::Any).await.unwrap();
    for w in [w1, w2] {
        assert_eq!(
            within(w).await.unwrap().event_type(),
            EventType::NodeDataChanged
        );
    }
    other.delete(&p, Version::Any).await.unwrap();
    let ev = within(kids).await.unwrap();
    assert_eq!(
        (ev.event_type(), ev.path()),
        (EventType::NodeChildrenChanged, b.as_str())
    );

    // ZooKeeper 3.8 keeps one watch mode per path and connection (ZOOKEEPER-4466, fixed in
    // 3.9): a second mode on the same path replaces the first. So each mode gets its own path.
    let rec = format!("{b}/rec");
    let dir = format!("{b}/dir");
    for d in [&rec, &dir] {
        c.create(d, b"", CreateOptions::persistent()).await.unwrap();
    }
    let mut recursive = c
        .add_watch(&rec, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    let mut persistent = c.add_watch(&dir, AddWatchMode::Persistent).await.unwrap();
    let deep = format!("{rec}/x");
    other
        .create(&deep, b"", CreateOptions::persistent())
        .await
        .unwrap();
    other
        .create(&format!("{deep}/y"), b"", CreateOptions::persistent())
        .await
        .unwrap();
    other.set_data(&deep, b"1", Version::Any).await.unwrap();
    other
        .delete(&format!("{deep}/y"), Version::Any)
        .await
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..4 {
        let ev = within(recursive.next()).await.unwrap().unwrap();
        seen.push((ev.event_type(), ev.into_path()));
    }
    assert_eq!(
        seen,
        vec![
            (EventType::NodeCreated, deep.clone()),
            (EventType::NodeCreated, format!("{deep}/y")),
            (EventType::NodeDataChanged, deep.clone()),
            (EventType::NodeDeleted, format!("{deep}/y")),
        ]
    );
    // The persistent watch sees its own znode's children change, every time.
    for i in 0..3 {
        other
            .create(&format!("{dir}/c{i}"), b"", CreateOptions::persistent())
            .await
            .unwrap();
        let ev = within(persistent.next()).await.unwrap().unwrap();
        assert_eq!(
            (ev.event_type(), ev.path()),
            (EventType::NodeChildrenChanged, dir.as_str())
        );
    }
    // check/remove watches.
    c.check_watches(&rec, WatcherType::Any).await.unwrap();
    c.remove_watches(&rec, WatcherType::Any).await.unwrap();
    assert_eq!(
        c.check_watches(&rec, WatcherType::Any)
            .await
            .unwrap_err()
            .code(),
        Some(ErrorCode::NoWatcher)
    );
    assert!(within(recursive.next()).await.is_none());
}

/// A persistent watch nobody reads holds no more than its buffer: the events over it are
/// dropped and counted, the reader hears how many once it has read the ones held, and the
/// stream goes on. The client's own writes make the events, so each write's reply comes
/// after its notification and nothing is still on the wire when the reading starts.
#[tokio::test]
async fn a_persistent_watch_not_read_holds_its_buffer_and_reports_what_it_dropped() {
    const WRITES: usize = 300;
    let setup = client().await;
    let b = base(&setup, "watchbuf").await;
    let p = format!("{b}/n");
    setup
        .create(&p, b"", CreateOptions::persistent())
        .await
        .unwrap();
    // Room for about 20 events of this path: an event counts its path and ~50 bytes.
    let c = Client::builder(&shared_standalone().connect_string())
        .persistent_watch_buffer(20 * (p.len() + 48))
        .connect()
        .await
        .unwrap();
    let mut w = c.add_watch(&p, AddWatchMode::Persistent).await.unwrap();
    let writes: Vec<_> = (0..WRITES)
        .map(|i| {
            let (c, p) = (c.clone(), p.clone());
            tokio::spawn(
                async move { c.set_data(&p, i.to_string().as_bytes(), Version::Any).await },
            )
        })
        .collect();
    for w in writes {
        w.await.unwrap().unwrap();
    }

    let mut held = 0;
    let missed = loop {
        match within(w.next()).await.expect("stream open") {
            Ok(ev) => {
                assert_eq!(
                    (ev.event_type(), ev.path()),
                    (EventType::NodeDataChanged, p.as_str())
                );
                held += 1;
            }
            Err(Error::WatchLagged { missed }) => break missed,
            Err(e) => panic!("{e}"),
        }
    };
    assert!((10..=30).contains(&held), "{held} events held");
    assert_eq!(
        held + missed as usize,
        WRITES,
        "every event held or counted"
    );

    // Caught up: the next change arrives as usual, and nothing more is reported missing.
    c.set_data(&p, b"after", Version::Any).await.unwrap();
    let ev = within(w.next()).await.unwrap().unwrap();
    assert_eq!(ev.event_type(), EventType::NodeDataChanged);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), w.next())
            .await
            .is_err(),
        "no further item"
    );
}

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    within_secs(5, f).await
}

/// Dropping the last watch of a kind removes that server-side watch (checked with
/// checkWatches, which sees child watches too, unlike the `wchc` command).
#[tokio::test]
async fn dropping_the_last_watch_removes_it_on_the_server() {
    let c = client().await;
    let b = base(&c, "dropwatch").await;
    let (_, _, w) = c.get_data_watch(&b).await.unwrap();
    c.check_watches(&b, WatcherType::Data).await.unwrap();
    drop(w);
    until_no_watcher(&c, &b, WatcherType::Data).await;

    let (_, _, w) = c.get_children_watch(&b).await.unwrap();
    c.check_watches(&b, WatcherType::Children).await.unwrap();
    drop(w);
    until_no_watcher(&c, &b, WatcherType::Children).await;

    // exists on a missing znode leaves a data watch for its creation.
    let missing = format!("{b}/missing");
    let (stat, w) = c.exists_watch(&missing).await.unwrap();
    assert!(stat.is_none());
    c.check_watches(&missing, WatcherType::Data).await.unwrap();
    drop(w);
    until_no_watcher(&c, &missing, WatcherType::Data).await;

    let w = c.add_watch(&b, AddWatchMode::Persistent).await.unwrap();
    drop(w);
    until_no_watcher(&c, &b, WatcherType::Any).await;
}

/// A watch dropped while another request that sets a watch on the same path is in flight is
/// removed once that request is answered (the removal used to be skipped for good).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_dropped_during_another_registration_on_its_path_is_removed() {
    const OP_GET_CHILDREN2: i32 = 12;
    let (proxy, c) = proxied_client(20, |b| b).await;
    let b = base(&c, "deferdrop").await;
    let (_, _, data_watch) = c.get_data_watch(&b).await.unwrap();
    let mut held = proxy.hold_reply(OP_GET_CHILDREN2, &b);
    let children = tokio::spawn({
        let c = c.clone();
        let b = b.clone();
        async move { c.get_children_watch(&b).await }
    });
    let go = recipes_support::arrived(&mut held).await;
    drop(data_watch);
    // Let the session task take the drop before the reply comes.
    tokio::time::sleep(Duration::from_millis(200)).await;
    go.send(()).unwrap();
    let (_, _, child_watch) = children.await.unwrap().unwrap();
    until_no_watcher(&c, &b, WatcherType::Data).await;
    c.check_watches(&b, WatcherType::Children).await.unwrap();
    drop(child_watch);
}

/// Waits (a second at most) until the server has no watch of `watcher_type` on `path` for
/// this session. The removal goes out before any later request on the same connection.
async fn until_no_watcher(c: &Client, path: &str, watcher_type: WatcherType) {
    for _ in 0..50 {
        match c.check_watches(path, watcher_type).await {
            Err(e) if e.code() == Some(ErrorCode::NoWatcher) => return,
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    panic!("the server still has a {watcher_type:?} watch on {path}");
}

/// A one-shot watch whose event has arrived but was never awaited is gone on the server too:
/// dropping it must not send a removeWatches (which the server would answer with NoWatcher).
/// A watch dropped before it fired still is removed (counted through the same proxy).
#[tokio::test]
async fn dropping_a_fired_watch_sends_no_remove_watches() {
    const OP_REMOVE_WATCHES: i32 = 18;
    let (proxy, c) = proxied_client(20, |b| b).await;
    let b = base(&c, "firedwatch").await;
    let (_, _, fired) = c.get_data_watch(&b).await.unwrap();
    let (_, _, child_fired) = c.get_children_watch(&b).await.unwrap();
    // The server sends the notifications before the reply to the write that triggers them,
    // so once the reply is in, both events have been handed to the watches.
    c.set_data(&b, b"x", Version::Any).await.unwrap();
    c.create(&format!("{b}/c"), b"", CreateOptions::persistent())
        .await
        .unwrap();
    drop(fired);
    drop(child_fired);
    // Requests after the drops go out behind anything the drops sent.
    c.exists(&b).await.unwrap();
    assert_eq!(proxy.count(OP_REMOVE_WATCHES), 0, "{:?}", proxy.counts());
    // The control: an unfired watch, dropped, is removed on the server.
    let (_, _, unfired) = c.get_data_watch(&b).await.unwrap();
    drop(unfired);
    c.exists(&b).await.unwrap();
    assert_eq!(proxy.count(OP_REMOVE_WATCHES), 1, "{:?}", proxy.counts());
    assert_eq!(
        c.check_watches(&b, WatcherType::Data)
            .await
            .unwrap_err()
            .code(),
        Some(ErrorCode::NoWatcher)
    );
}

#[tokio::test]
async fn watches_dropped_at_any_moment_leave_nothing_on_the_server() {
    let c = client().await;
    let b = base(&c, "dropany").await;
    for i in 0..50 {
        c.create(&format!("{b}/{i}"), b"", CreateOptions::persistent())
            .await
            .unwrap();
    }
    // Cancel watch-setting calls at every stage: before sending, in flight, after the reply.
    for round in 0..4u64 {
        let mut tasks = Vec::new();
        for i in 0..50 {
            let c = c.clone();
            let p = format!("{b}/{i}");
            tasks.push(tokio::spawn(async move {
                match i % 3 {
                    0 => drop(c.get_data_watch(&p).await),
                    1 => drop(c.exists_watch(&p).await),
                    _ => drop(c.get_children_watch(&p).await),
                }
            }));
        }
        tokio::time::sleep(Duration::from_micros(200 * round)).await;
        for t in &tasks {
            t.abort();
        }
        for t in tasks {
            let _ = t.await;
        }
    }
    // Give the removals a round trip, then ask the server which watches this session has.
    c.sync("/").await.unwrap();
    c.get_data("/").await.unwrap();
    let addr = shared_standalone().client_addr();
    let wchc = conformance::four_letter_word(addr, "wchc", Duration::from_secs(5)).unwrap();
    let ours: Vec<&str> = wchc.lines().filter(|l| l.contains(&b)).collect();
    assert!(ours.is_empty(), "watches left on the server: {ours:?}");
}

/// Watches whose paths add up to more than the server's 1 MB frame limit survive a reconnect:
/// they are re-registered in several SetWatches/SetWatches2 requests, each under 128 KB of
/// path text (one request would be refused by the server), and all of them fire afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_watches_are_re_registered_in_batches() {
    re_register_many_watches(zk_proto::DEFAULT_MAX_FRAME_LEN, 1200).await;
}

/// The same with a client frame limit below the 128 KB batch size: every batch still fits
/// the client's own limit, so no watch is left out of the re-registration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_are_re_registered_within_a_small_max_frame_len() {
    re_register_many_watches(48 * 1024, 300).await;
}

async fn re_register_many_watches(max_frame_len: usize, n: usize) {
    const OP_SET_WATCHES: i32 = 101;
    const OP_SET_WATCHES2: i32 = 105;
    const BATCH_PATH_BYTES: usize = 128 * 1024;
    let (proxy, c) = proxied_client(20, |b| b.max_frame_len(max_frame_len)).await;
    let writer = client().await;
    let b = base(&writer, "manywatches").await;
    let rec_base = base(&writer, "manywatches-rec").await;
    // About 1,000 bytes a path, more in all than one frame of `max_frame_len` can carry.
    let long = "w".repeat(1000);
    let paths: Vec<String> = (0..n).map(|i| format!("{b}/{long}-{i:05}")).collect();
    let path_bytes: usize = paths.iter().map(|p| p.len()).sum::<usize>() + rec_base.len();
    assert!(path_bytes > max_frame_len);

    // Exists watches on znodes that do not exist yet, all set at once.
    let mut pending = Vec::with_capacity(n);
    for p in &paths {
        let c = c.clone();
        let p = p.clone();
        pending.push(tokio::spawn(async move { c.exists_watch(&p).await }));
    }
    let mut watches = Vec::with_capacity(n);
    for t in pending {
        let (stat, w) = t.await.unwrap().unwrap();
        assert!(stat.is_none());
        watches.push(w);
    }
    let mut rec = c
        .add_watch(&rec_base, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    let sid = c.session_id();
    assert_eq!(
        proxy.count(OP_SET_WATCHES) + proxy.count(OP_SET_WATCHES2),
        0
    );

    // Cut the connection and let the client back: it resumes the session and re-registers.
    reconnect_through(&proxy, &c).await;
    assert_eq!(c.session_id(), sid);
    // A request sent after the reconnect is answered after every SetWatches before it.
    c.exists(&b).await.unwrap();
    let batches = proxy.count(OP_SET_WATCHES) + proxy.count(OP_SET_WATCHES2);
    let at_least = path_bytes.div_ceil(BATCH_PATH_BYTES.min(max_frame_len)) as u64;
    assert!(
        batches >= at_least,
        "{batches} SetWatches requests for {path_bytes} bytes of paths: {:?}",
        proxy.counts()
    );
    assert!(proxy.count(OP_SET_WATCHES2) >= 1, "{:?}", proxy.counts());

    // Every re-registered watch fires.
    let mut creates = Vec::with_capacity(n);
    for p in &paths {
        let w = writer.clone();
        let p = p.clone();
        creates.push(tokio::spawn(async move {
            w.create(&p, b"", CreateOptions::persistent()).await
        }));
    }
    for t in creates {
        t.await.unwrap().unwrap();
    }
    for (w, p) in watches.into_iter().zip(&paths) {
        let ev = within_secs(10, w)
            .await
            .expect("exists watch after reconnect");
        assert_eq!(
            (ev.event_type(), ev.path()),
            (EventType::NodeCreated, p.as_str())
        );
    }
    let kid = format!("{rec_base}/kid");
    writer
        .create(&kid, b"", CreateOptions::persistent())
        .await
        .unwrap();
    let ev = within_secs(10, rec.next())
        .await
        .expect("stream open")
        .expect("no event dropped");
    assert_eq!(
        (ev.event_type(), ev.path()),
        (EventType::NodeCreated, kid.as_str())
    );

    drop(rec);
    c.close().await.unwrap();
    let mut deletes = Vec::with_capacity(n);
    for p in paths {
        let w = writer.clone();
        deletes.push(tokio::spawn(
            async move { w.delete(&p, Version::Any).await },
        ));
    }
    for t in deletes {
        t.await.unwrap().unwrap();
    }
}
