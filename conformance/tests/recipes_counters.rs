//! SharedCount and DistributedAtomicLong against a real ZooKeeper 3.8 server: the bytes on
//! the wire (Curator's encodings), versioned sets, the change stream across a connection
//! loss and a session expiry, concurrent increments that never lose an update, the
//! promotion to a lock, the outcome of a write whose reply is lost, and updates started
//! while the connection is lost or the session expires.

mod recipes_support;

use conformance::ephemeral_owner;
use std::{sync::Arc, time::Duration};

use recipes_support::{
    children, client, cut_off, expire_session, let_back_renewed, proxied, session_of, shared, soon,
    spawn_on, unique, until_state,
};
use tokio::task::JoinHandle;
use zk_recipes::{AtomicOutcome, DistributedAtomicLong, RecipeError, SharedCount};
use zk_session::{Client, CreateOptions, ErrorCode, RetryPolicy, SessionState, Version};

/// Waits until `count`'s value is `want`.
async fn until_count(count: &SharedCount, want: i32) {
    let mut changes = count.changes();
    soon(
        &format!("the count becomes {want}"),
        changes.wait_for(|c| c.value() == want),
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_count_seeds_once_sets_with_versions_and_streams_changes() {
    let (a, b, admin) = (
        client(&shared()).await,
        client(&shared()).await,
        client(&shared()).await,
    );
    let path = format!("{}/deep/count", unique("count"));
    let first = SharedCount::builder(a, &path)
        .seed(5)
        .start()
        .await
        .unwrap();
    let second = SharedCount::builder(b, &path)
        .seed(99)
        .start()
        .await
        .unwrap();
    assert_eq!(
        (first.count(), second.count()),
        (5, 5),
        "the seed is set once"
    );
    let (data, _) = admin.get_data(&path).await.unwrap();
    assert_eq!(&data[..], &5i32.to_be_bytes(), "4 bytes, big-endian");

    let seen = second.versioned();
    assert!(first.try_set(first.versioned(), -7).await.unwrap());
    until_count(&second, -7).await;
    // A set from a stale version fails and brings the newer value in.
    assert!(!second.try_set(seen, 1).await.unwrap());
    assert_eq!(second.count(), -7);
    assert!(second.try_set(second.versioned(), 1).await.unwrap());
    until_count(&first, 1).await;

    // Any writer's change reaches the stream, unconditional sets too.
    admin
        .set_data(&path, &42i32.to_be_bytes(), Version::Any)
        .await
        .unwrap();
    until_count(&first, 42).await;
    second.set(i32::MIN).await.unwrap();
    until_count(&first, i32::MIN).await;
    let (data, _) = admin.get_data(&path).await.unwrap();
    assert_eq!(&data[..], &[0x80, 0, 0, 0]);

    // Data too short for an int is a typed error at start.
    let bad = unique("count-bad");
    admin
        .create(&bad, b"\x01", CreateOptions::persistent())
        .await
        .unwrap();
    let err = SharedCount::builder(admin.clone(), &bad)
        .seed(0)
        .start()
        .await
        .unwrap_err();
    assert!(
        matches!(err, RecipeError::BadData { len: 1, .. }),
        "{err:?}"
    );
}

/// Changes made while the count's client is cut off, and after its session expired, reach
/// it once it is back (re-read after a reconnect and after the new session).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_count_catches_up_after_connection_loss_and_expiry() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("count-faults");
    let count = SharedCount::builder(c.clone(), &path)
        .seed(0)
        .start()
        .await
        .unwrap();

    proxy.partition(true);
    until_state(&c, SessionState::Suspended).await;
    admin
        .set_data(&path, &11i32.to_be_bytes(), Version::Any)
        .await
        .unwrap();
    proxy.partition(false);
    until_count(&count, 11).await;

    let old = ephemeral_owner(&c);
    cut_off(&proxy, &c).await;
    expire_session(&shared(), &c).await;
    // Written while the client is cut off with its session expired.
    admin
        .set_data(&path, &12i32.to_be_bytes(), Version::Any)
        .await
        .unwrap();
    let new = let_back_renewed(&proxy, &c, old).await;
    assert_ne!(old, new);
    until_count(&count, 12).await;
    admin
        .set_data(&path, &13i32.to_be_bytes(), Version::Any)
        .await
        .unwrap();
    until_count(&count, 13).await;
    assert!(count.try_set(count.versioned(), 14).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_long_reads_writes_and_compares_curators_bytes() {
    let admin = client(&shared()).await;
    let path = format!("{}/a/b", unique("along"));
    let n = DistributedAtomicLong::new(admin.clone(), &path);
    assert_eq!(n.get().await.unwrap(), 0, "a missing node reads as 0");
    let cas = n.compare_and_set(0, 5).await.unwrap();
    assert!(!cas.succeeded, "a missing node compares unequal");
    assert!(n.initialize(40).await.unwrap());
    assert!(!n.initialize(41).await.unwrap());
    let r = n.add(2).await.unwrap();
    assert!(r.succeeded);
    assert_eq!((r.pre, r.post, r.optimistic_tries), (40, 42, 1));
    let (data, _) = admin.get_data(&path).await.unwrap();
    assert_eq!(&data[..], &42i64.to_be_bytes(), "8 bytes, big-endian");
    assert_eq!(n.decrement().await.unwrap().post, 41);
    assert_eq!(n.subtract(i64::MAX).await.unwrap().post, 41 - i64::MAX);
    let cur = n.get().await.unwrap();
    assert!(!n.compare_and_set(cur + 1, 7).await.unwrap().succeeded);
    let cas = n.compare_and_set(cur, 7).await.unwrap();
    assert!(cas.succeeded && cas.pre == cur && cas.post == 7);
    n.force_set(-1).await.unwrap();
    assert_eq!(n.get().await.unwrap(), -1);
    assert_eq!(n.try_set(9).await.unwrap().post, 9);
    // Empty data reads as 0 and can be updated; short data is a typed error.
    admin.set_data(&path, b"", Version::Any).await.unwrap();
    assert_eq!(n.increment().await.unwrap().post, 1);
    admin.set_data(&path, b"1234", Version::Any).await.unwrap();
    assert!(matches!(
        n.increment().await,
        Err(RecipeError::BadData { len: 4, .. })
    ));
    // A missing node with missing parents is created by the first update.
    let fresh = DistributedAtomicLong::new(admin.clone(), format!("{}/x/y", unique("along")));
    assert_eq!(fresh.increment().await.unwrap().post, 1);
}

/// Several clients increment at once: no update is lost (every success counted once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_increments_are_never_lost() {
    const TASKS: usize = 4;
    const EACH: usize = 20;
    let path = unique("along-race");
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let c = client(&shared()).await;
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            let n = DistributedAtomicLong::builder(c, &path)
                .retry(RetryPolicy::exponential_backoff(
                    Duration::from_millis(5),
                    100,
                ))
                .build();
            let mut ok = 0;
            for _ in 0..EACH {
                if n.increment().await.unwrap().succeeded {
                    ok += 1;
                }
            }
            ok
        }));
    }
    let mut ok = 0;
    for t in tasks {
        ok += soon("increments", t).await.unwrap();
    }
    assert_eq!(ok, TASKS * EACH);
    let admin = client(&shared()).await;
    let n = DistributedAtomicLong::new(admin, &path);
    assert_eq!(n.get().await.unwrap(), (TASKS * EACH) as i64);
}

