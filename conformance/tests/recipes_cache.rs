//! zk-recipes' Cache against a real ZooKeeper 3.8 server: the load, the events, the modes,
//! and the cases CuratorCache gets wrong (../shared/notes/caches.md): a znode deleted and
//! created again while disconnected, a flat directory of 100,000 children, a one-shot watch on
//! the cache's root in the same session (ZOOKEEPER-4466), changes during the initial load, a
//! deleted and re-created root, session expiry with the client's new session, and dropping
//! the cache.

mod cache_support;
mod recipes_support;

use std::time::Duration;

use cache_support::*;
use recipes_support::{
    client, eventually, expire_session, shared, soon, unique, until_state, watches_of, Proxy,
};
use zk_recipes::{Cache, CacheData, CacheEvent, CacheMode, CacheStatus, ResyncReason};
use zk_session::{Op, SessionState, Version};

#[tokio::test]
async fn loads_a_tree_then_reports_each_change() {
    let admin = client(&shared()).await;
    let root = unique("cache-load");
    let all = build_tree(&admin, &root, 4, 2).await;
    let mut builder = Cache::builder(client(&shared()).await, &root);
    let mut events = builder.subscribe();
    let cache = builder.start().await.unwrap();
    let load = until_event(&mut events, "initialized", |e| {
        matches!(e, CacheEvent::Initialized)
    })
    .await;
    assert_eq!(cache.status().get(), CacheStatus::Initialized);
    assert_eq!(load.len(), all.len() + 1, "{:?}", described(&load));
    assert_eq!(cache.len(), all.len());
    assert_eq!(
        cache.children(&root).unwrap(),
        ["n0", "n1", "n2", "n3"].map(String::from)
    );
    let n12 = format!("{root}/n1/n2");
    assert_eq!(
        cache.get(&n12).unwrap().data(),
        Some(n12.as_bytes()),
        "data is cached"
    );

    admin
        .set_data(&n12, b"new", Version::Any)
        .await
        .expect("set");
    let seen = until_event(&mut events, "changed", |e| {
        matches!(e, CacheEvent::Changed { .. })
    })
    .await;
    match &seen[..] {
        [CacheEvent::Changed { path, old, new }] => {
            assert_eq!(path, &n12);
            assert_eq!(old.data(), Some(n12.as_bytes()));
            assert_eq!(new.data(), Some(&b"new"[..]));
            assert_eq!(new.stat().version, 1);
        }
        other => panic!("{other:?}"),
    }
    let fresh = format!("{root}/n3/fresh");
    mk(&admin, &fresh, b"f").await;
    let seen = until_event(&mut events, "created", |e| {
        matches!(e, CacheEvent::Created { .. })
    })
    .await;
    assert_eq!(described(&seen), [format!("created {fresh}")]);
    admin.delete(&fresh, Version::Any).await.unwrap();
    let seen = until_event(&mut events, "deleted", |e| {
        matches!(e, CacheEvent::Deleted { .. })
    })
    .await;
    assert_eq!(described(&seen), [format!("deleted {fresh}")]);
    assert!(cache.get(&fresh).is_none());
    view_matches_server(&admin, &cache, &root).await;
}

