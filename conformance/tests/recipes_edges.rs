//! zk-recipes' InterProcessMutex at the edges, against a real ZooKeeper 3.8 server: an acquire given up,
//! dropped or failing after its create succeeded, a release dropped half-way, a timeout with a
//! stalled connection, a lost or expired session, and one handle shared by several tasks
//! (issue 14, defects 1 to 5).

mod recipes_support;

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use conformance::shared_standalone;
use recipes_support::*;
use zk_recipes::{InterProcessMutex, LeaderSelector, RecipeError};
use zk_session::{Acl, Client, CreateOptions, Id, OnExpiry, Perms, SessionState, Version};

/// A client through its own proxy, with a session of `secs` seconds.
async fn proxied(secs: u64) -> (Proxy, Client) {
    let proxy = Proxy::start(shared_standalone().client_addr()).await;
    let c = Client::builder(&proxy.connect_string())
        .session_timeout(Duration::from_secs(secs))
        .connect()
        .await
        .expect("connect");
    (proxy, c)
}

/// A client through its own proxy whose next acquire on `path` has its create answered while
/// the listing sent behind it is cut off with the connection, and no reconnect is let in: the
/// acquire is left retrying the listing with its node made. `admin` watches from outside.
struct ListingCut {
    admin: Client,
    proxy: Proxy,
    c: Client,
    path: String,
}

impl ListingCut {
    /// Sets it up on a lock path tagged `tag`, which exists.
    async fn new(tag: &str) -> ListingCut {
        let admin = client(&shared()).await;
        let (proxy, c) = proxied(20).await;
        let path = unique(tag);
        zk_recipes::create_parents(&admin, &path).await.unwrap();
        proxy.refuse(true);
        proxy.cut_reply(OpCode::GetChildren, &path);
        ListingCut {
            admin,
            proxy,
            c,
            path,
        }
    }

    /// Lets the client back in and waits until no node is left under the lock path.
    async fn reconnect_and_expect_no_node(&self) {
        self.proxy.refuse(false);
        until_state(&self.c, SessionState::Connected).await;
        eventually("the given-up acquire's node is deleted", || async {
            children(&self.admin, &self.path).await.is_empty()
        })
        .await;
    }
}

/// Defect 1: `acquire_timeout` gives up while the listing after a successful create is
/// being retried: the node must still go.
#[tokio::test]
async fn acquire_timeout_during_the_listing_retry_leaves_no_node() {
    let t = ListingCut::new("edge-timeout-listing").await;
    let m = InterProcessMutex::new(t.c.clone(), &t.path);
    let r = m.acquire_timeout(Duration::from_millis(1500)).await;
    assert!(matches!(r, Err(RecipeError::Timeout)), "{r:?}");
    assert_eq!(
        children(&t.admin, &t.path).await.len(),
        1,
        "the create went through"
    );
    t.reconnect_and_expect_no_node().await;
}

/// Defect 1: the acquire future is dropped in the same place.
#[tokio::test]
async fn dropped_acquire_during_the_listing_retry_leaves_no_node() {
    let t = ListingCut::new("edge-drop-listing").await;
    let m = InterProcessMutex::new(t.c.clone(), &t.path);
    let r = tokio::time::timeout(Duration::from_millis(1500), m.acquire()).await;
    assert!(r.is_err(), "{r:?}");
    t.reconnect_and_expect_no_node().await;
}

/// Defect 1: the same through `try_acquire`.
#[tokio::test]
async fn dropped_try_acquire_during_the_listing_retry_leaves_no_node() {
    let t = ListingCut::new("edge-try-listing").await;
    let m = InterProcessMutex::new(t.c.clone(), &t.path);
    let r = tokio::time::timeout(Duration::from_millis(1500), m.try_acquire()).await;
    assert!(r.is_err(), "{r:?}");
    t.reconnect_and_expect_no_node().await;
}

/// Defect 1: a LeaderSelector closed while it queues, in the same place.
#[tokio::test]
async fn selector_closed_during_the_listing_retry_leaves_no_node() {
    let t = ListingCut::new("edge-selector-listing").await;
    let selector = LeaderSelector::builder(t.c.clone(), &t.path)
        .task(|_lead| async {})
        .start()
        .await
        .expect("the selector starts");
    until_children(&t.admin, &t.path, 1).await;
    until_state(&t.c, SessionState::Suspended).await;
    soon("close", selector.close()).await.unwrap();
    t.reconnect_and_expect_no_node().await;
}

/// Defect 1: the listing after a successful create fails for good (the lock path lets
/// anyone create and delete children, but not list them): the acquire fails, and its node
/// must go.
#[tokio::test]
async fn a_listing_refused_for_good_leaves_no_node() {
    let (admin, c) = (client(&shared()).await, client(&shared()).await);
    let path = unique("edge-noauth-listing");
    let blind = vec![Acl::new(
        Perms::CREATE | Perms::DELETE | Perms::ADMIN,
        Id::anyone(),
    )];
    admin
        .create(&path, b"", CreateOptions::persistent().with_acl(blind))
        .await
        .unwrap();
    let m = InterProcessMutex::new(c.clone(), &path);
    let r = soon("the refused acquire", m.acquire()).await;
    assert!(
        matches!(&r, Err(RecipeError::Session(e)) if e.code() == Some(zk_session::ErrorCode::NoAuth)),
        "{r:?}"
    );
    admin
        .set_acl(&path, &Acl::open_unsafe(), Version::Any)
        .await
        .unwrap();
    eventually("the refused acquire's node is deleted", || async {
        children(&admin, &path).await.is_empty()
    })
    .await;
    admin.delete(&path, Version::Any).await.unwrap();
}