/// With no optimistic retries, racing writers fall back on the lock and still all succeed;
/// the lock's nodes are gone afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promoted_to_lock_succeeds_where_optimism_gives_up() {
    const TASKS: usize = 3;
    const EACH: usize = 15;
    let path = unique("along-promo");
    let lock = format!("{path}-lock");
    let promoted = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let c = client(&shared()).await;
        let (path, lock, promoted) = (path.clone(), lock.clone(), promoted.clone());
        tasks.push(tokio::spawn(async move {
            let n = DistributedAtomicLong::builder(c, &path)
                .retry(RetryPolicy::none())
                .promote_to_lock(
                    &lock,
                    Duration::from_secs(20),
                    RetryPolicy::exponential_backoff(Duration::from_millis(5), 100),
                )
                .build();
            for _ in 0..EACH {
                let r = n.increment().await.unwrap();
                assert!(r.succeeded, "{r:?}");
                promoted.fetch_add(r.promoted_tries, std::sync::atomic::Ordering::SeqCst);
            }
        }));
    }
    for t in tasks {
        soon("increments", t).await.unwrap();
    }
    let admin = client(&shared()).await;
    let n = DistributedAtomicLong::new(admin.clone(), &path);
    assert_eq!(n.get().await.unwrap(), (TASKS * EACH) as i64);
    assert!(children(&admin, &lock).await.is_empty(), "lock nodes left");
    // Not asserted: that a race happened at all (it usually does, with 3 writers).
    eprintln!(
        "promoted tries: {}",
        promoted.load(std::sync::atomic::Ordering::SeqCst)
    );
}

/// A write whose reply is lost with the connection is reported (it may have happened), never
/// retried behind the caller's back: the proxy forwards the cut writes, so the value is
/// exactly the increments told success plus those told ConnectionLoss.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_write_reply_is_reported_not_repeated() {
    let (proxy, c) = proxied().await;
    let path = unique("along-cut");
    let n = DistributedAtomicLong::new(c.clone(), &path);
    n.initialize(0).await.unwrap();
    let (mut ok, mut unknown) = (0i64, 0i64);
    for i in 0..30 {
        if i % 3 == 1 {
            proxy.cut_reply(zk_proto::OpCode::SetData, &path);
        }
        match n.increment().await {
            Ok(r) if r.succeeded => ok += 1,
            Ok(r) => panic!("gave up: {r:?}"),
            Err(RecipeError::Session(e)) if e.is_retryable() => unknown += 1,
            Err(e) => panic!("{e}"),
        }
        until_state(&c, SessionState::Connected).await;
    }
    assert!(unknown > 0, "no reply was cut");
    let admin = client(&shared()).await;
    let total = DistributedAtomicLong::new(admin, &path)
        .get()
        .await
        .unwrap();
    // The cut replies' writes all reached the server, and none was made twice.
    assert_eq!(
        total,
        ok + unknown,
        "value {total}, {ok} told success, {unknown} told ConnectionLoss"
    );
}