#[tokio::test]
async fn modes_depth_and_stat_only() {
    let admin = client(&shared()).await;
    let root = unique("cache-modes");
    build_tree(&admin, &root, 3, 3).await;
    let c = client(&shared()).await;
    let start = |mode, depth: Option<usize>, data| {
        let mut b = Cache::builder(c.clone(), &root).mode(mode).data(data);
        if let Some(d) = depth {
            b = b.max_depth(d);
        }
        b.start()
    };
    let node = start(CacheMode::Node, None, CacheData::Keep).await.unwrap();
    let kids = start(CacheMode::Children, None, CacheData::Keep)
        .await
        .unwrap();
    let two = start(CacheMode::Tree, Some(2), CacheData::StatOnly)
        .await
        .unwrap();
    assert_eq!(node.len(), 1);
    assert_eq!(node.children(&root).unwrap(), Vec::<String>::new());
    assert_eq!(node.get(&root).unwrap().stat().num_children, 3);
    assert_eq!(kids.len(), 4);
    assert!(kids.get(&format!("{root}/n0/n0")).is_none());
    assert_eq!(two.len(), 1 + 3 + 9);
    let n00 = two.get(&format!("{root}/n0/n0")).unwrap();
    assert_eq!(n00.data(), None, "stats only");
    assert_eq!(n00.stat().num_children, 3, "the Stat of the deepest level");

    // A change at depth 3 is below every one of them; at depth 1 only the node cache misses it.
    let mut ev_node = node.subscribe();
    let mut ev_kids = kids.subscribe();
    admin
        .set_data(&format!("{root}/n0/n0/n0"), b"x", Version::Any)
        .await
        .unwrap();
    admin
        .set_data(&format!("{root}/n1"), b"y", Version::Any)
        .await
        .unwrap();
    admin.set_data(&root, b"z", Version::Any).await.unwrap();
    let seen = until_event(
        &mut ev_kids,
        "root change",
        |e| matches!(e, CacheEvent::Changed { path, .. } if *path == root),
    )
    .await;
    assert_eq!(
        described(&seen),
        [format!("changed {root}/n1"), format!("changed {root}")]
    );
    let seen = until_event(&mut ev_node, "root change", |e| {
        matches!(e, CacheEvent::Changed { .. })
    })
    .await;
    assert_eq!(described(&seen), [format!("changed {root}")]);
}

/// A znode deleted and created again while the client was cut off, with the same data and
/// version 0 again (Curator's CuratorCache compares versions and misses it), a change and a
/// new znode are all reported after the reconnect, then `Resynced(Reconnected)`.
#[tokio::test]
async fn changes_made_while_disconnected_are_found_by_zxid() {
    let admin = client(&shared()).await;
    let root = unique("cache-away");
    build_tree(&admin, &root, 3, 1).await;
    let proxy = Proxy::start(conformance::shared_standalone().client_addr()).await;
    let c = client(&proxy.connect_string()).await;
    let (cache, mut events) = loaded(c.clone(), &root).await;

    proxy.partition(true);
    until_state(&c, SessionState::Suspended).await;
    let (n0, n1, n9) = (
        format!("{root}/n0"),
        format!("{root}/n1"),
        format!("{root}/n9"),
    );
    let before = cache.get(&n0).unwrap();
    admin.delete(&n0, Version::Any).await.unwrap();
    mk(&admin, &n0, n0.as_bytes()).await;
    admin.set_data(&n1, b"changed", Version::Any).await.unwrap();
    mk(&admin, &n9, b"new").await;
    proxy.partition(false);

    let seen = until_event(&mut events, "resynced", |e| {
        matches!(e, CacheEvent::Resynced(_))
    })
    .await;
    let mut shown = described(&seen);
    let last = shown.pop().unwrap();
    assert_eq!(last, "Resynced(Reconnected)");
    shown.sort();
    assert_eq!(
        shown,
        [
            format!("changed {n1}"),
            format!("created {n0}"),
            format!("created {n9}"),
            format!("deleted {n0}"),
        ]
    );
    let after = cache.get(&n0).unwrap();
    assert_eq!(after.stat().version, before.stat().version);
    assert_ne!(after.stat().czxid, before.stat().czxid);
    view_matches_server(&admin, &cache, &root).await;
}

