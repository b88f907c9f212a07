//! zk-recipes' InterProcessMutex against a real ZooKeeper 3.8 server when things go wrong: lost replies,
//! expired sessions, a restarted server, and the order of wake-ups (edge cases 4, 5, 7, 9 and 10
//! of ../shared/notes/recipes.md; the others are in recipes_mutex.rs).

mod recipes_support;

use conformance::ephemeral_owner;
use std::{sync::Arc, time::Duration};

use conformance::{shared_standalone, Standalone};
use recipes_support::*;
use zk_recipes::{
    new_protected_id, InterProcessMutex, LostReason, ProtectedCreate, RecipeError, Recovery,
    SuspendPolicy,
};
use zk_session::{Client, CreateOptions, OnExpiry, Op, Version};

/// Edge case 4: the reply to the create is lost (a proxy passes the create to the server,
/// drops the reply and closes the connection). After the reconnect the client finds its node
/// by its uuid and adopts it: one create on the wire, one node, owned by the session.
#[tokio::test]
async fn lost_create_reply_adopts_the_node() {
    let admin = client(&shared()).await;
    let proxy = Proxy::start(shared_standalone().client_addr()).await;
    let c = client(&proxy.connect_string()).await;
    let path = unique("lost-reply");

    // Contended, so adopting must also keep the place in the queue.
    let holder = InterProcessMutex::new(admin.clone(), &path);
    let hg = holder.acquire().await.unwrap();
    proxy.cut_reply(OpCode::Create2, &format!("{path}/_c_"));
    let m = Arc::new(InterProcessMutex::new(c.clone(), &path));
    let waiter = spawn_acquire(&m);
    let kids = until_children(&admin, &path, 2).await;
    hg.release().await.unwrap();
    let g = soon("the waiter acquires", waiter).await.unwrap().unwrap();
    assert!(
        kids.contains(&name_of(g.path())),
        "adopted the node made before the cut"
    );
    assert_eq!(proxy.count(OpCode::Create2), 1, "no second create");
    let stat = admin.exists(g.path()).await.unwrap().unwrap();
    assert_eq!(stat.ephemeral_owner, ephemeral_owner(&c));
    assert_eq!(children(&admin, &path).await, vec![name_of(g.path())]);
    g.release().await.unwrap();

    // Uncontended, through the same path.
    proxy.cut_reply(OpCode::Create2, &format!("{path}/_c_"));
    let g = soon("acquire after a lost reply", m.acquire())
        .await
        .unwrap();
    assert_eq!(proxy.count(OpCode::Create2), 2);
    assert_eq!(children(&admin, &path).await, vec![name_of(g.path())]);
    g.release().await.unwrap();
    assert!(children(&admin, &path).await.is_empty());
}

/// Edge case 4, the other branch: a node carrying our uuid but owned by another session is
/// deleted, never adopted; one owned by our session is adopted.
#[tokio::test]
async fn recovery_deletes_another_sessions_node() {
    let (mine, other) = (client(&shared()).await, client(&shared()).await);
    let path = unique("recovery");
    let create = ProtectedCreate::new(path.clone(), "lock-");
    zk_recipes::create_parents(&mine, &path).await.unwrap();
    let (id, stale) = lock_node_with_new_id(&other, &path).await;
    match create.recover(&mine, &id).await.unwrap() {
        Recovery::Removed(names) => assert_eq!(names, vec![name_of(&stale)]),
        other => panic!("{other:?}"),
    }
    assert!(children(&mine, &path).await.is_empty());
    assert_eq!(
        create.recover(&mine, &id).await.unwrap(),
        Recovery::NotFound
    );

    let (id, own) = lock_node_with_new_id(&mine, &path).await;
    match create.recover(&mine, &id).await.unwrap() {
        Recovery::Adopted(node) => {
            assert_eq!(node.path, own);
            assert_eq!(node.id, id);
            assert_eq!(node.stat.ephemeral_owner, ephemeral_owner(&mine));
        }
        other => panic!("{other:?}"),
    }
    mine.delete(&own, Version::Any).await.unwrap();
}

/// Creates, as `c`, a Curator-style lock node under `path` named with a new protected id
/// (as a lost create would have left it); returns the id and the node's path.
async fn lock_node_with_new_id(c: &Client, path: &str) -> (String, String) {
    let id = new_protected_id();
    let node = ephemeral_sequential(c, &format!("{path}/_c_{id}-lock-")).await;
    (id, node)
}