/// An atomic long at `<path>/long` starting at `start` and a shared count at
/// `<path>/count` starting at 0, on `c`, under a fresh path.
async fn counters(
    c: &Client,
    tag: &str,
    start: i64,
) -> (String, Arc<DistributedAtomicLong>, Arc<SharedCount>) {
    let path = unique(tag);
    let long = DistributedAtomicLong::new(c.clone(), format!("{path}/long"));
    assert!(long.initialize(start).await.unwrap());
    let count = SharedCount::builder(c.clone(), format!("{path}/count"))
        .seed(0)
        .start()
        .await
        .unwrap();
    (path, Arc::new(long), Arc::new(count))
}

/// The long's increment and the count's set to `value`, each on a task of its own.
#[allow(clippy::type_complexity)]
fn increment_and_set(
    long: &Arc<DistributedAtomicLong>,
    count: &Arc<SharedCount>,
    value: i32,
) -> (
    JoinHandle<zk_recipes::Result<AtomicOutcome>>,
    JoinHandle<zk_recipes::Result<()>>,
) {
    (
        spawn_on(long, |long| async move { long.increment().await }),
        spawn_on(count, move |count| async move { count.set(value).await }),
    )
}

/// Counter updates started while the connection is lost complete once it is back, each
/// exactly once: the atomic long counts one increment, the shared count holds the value
/// set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counter_updates_made_during_a_connection_loss_land_once() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let (path, long, count) = counters(&c, "counters-cut", 41).await;

    cut_off(&proxy, &c).await;
    let (increment, set) = increment_and_set(&long, &count, 7);
    proxy.partition(false);
    let outcome = soon("the increment", increment).await.unwrap().unwrap();
    assert!(outcome.succeeded, "{outcome:?}");
    assert_eq!((outcome.pre, outcome.post), (41, 42));
    soon("the set", set).await.unwrap().unwrap();
    let (bytes, _) = admin.get_data(&format!("{path}/long")).await.unwrap();
    assert_eq!(&bytes[..], &42i64.to_be_bytes());
    let (bytes, _) = admin.get_data(&format!("{path}/count")).await.unwrap();
    assert_eq!(&bytes[..], &7i32.to_be_bytes());
    assert_eq!(long.get().await.unwrap(), 42);
    until_count(&count, 7).await;
}

/// Counter updates started while the client is cut off and its session expires: the atomic
/// long's increment (its read repeated on the new session) lands exactly once; the shared
/// count's plain write, queued when the session expired, is either done once or refused
/// with SessionExpired and not applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counter_updates_made_across_the_expiry_land_once() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let (path, long, count) = counters(&c, "counters-exp", 9).await;
    let old = session_of(&c);
    cut_off(&proxy, &c).await;
    let (increment, set) = increment_and_set(&long, &count, 3);
    expire_session(&shared(), &c).await;
    let_back_renewed(&proxy, &c, old).await;
    let outcome = soon("the increment", increment).await.unwrap().unwrap();
    assert!(outcome.succeeded, "{outcome:?}");
    assert_eq!((outcome.pre, outcome.post), (9, 10));
    let set = soon("the set", set).await.unwrap();
    let (bytes, _) = admin.get_data(&format!("{path}/long")).await.unwrap();
    assert_eq!(&bytes[..], &10i64.to_be_bytes());
    let want: i32 = match set {
        Ok(()) => 3,
        Err(RecipeError::Session(e)) if e.code() == Some(ErrorCode::SessionExpired) => 0,
        other => panic!("{other:?}"),
    };
    let (bytes, _) = admin.get_data(&format!("{path}/count")).await.unwrap();
    assert_eq!(&bytes[..], &want.to_be_bytes());
    until_count(&count, want).await;
}

/// A compare-and-set on a count whose znode is gone fails with NoNode, as Curator's
/// `trySetCount` throws: `Ok(false)` would send the usual retry loop spinning forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_count_try_set_on_a_deleted_node_is_no_node() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("count-gone");
    let count = SharedCount::builder(c, &path)
        .seed(3)
        .start()
        .await
        .unwrap();
    admin.delete(&path, Version::Any).await.unwrap();
    let r = count.try_set(count.versioned(), 4).await;
    assert!(
        matches!(&r, Err(RecipeError::Session(e)) if e.code() == Some(ErrorCode::NoNode)),
        "{r:?}"
    );
    assert_eq!(admin.exists(&path).await.unwrap(), None, "nothing created");
}