/// Debian's Curator 5.4 stops at 65,535 children and still says initialized.
#[tokio::test]
async fn a_flat_directory_of_100000_children_loads_completely() {
    const N: usize = 100_000;
    let admin = client(&shared()).await;
    let root = unique("cache-flat");
    mk(&admin, &root, b"").await;
    // Names short enough that the listing fits the 1 MiB frame limit.
    let ops: Vec<Op> = (0..N)
        .map(|i| Op::create(format!("{root}/{i}"), b"", persistent()))
        .collect();
    let mut writes = tokio::task::JoinSet::new();
    for chunk in ops.chunks(1000) {
        let (a, chunk) = (admin.clone(), chunk.to_vec());
        writes.spawn(async move { a.multi(chunk).await.map(|_| ()) });
    }
    while let Some(r) = writes.join_next().await {
        r.unwrap().expect("create the children");
    }
    let start = Cache::builder(client(&shared()).await, &root).start();
    let cache = tokio::time::timeout(Duration::from_secs(120), start)
        .await
        .expect("loads within 2 minutes")
        .unwrap();
    assert_eq!(cache.len(), N + 1);
    assert_eq!(cache.children(&root).unwrap().len(), N);
    assert!(cache.get(&format!("{root}/99999")).is_some());
    // The server's count agrees.
    let (_, stat) = admin.get_data(&root).await.unwrap();
    assert_eq!(stat.num_children as usize, N);
    drop(cache);
    // Cleaning up 100,000 nodes: one multi per thousand.
    let deletes: Vec<Op> = (0..N)
        .map(|i| Op::delete(format!("{root}/{i}"), Version::Any))
        .collect();
    for chunk in deletes.chunks(1000) {
        admin.multi(chunk.to_vec()).await.unwrap();
    }
}

/// ZOOKEEPER-4466: on a 3.8.0 server a one-shot watch set by the same session on the exact
/// path of the cache's persistent watch would replace it; the session layer keeps the
/// persistent watch, so the cache goes on seeing changes after the one-shot fired.
#[tokio::test]
async fn a_one_shot_watch_on_the_root_in_the_same_session_leaves_the_cache_working() {
    let admin = client(&shared()).await;
    let root = unique("cache-4466");
    build_tree(&admin, &root, 2, 1).await;
    let c = client(&shared()).await;
    let (cache, mut events) = loaded(c.clone(), &root).await;
    for _ in 0..2 {
        let (_, _, oneshot) = c.get_data_watch(&root).await.unwrap();
        admin.set_data(&root, b"r", Version::Any).await.unwrap();
        soon("the one-shot fires", oneshot).await.unwrap();
        until_event(
            &mut events,
            "root changed",
            |e| matches!(e, CacheEvent::Changed { path, .. } if *path == root),
        )
        .await;
    }
    let n1 = format!("{root}/n1");
    admin.set_data(&n1, b"after", Version::Any).await.unwrap();
    let seen = until_event(&mut events, "child changed", |e| {
        matches!(e, CacheEvent::Changed { .. })
    })
    .await;
    assert_eq!(described(&seen), [format!("changed {n1}")]);
    assert_eq!(cache.get(&n1).unwrap().data(), Some(&b"after"[..]));
    let server = conformance::shared_standalone().server();
    assert!(
        watches_of(server, sid(&c)).contains(&root),
        "the persistent watch is still on the server"
    );
}

/// Writers change the tree while the cache loads it; once they stop, the view is the
/// server's tree.
#[tokio::test]
async fn changes_during_the_initial_load_end_up_in_the_view() {
    let admin = client(&shared()).await;
    let root = unique("cache-busy");
    build_tree(&admin, &root, 10, 3).await;
    let writer = {
        let (a, root) = (admin.clone(), root.clone());
        tokio::spawn(async move {
            for i in 0..300 {
                let p = format!("{root}/n{}/n{}", i % 10, (i / 10) % 10);
                match i % 3 {
                    0 => a
                        .set_data(&p, format!("w{i}").as_bytes(), Version::Any)
                        .await
                        .map(drop),
                    1 => a
                        .create(&format!("{p}/x{i}"), b"", persistent())
                        .await
                        .map(drop),
                    _ => a.delete(&format!("{p}/n{}", i % 10), Version::Any).await,
                }
                .or_else(|e| e.code().map(drop).ok_or(e))
                .unwrap();
            }
        })
    };
    let cache = Cache::builder(client(&shared()).await, &root)
        .start()
        .await
        .unwrap();
    writer.await.unwrap();
    view_matches_server(&admin, &cache, &root).await;
}

