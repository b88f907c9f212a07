//! The lifecycle every long-lived recipe shares, against a real ZooKeeper 3.8: `builder` →
//! `start().await` (returning once the recipe is established) → `status()` → `close().await`,
//! whose last status says why the recipe ended; a start outside a tokio runtime is an error,
//! not a panic.

mod recipes_support;

use std::{
    future::Future,
    task::{Context, Poll, Waker},
};

use recipes_support::{client, shared, soon, unique};
use zk_recipes::{
    Cache, CacheStatus, GroupMember, LatchStatus, LeaderLatch, LeaderSelector, LostReason,
    NodeStatus, PersistentNode, RecipeError, SelectorStatus, SharedCount, SharedCountStatus,
};
use zk_session::{Client, Version};

/// Polls `f` once on this thread, with no runtime entered.
fn poll_outside<F: Future>(f: F) -> Poll<F::Output> {
    std::pin::pin!(f).poll(&mut Context::from_waker(Waker::noop()))
}

fn no_runtime<T>(p: Poll<zk_recipes::Result<T>>) -> bool {
    matches!(p, Poll::Ready(Err(RecipeError::NoRuntime)))
}

#[test]
fn every_start_outside_a_runtime_is_an_error() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Made inside the runtime (a client needs one), used outside it.
    let c = rt.block_on(async { Client::builder("127.0.0.1:1").build().unwrap() });
    assert!(no_runtime(poll_outside(
        PersistentNode::builder(c.clone(), "/n").start()
    )));
    assert!(no_runtime(poll_outside(
        GroupMember::builder(c.clone(), "/g").start()
    )));
    assert!(no_runtime(poll_outside(
        SharedCount::builder(c.clone(), "/c").start()
    )));
    assert!(no_runtime(poll_outside(
        Cache::builder(c.clone(), "/").start()
    )));
    assert!(no_runtime(poll_outside(
        LeaderLatch::builder(c.clone(), "/l").start()
    )));
    assert!(no_runtime(poll_outside(
        LeaderSelector::builder(c.clone(), "/s").start()
    )));
    let _ = rt.block_on(async move { c.close().await });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_node_start_status_close() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("life-node");
    let node = PersistentNode::builder(c, &path)
        .data(b"d")
        .start()
        .await
        .unwrap();
    // Established: present, on the server, when start returns.
    let status = node.status();
    assert_eq!(status.get(), NodeStatus::Present(path.clone()));
    assert!(admin.exists(&path).await.unwrap().is_some());
    node.close().await.unwrap();
    assert_eq!(status.get(), NodeStatus::Closed);
    assert_eq!(admin.exists(&path).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_node_status_ends_with_the_client() {
    let c = client(&shared()).await;
    let node = PersistentNode::builder(c.clone(), unique("life-node-end"))
        .start()
        .await
        .unwrap();
    let mut status = node.status();
    c.close().await.unwrap();
    let end = soon("the end", status.wait_for(NodeStatus::has_ended)).await;
    assert_eq!(end.unwrap(), NodeStatus::Ended(LostReason::Closed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_member_start_status_close() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let group = unique("life-group");
    let me = GroupMember::builder(c, &group)
        .id("me")
        .payload(b"p")
        .start()
        .await
        .unwrap();
    let status = me.status();
    assert_eq!(status.get(), NodeStatus::Present(format!("{group}/me")));
    // The membership was read before start returned.
    assert_eq!(me.changes().get().keys().collect::<Vec<_>>(), ["me"]);
    me.close().await.unwrap();
    assert_eq!(status.get(), NodeStatus::Closed);
    assert_eq!(admin.exists(&format!("{group}/me")).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_count_start_status_close() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("life-count");
    let count = SharedCount::builder(c.clone(), &path)
        .seed(7)
        .start()
        .await
        .unwrap();
    assert_eq!(count.count(), 7);
    let mut status = count.status();
    assert_eq!(status.get(), SharedCountStatus::Following);
    admin.delete(&path, Version::Any).await.unwrap();
    soon(
        "missing",
        status.wait_for(|s| *s == SharedCountStatus::Missing),
    )
    .await
    .unwrap();
    count.set(8).await.unwrap();
    soon(
        "following again",
        status.wait_for(|s| *s == SharedCountStatus::Following),
    )
    .await
    .unwrap();
    count.close().await.unwrap();
    assert_eq!(status.get(), SharedCountStatus::Closed);
    // The count owns nothing: its znode stays.
    assert!(admin.exists(&path).await.unwrap().is_some());
    // A count whose client ends says so.
    let again = SharedCount::builder(c.clone(), &path)
        .start()
        .await
        .unwrap();
    assert_eq!(again.count(), 8, "the seed is only for a missing znode");
    let mut status = again.status();
    c.close().await.unwrap();
    let end = soon("the end", status.wait_for(SharedCountStatus::has_ended)).await;
    assert_eq!(end.unwrap(), SharedCountStatus::Ended(LostReason::Closed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_start_status_close() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let root = unique("life-cache");
    admin
        .create(&root, b"r", zk_session::CreateOptions::persistent())
        .await
        .unwrap();
    let mut builder = Cache::builder(c.clone(), &root);
    let mut events = builder.subscribe();
    let cache = builder.start().await.unwrap();
    // Loaded when start returns.
    assert_eq!(cache.len(), 1);
    let status = cache.status();
    assert_eq!(status.get(), CacheStatus::Initialized);
    cache.close().await.unwrap();
    assert_eq!(status.get(), CacheStatus::Closed);
    // The streams end with the cache.
    while soon("the stream ends", events.next()).await.is_some() {}
    // A cache whose client ends says so.
    let cache = Cache::builder(c.clone(), &root).start().await.unwrap();
    let mut status = cache.status();
    c.close().await.unwrap();
    let end = soon("the end", status.wait_for(CacheStatus::has_ended)).await;
    assert_eq!(end.unwrap(), CacheStatus::Ended(LostReason::Closed));
    assert_eq!(cache.len(), 1, "the view stays readable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_latch_start_status_close() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("life-latch");
    let latch = LeaderLatch::builder(c, &path)
        .id("me")
        .start()
        .await
        .unwrap();
    // In line when start returns: its node is there.
    let node = latch.our_path().unwrap();
    assert!(admin.exists(&node).await.unwrap().is_some());
    let mut status = latch.status();
    soon("leading", status.wait_for(LatchStatus::is_leader))
        .await
        .unwrap();
    assert!(latch.has_leadership());
    latch.close().await.unwrap();
    assert!(matches!(status.get(), LatchStatus::Closed), "{status:?}");
    assert_eq!(admin.exists(&node).await.unwrap(), None);
    // A wait for anything more ends: the latch is gone.
    let gone = soon("the watch ends", status.wait_for(|_| false)).await;
    assert!(matches!(gone, Err(RecipeError::Closed)), "{gone:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_selector_start_status_close() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("life-selector");
    // The default task leads until the term is taken away.
    let selector = LeaderSelector::builder(c, &path)
        .id("me")
        .start()
        .await
        .unwrap();
    let mut status = selector.status();
    soon("leading", status.wait_for(SelectorStatus::is_leader))
        .await
        .unwrap();
    assert!(selector.has_leadership());
    // Without auto-requeue, an interrupted term leaves the line.
    selector.interrupt_leadership();
    soon(
        "idle",
        status.wait_for(|s| matches!(s, SelectorStatus::Idle)),
    )
    .await
    .unwrap();
    assert!(!selector.has_leadership());
    assert!(selector.requeue());
    soon("leading again", status.wait_for(SelectorStatus::is_leader))
        .await
        .unwrap();
    selector.close().await.unwrap();
    assert!(matches!(status.get(), SelectorStatus::Closed), "{status:?}");
    let left = admin.get_children(&path).await.unwrap();
    assert!(left.is_empty(), "{left:?}");
}