/// Edge case 5: the holder is cut off (a proxy drops its connection) and its session is
/// closed from a second connection, so the server deletes its node; the waiter acquires.
/// When the holder comes back it learns that its session expired: its guard reports the loss
/// and its fenced writes fail on the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holder_session_expiry_hands_over() {
    let proxy = Proxy::start(shared_standalone().client_addr()).await;
    // A client that ends with its session (recipes_expiry.rs has the default, a new one).
    let h = Client::builder(&proxy.connect_string())
        .session_timeout(Duration::from_secs(20))
        .on_session_expiry(OnExpiry::End)
        .connect()
        .await
        .expect("connect");
    let w = client(&shared()).await;
    let path = unique("expiry");
    let target = format!("{path}-data");
    w.create(&target, b"", CreateOptions::persistent())
        .await
        .unwrap();
    // Only a lost or expired session counts, so the reason seen is the expiry itself.
    let mh = InterProcessMutex::builder(h.clone(), &path)
        .suspend_policy(SuspendPolicy::WaitForLost)
        .build();
    let old = mh.acquire().await.unwrap();
    let mw = Arc::new(InterProcessMutex::new(w.clone(), &path));
    let waiter = spawn_acquire(&mw);
    until_children(&w, &path, 2).await;
    proxy.partition(true);
    expire_session(&shared(), &h).await;
    let new = soon("the waiter acquires", waiter).await.unwrap().unwrap();
    assert!(old.is_held(), "cut off, but not told anything yet");
    proxy.partition(false);
    let reason = soon("the old holder hears", old.lost()).await;
    assert_eq!(reason, LostReason::Expired);
    assert!(!old.is_held() && !mh.is_held());
    assert!(new.fencing_token() > old.fencing_token());
    let stale = old
        .fenced_multi([Op::set_data(&target, b"stale", Version::Any)])
        .await;
    assert!(matches!(stale, Err(RecipeError::Lost(_))), "{stale:?}");
    new.fenced_multi([Op::set_data(&target, b"fresh", Version::Any)])
        .await
        .unwrap();
    assert_eq!(&w.get_data(&target).await.unwrap().0[..], b"fresh");
    // Re-entering a lost lock is refused, and so is acquiring on the expired session;
    // releasing it is fine.
    assert!(matches!(old.reenter(), Err(RecipeError::Lost(_))));
    assert!(matches!(mh.acquire().await, Err(RecipeError::Lost(_))));
    old.release().await.unwrap();
    new.release().await.unwrap();
}

/// Edge case 7: the server stops while one client holds and one waits, then restarts (the
/// sessions survive). The holder hears that it can no longer trust the lock (suspended) and
/// releases; the waiter then acquires; both finish and nothing is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_restart_with_holder_and_waiter() {
    let zk = Arc::new(Standalone::start().unwrap());
    let (h, w) = (
        client(&zk.connect_string()).await,
        client(&zk.connect_string()).await,
    );
    let path = "/restart/lock";
    let mh = InterProcessMutex::new(h.clone(), path);
    let hg = mh.acquire().await.unwrap();
    let mw = Arc::new(InterProcessMutex::new(w.clone(), path));
    let waiter = tokio::spawn({
        let mw = mw.clone();
        async move {
            let g = mw.acquire().await?;
            g.release().await
        }
    });
    until_children(&h, path, 2).await;
    let z = zk.clone();
    tokio::task::spawn_blocking(move || z.stop().unwrap())
        .await
        .unwrap();
    assert_eq!(soon("suspended", hg.lost()).await, LostReason::Suspended);
    assert!(!hg.is_held());
    let z = zk.clone();
    tokio::task::spawn_blocking(move || z.start().unwrap())
        .await
        .unwrap();
    soon("the holder releases", hg.release()).await.unwrap();
    soon("the waiter acquires and releases", waiter)
        .await
        .unwrap()
        .unwrap();
    eventually("no node left", || async {
        children(&h, path).await.is_empty()
    })
    .await;
    assert_eq!(ephemeral_owner(&h), ephemeral_owner(mh.client()));
}

/// Edge case 9: a release wakes only the next waiter. Each waiter's requests go through its
/// own proxy, which counts them: after the initial create, listing and two watches, a waiter
/// sends nothing until its turn, and takes the lock without listing again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_wakes_only_the_next_waiter() {
    const WAITERS: usize = 4;
    let h = client(&shared()).await;
    let path = unique("herd");
    let hg = InterProcessMutex::new(h.clone(), &path)
        .acquire()
        .await
        .unwrap();
    let mut waiters = Vec::new();
    for i in 0..WAITERS {
        let proxy = Proxy::start(shared_standalone().client_addr()).await;
        let c = client(&proxy.connect_string()).await;
        let m = Arc::new(InterProcessMutex::new(c.clone(), &path));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn({
            let m = m.clone();
            async move {
                let g = m.acquire().await.unwrap();
                let _ = rx.await;
                g.release().await.unwrap();
            }
        });
        until_children(&h, &path, i + 2).await;
        eventually(
            "the waiter watches its predecessor and its own node",
            || {
                let id = ephemeral_owner(&c);
                async move { watches_of(shared_standalone(), id).len() == 2 }
            },
        )
        .await;
        waiters.push((proxy, c, m, Some(tx), task));
    }
    for (_, _, _, _, task) in &waiters {
        assert!(!task.is_finished());
    }
    let before: Vec<_> = waiters.iter().map(|w| w.0.counts()).collect();
    for (proxy, _, _, _, _) in &waiters {
        assert_eq!(
            proxy.count(OpCode::GetChildren),
            1,
            "one listing to queue up"
        );
        assert_eq!(
            proxy.count(OpCode::GetData),
            2,
            "the predecessor's and its own watch"
        );
    }
    hg.release().await.unwrap();
    for turn in 0..WAITERS {
        let m = &waiters[turn].2;
        eventually("the next waiter acquires", || async { m.is_held() }).await;
        // Give any herd a moment to show itself before looking.
        tokio::time::sleep(Duration::from_millis(300)).await;
        // The first waiter had only the holder ahead: it takes the lock on the watch alone.
        // The others had more ahead when they queued, so they list once to learn they are
        // first. Nobody else sends a thing.
        let mut expected = before[turn].clone();
        if turn > 0 {
            *expected.get_mut(&OpCode::GetChildren).unwrap() += 1;
        }
        assert_eq!(waiters[turn].0.counts(), expected, "turn {turn}");
        for later in turn + 1..WAITERS {
            assert_eq!(
                waiters[later].0.counts(),
                before[later],
                "waiter {later} woke at turn {turn}"
            );
        }
        let (_, _, _, tx, task) = &mut waiters[turn];
        tx.take().unwrap().send(()).unwrap();
        soon("the holder releases", task).await.unwrap();
    }
    assert!(children(&h, &path).await.is_empty());
}