/// The root deleted (with its subtree) and created again: the view follows.
#[tokio::test]
async fn a_deleted_and_recreated_root() {
    let admin = client(&shared()).await;
    let root = unique("cache-root");
    let mut builder = Cache::builder(client(&shared()).await, &root);
    let mut events = builder.subscribe();
    let cache = builder.start().await.unwrap();
    // The root does not exist yet: an empty view, initialized.
    until_event(&mut events, "initialized", |e| {
        matches!(e, CacheEvent::Initialized)
    })
    .await;
    assert!(cache.is_empty());
    build_tree(&admin, &root, 2, 1).await;
    view_matches_server(&admin, &cache, &root).await;
    for n in ["n0", "n1"] {
        admin
            .delete(&format!("{root}/{n}"), Version::Any)
            .await
            .unwrap();
    }
    admin.delete(&root, Version::Any).await.unwrap();
    until_event(
        &mut events,
        "root deleted",
        |e| matches!(e, CacheEvent::Deleted { path, .. } if *path == root),
    )
    .await;
    assert!(cache.is_empty());
    mk(&admin, &root, b"again").await;
    mk(&admin, &format!("{root}/k"), b"").await;
    view_matches_server(&admin, &cache, &root).await;
    assert_eq!(cache.get(&root).unwrap().data(), Some(&b"again"[..]));
}

/// The session expires while the client is cut off and the tree changes; the client goes on
/// with a new session and the cache rebuilds on it, then says so.
#[tokio::test]
async fn session_expiry_rebuilds_on_the_new_session() {
    let admin = client(&shared()).await;
    let root = unique("cache-expiry");
    build_tree(&admin, &root, 3, 2).await;
    let proxy = Proxy::start(conformance::shared_standalone().client_addr()).await;
    let c = client(&proxy.connect_string()).await;
    let old = c.session_id();
    let (cache, mut events) = loaded(c.clone(), &root).await;
    proxy.partition(true);
    until_state(&c, SessionState::Suspended).await;
    expire_session(&shared(), &c).await;
    admin
        .delete(&format!("{root}/n2/n2"), Version::Any)
        .await
        .unwrap();
    mk(&admin, &format!("{root}/n2/new"), b"").await;
    proxy.partition(false);
    let seen = until_event(&mut events, "resynced", |e| {
        matches!(e, CacheEvent::Resynced(_))
    })
    .await;
    assert_eq!(
        seen.last(),
        Some(&CacheEvent::Resynced(ResyncReason::NewSession))
    );
    assert_ne!(c.session_id(), old);
    view_matches_server(&admin, &cache, &root).await;
    // And it follows changes on the new session.
    admin.set_data(&root, b"later", Version::Any).await.unwrap();
    until_event(
        &mut events,
        "change on the new session",
        |e| matches!(e, CacheEvent::Changed { path, .. } if *path == root),
    )
    .await;
}

/// Dropping the cache removes its watch from the server and ends its streams.
#[tokio::test]
async fn dropping_the_cache_leaves_no_watch() {
    let admin = client(&shared()).await;
    let root = unique("cache-drop");
    build_tree(&admin, &root, 2, 1).await;
    let c = client(&shared()).await;
    let server = conformance::shared_standalone().server();
    let cache = Cache::builder(c.clone(), &root).start().await.unwrap();
    let mut events = cache.subscribe();
    assert!(watches_of(server, sid(&c)).contains(&root));
    drop(cache);
    // What was queued is still read, then the end.
    soon("the stream ends", async {
        while events.next().await.is_some() {}
    })
    .await;
    eventually("the watch is removed", || async {
        watches_of(server, sid(&c)).is_empty()
    })
    .await;
}