/// Defect 2: the release future dropped while its delete is unanswered (the proxy swallows
/// it; the connection is cut after): the node must still go.
#[tokio::test]
async fn dropped_release_leaves_no_node() {
    let admin = client(&shared()).await;
    let (proxy, c) = proxied(20).await;
    let path = unique("edge-release-drop");
    let m = InterProcessMutex::new(c.clone(), &path);
    let g = m.acquire().await.unwrap();
    proxy.swallow(OpCode::Delete, &path);
    let r = tokio::time::timeout(Duration::from_millis(500), g.release()).await;
    assert!(r.is_err(), "the delete is swallowed: {r:?}");
    proxy.cut_connections();
    until_state(&c, SessionState::Connected).await;
    eventually("the released node is deleted", || async {
        children(&admin, &path).await.is_empty()
    })
    .await;
    // The handle is usable again.
    let g = soon("acquire again", m.acquire()).await.unwrap();
    g.release().await.unwrap();
}

/// Defect 3: a 200 ms acquire_timeout whose node's delete stalls ends about on time, not
/// after the delete's own budget; the node goes once the connection recovers.
#[tokio::test]
async fn acquire_timeout_ends_on_time_when_the_delete_stalls() {
    let admin = client(&shared()).await;
    let (proxy, c) = proxied(20).await;
    let path = unique("edge-overshoot");
    let holder = InterProcessMutex::new(admin.clone(), &path);
    let hg = holder.acquire().await.unwrap();
    let m = InterProcessMutex::new(c.clone(), &path);
    proxy.swallow(OpCode::Delete, &path);
    let started = Instant::now();
    let r = m.acquire_timeout(Duration::from_millis(200)).await;
    let took = started.elapsed();
    assert!(matches!(r, Err(RecipeError::Timeout)), "{r:?}");
    // One round trip after 200 ms, with room for a loaded machine; it was 10 s.
    assert!(took < Duration::from_secs(3), "took {took:?}");
    proxy.cut_connections();
    eventually("the timed-out node is deleted", || async {
        children(&admin, &path).await == vec![name_of(hg.path())]
    })
    .await;
    hg.release().await.unwrap();
}

/// Defect 4: once the session is lost (no connection for the whole session timeout), a
/// waiting acquire and a new one fail promptly with a typed error; after the session
/// expired too, on a client that ends with it (`OnExpiry::End`; recipes_expiry.rs has the
/// default, a new session).
#[tokio::test]
async fn acquire_fails_promptly_when_the_session_is_lost_or_expired() {
    let admin = client(&shared()).await;
    let proxy = Proxy::start(shared_standalone().client_addr()).await;
    let c = Client::builder(&proxy.connect_string())
        .session_timeout(Duration::from_secs(4))
        .on_session_expiry(OnExpiry::End)
        .connect()
        .await
        .expect("connect");
    let path = unique("edge-lost");
    let holder = InterProcessMutex::new(admin.clone(), &path);
    let hg = holder.acquire().await.unwrap();
    let m = Arc::new(InterProcessMutex::new(c.clone(), &path));
    let waiter = spawn_acquire(&m);
    until_children(&admin, &path, 2).await;
    proxy.partition(true);
    until_state(&c, SessionState::Lost).await;
    let r = soon("the waiting acquire ends", waiter).await.unwrap();
    assert!(matches!(r, Err(RecipeError::Lost(_))), "{r:?}");
    let r = soon("a new acquire ends", m.acquire()).await;
    assert!(matches!(r, Err(RecipeError::Lost(_))), "{r:?}");
    let r = soon("a try_acquire ends", m.try_acquire()).await;
    assert!(matches!(r, Err(RecipeError::Lost(_))), "{r:?}");

    expire_session(&shared(), &c).await;
    proxy.partition(false);
    until_state(
        &c,
        SessionState::Ended(zk_session::EndReason::SessionExpired),
    )
    .await;
    let r = soon("an acquire on the expired session ends", m.acquire()).await;
    assert!(matches!(r, Err(RecipeError::Lost(_))), "{r:?}");
    assert_eq!(children(&admin, &path).await, vec![name_of(hg.path())]);
    hg.release().await.unwrap();
}

/// Defect 5: tasks sharing one handle exclude each other; re-entrance goes through the
/// holder's guard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_sharing_a_handle_exclude_each_other() {
    let c = client(&shared()).await;
    let path = unique("edge-shared-handle");
    let m = Arc::new(InterProcessMutex::new(c.clone(), &path));
    let g = m.acquire().await.unwrap();
    let other = tokio::spawn({
        let m = m.clone();
        async move { m.acquire_timeout(Duration::from_millis(500)).await }
    });
    let r = soon("the other task's acquire", other).await.unwrap();
    assert!(matches!(r, Err(RecipeError::Timeout)), "{r:?}");
    assert!(m.try_acquire().await.unwrap().is_none());
    g.release().await.unwrap();

    const TASKS: usize = 4;
    const ROUNDS: usize = 5;
    let inside = Arc::new(AtomicUsize::new(0));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (m, inside, overlaps) = (m.clone(), inside.clone(), overlaps.clone());
            tokio::spawn(async move {
                for _ in 0..ROUNDS {
                    let g = m.acquire().await.unwrap();
                    if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                    g.release().await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        soon("a sharing task", t).await.unwrap();
    }
    assert_eq!(
        overlaps.load(Ordering::SeqCst),
        0,
        "two tasks inside at once"
    );
    assert!(children(&c, &path).await.is_empty());
}