/// Edge case 10: the predecessor goes between the listing and the watch (a proxy holds the
/// listing's reply while the test deletes it). No hang, and no watch left on the gone node.
#[tokio::test]
async fn predecessor_gone_between_list_and_watch() {
    let (h, admin) = (client(&shared()).await, client(&shared()).await);
    let proxy = Proxy::start(shared_standalone().client_addr()).await;
    let w = client(&proxy.connect_string()).await;
    let path = unique("gone-between");
    let hg = InterProcessMutex::new(h.clone(), &path)
        .acquire()
        .await
        .unwrap();
    // A Curator-style contender between the holder and the waiter.
    let (_, middle) = lock_node_with_new_id(&admin, &path).await;
    let mut held = proxy.hold_reply(OpCode::GetChildren, &path);
    let mw = Arc::new(InterProcessMutex::new(w.clone(), &path));
    let waiter = spawn_acquire(&mw);
    let go = arrived(&mut held).await;
    admin.delete(&middle, Version::Any).await.unwrap();
    go.send(()).unwrap();
    // The waiter tried the gone node, listed again, and now watches the holder.
    eventually("the waiter watches the holder and its own node", || async {
        let watched = watches_of(shared_standalone(), ephemeral_owner(&w));
        watched.len() == 2 && watched.contains(&hg.path().to_owned())
    })
    .await;
    assert_eq!(proxy.count(OpCode::GetChildren), 2);
    assert!(watches_under(shared_standalone(), &middle).is_empty());
    hg.release().await.unwrap();
    let g = soon("the waiter acquires", waiter).await.unwrap().unwrap();
    g.release().await.unwrap();

    // The only node ahead goes between the listing and the watch: the lock is ours without
    // listing again.
    let hg = InterProcessMutex::new(h.clone(), &path)
        .acquire()
        .await
        .unwrap();
    let lists = proxy.count(OpCode::GetChildren);
    let mut held = proxy.hold_reply(OpCode::GetChildren, &path);
    let waiter = spawn_acquire(&mw);
    let go = arrived(&mut held).await;
    hg.release().await.unwrap();
    go.send(()).unwrap();
    let g = soon("the waiter acquires", waiter).await.unwrap().unwrap();
    assert_eq!(proxy.count(OpCode::GetChildren), lists + 1);
    g.release().await.unwrap();
    eventually("no watches left under the lock path", || async {
        watches_under(shared_standalone(), &path).is_empty()
    })
    .await;
}

/// An uncontended acquire is one round trip: the listing is sent right behind the create,
/// before the create is answered (the proxy holds the create's reply and sees the listing
/// arrive meanwhile), and nothing else is needed to hold the lock.
#[tokio::test]
async fn uncontended_acquire_pipelines_the_listing() {
    let proxy = Proxy::start(shared_standalone().client_addr()).await;
    let c = client(&proxy.connect_string()).await;
    let path = unique("pipelined");
    zk_recipes::create_parents(&c, &path).await.unwrap();
    let before = proxy.counts();
    let mut held = proxy.hold_reply(OpCode::Create2, &path);
    let m = Arc::new(InterProcessMutex::new(c.clone(), &path));
    let acquire = spawn_acquire(&m);
    let go = arrived(&mut held).await;
    eventually(
        "the listing is sent before the create is answered",
        || async {
            proxy.count(OpCode::GetChildren)
                == before.get(&OpCode::GetChildren).copied().unwrap_or(0) + 1
        },
    )
    .await;
    go.send(()).unwrap();
    let g = soon("acquired", acquire).await.unwrap().unwrap();
    let mut sent = proxy.counts();
    // The guard's watch on its own node is set after the lock is taken, off the critical path.
    sent.remove(&OpCode::GetData);
    let mut expected = before.clone();
    *expected.entry(OpCode::Create2).or_default() += 1;
    *expected.entry(OpCode::GetChildren).or_default() += 1;
    assert_eq!(sent, expected);
    g.release().await.unwrap();
}
