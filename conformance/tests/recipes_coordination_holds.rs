//! Every hold of zk-recipes has one shape (issue 33): `acquire`, `acquire_timeout` and
//! `try_acquire` on the recipe; `is_held`, `lost` and `release` on what they give. Each
//! hold is taken through that shape here against a real ZooKeeper server: a second
//! contender's try gives `None` and its timed acquire `Timeout`, both leaving no node; the
//! deletion of the held node by an administrator makes `lost()` say `NodeDeleted`; a release
//! deletes the node and lets the other in.

mod recipes_support;

use std::time::Duration;

use recipes_support::{
    children, client, expire_and_renew, owner, partition_and_heal, proxied, session_of, shared,
    soon, unique, until_children, until_some, watches_of,
};
use zk_recipes::{
    DistributedBarrier, DoubleBarrier, InterProcessMultiLock, InterProcessMutex,
    InterProcessSemaphoreMutex, InterProcessSemaphoreV2, LostReason, ReadWriteLock, RecipeError,
};
use zk_session::{Client, CreateOptions, Version};

const SHORT: Duration = Duration::from_millis(300);

/// Deletes `node` as an administrator would.
async fn delete_under(admin: &Client, node: &str) {
    admin.delete(node, Version::Any).await.unwrap();
}

/// Two contenders' clients and an administrator's.
async fn clients() -> (Client, Client, Client) {
    let connect = shared();
    (
        client(&connect).await,
        client(&connect).await,
        client(&connect).await,
    )
}

fn timed_out<T: std::fmt::Debug>(r: zk_recipes::Result<T>) {
    assert!(matches!(r, Err(RecipeError::Timeout)), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutex_guard_has_the_hold_shape() {
    let (a, b, admin) = clients().await;
    let path = unique("hold-mutex");
    let ours = InterProcessMutex::new(a, &path);
    let theirs = InterProcessMutex::new(b, &path);
    let guard = ours.try_acquire().await.unwrap().expect("free");
    assert!(guard.is_held());
    assert!(theirs.try_acquire().await.unwrap().is_none());
    timed_out(theirs.acquire_timeout(SHORT).await);
    assert_eq!(
        children(&admin, &path).await.len(),
        1,
        "a loser left a node"
    );

    delete_under(&admin, guard.path()).await;
    assert_eq!(soon("lost", guard.lost()).await, LostReason::NodeDeleted);
    assert!(!guard.is_held());
    guard.release().await.unwrap();

    let theirs_now = soon("their acquire", theirs.acquire()).await.unwrap();
    assert!(theirs_now.is_held());
    theirs_now.release().await.unwrap();
    until_children(&admin, &path, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_lease_has_the_hold_shape() {
    let (a, b, admin) = clients().await;
    let path = unique("hold-sem");
    let leases = format!("{path}/leases");
    let ours = InterProcessSemaphoreV2::new(a, &path, 2);
    let theirs = InterProcessSemaphoreV2::builder(b, &path)
        .max_leases(2)
        .build();
    let first = ours.try_acquire().await.unwrap().expect("two free");
    let second = theirs.acquire().await.unwrap();
    assert!(first.is_held() && second.is_held());
    // Full: a try and a timed acquire give up and leave no lease (nor lock) node.
    assert!(theirs.try_acquire().await.unwrap().is_none());
    timed_out(theirs.acquire_timeout(SHORT).await);
    assert_eq!(children(&admin, &leases).await.len(), 2);
    assert!(children(&admin, &format!("{path}/locks")).await.is_empty());

    delete_under(&admin, first.path()).await;
    assert_eq!(soon("lost", first.lost()).await, LostReason::NodeDeleted);
    assert!(!first.is_held());
    first.release().await.unwrap();

    let third = theirs
        .try_acquire()
        .await
        .unwrap()
        .expect("a lease was freed");
    assert!(third.is_held());
    second.release().await.unwrap();
    third.release().await.unwrap();
    until_children(&admin, &leases, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_and_write_guards_have_the_hold_shape() {
    let (a, b, admin) = clients().await;
    let path = unique("hold-rw");
    let ours = ReadWriteLock::new(a, &path);
    let theirs = ReadWriteLock::new(b, &path);
    let read = ours.read_lock().try_acquire().await.unwrap().expect("free");
    let shared_read = theirs.read_lock().try_acquire().await.unwrap();
    let shared_read = shared_read.expect("readers share");
    assert!(read.is_held() && shared_read.is_held());
    assert!(theirs.write_lock().try_acquire().await.unwrap().is_none());
    timed_out(theirs.write_lock().acquire_timeout(SHORT).await);
    assert_eq!(children(&admin, &path).await.len(), 2);

    delete_under(&admin, read.path()).await;
    assert_eq!(
        soon("read lost", read.lost()).await,
        LostReason::NodeDeleted
    );
    assert!(!read.is_held() && shared_read.is_held());
    read.release().await.unwrap();
    shared_read.release().await.unwrap();

    let write = soon("write", theirs.write_lock().acquire()).await.unwrap();
    assert!(write.is_held());
    assert!(ours.read_lock().try_acquire().await.unwrap().is_none());
    timed_out(ours.read_lock().acquire_timeout(SHORT).await);
    delete_under(&admin, write.path()).await;
    assert_eq!(
        soon("write lost", write.lost()).await,
        LostReason::NodeDeleted
    );
    write.release().await.unwrap();
    until_children(&admin, &path, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn barrier_member_has_the_hold_shape() {
    let (a, b, admin) = clients().await;
    let path = unique("hold-barrier");
    let ours = DoubleBarrier::new(a, &path, 2);
    let theirs = DoubleBarrier::builder(b, &path).member_qty(2).build();
    assert_eq!((theirs.path(), theirs.member_qty()), (path.as_str(), 2));
    // Alone of two: a try and a timed enter give up and leave no member node.
    assert!(ours.try_acquire().await.unwrap().is_none());
    timed_out(ours.acquire_timeout(SHORT).await);
    assert!(children(&admin, &path).await.is_empty());

    let waiting = {
        let ours = ours.clone();
        tokio::spawn(async move { ours.acquire().await })
    };
    until_children(&admin, &path, 1).await;
    // The second makes two: its try enters, and lets the waiting one through.
    let their_member = theirs.try_acquire().await.unwrap().expect("two of two");
    let our_member = soon("our enter", waiting).await.unwrap().unwrap();
    assert!(our_member.is_held() && their_member.is_held());
    let mut kids = children(&admin, &path).await;
    kids.sort();
    assert_eq!(kids.len(), 3, "{kids:?}");
    assert!(kids.contains(&"ready".to_owned()));

    delete_under(&admin, their_member.path()).await;
    assert_eq!(
        soon("lost", their_member.lost()).await,
        LostReason::NodeDeleted
    );
    assert!(!their_member.is_held() && our_member.is_held());
    // A member whose node is gone cannot leave with the others: it says so.
    match soon("their leave", their_member.release()).await {
        Err(RecipeError::Lost(LostReason::NodeDeleted)) => {}
        other => panic!("{other:?}"),
    }
    // Ours is the last one in: its release leaves and takes `ready` away.
    soon("our leave", our_member.release()).await.unwrap();
    until_children(&admin, &path, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_mutex_has_the_hold_shape_and_is_not_reentrant() {
    let (a, b, admin) = clients().await;
    let path = unique("hold-semmutex");
    let leases = format!("{path}/leases");
    let ours = InterProcessSemaphoreMutex::new(a, &path);
    let theirs = InterProcessSemaphoreMutex::builder(b, &path)
        .data(b"theirs")
        .build();
    let guard = ours.try_acquire().await.unwrap().expect("free");
    assert!(guard.is_held());
    // Not re-entrant: held, also through the handle that holds it.
    assert!(ours.try_acquire().await.unwrap().is_none());
    assert!(theirs.try_acquire().await.unwrap().is_none());
    timed_out(theirs.acquire_timeout(SHORT).await);
    assert_eq!(children(&admin, &leases).await.len(), 1);
    assert!(children(&admin, &format!("{path}/locks")).await.is_empty());

    delete_under(&admin, guard.path()).await;
    assert_eq!(soon("lost", guard.lost()).await, LostReason::NodeDeleted);
    assert!(!guard.is_held());
    guard.release().await.unwrap();

    let theirs_now = soon("their acquire", theirs.acquire()).await.unwrap();
    assert_eq!(
        admin.get_data(theirs_now.path()).await.unwrap().0,
        &b"theirs"[..]
    );
    theirs_now.release().await.unwrap();
    until_children(&admin, &leases, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_lock_takes_all_or_none_and_releases_in_reverse() {
    let (a, b, admin) = clients().await;
    let base = unique("hold-multi");
    let paths = [format!("{base}/one"), format!("{base}/two")];
    // Persistent lock paths (not the containers the locks would make), whose pzxid after
    // the release tells which lock node went last.
    for p in [&base, &paths[0], &paths[1]] {
        admin
            .create(p, b"", CreateOptions::persistent())
            .await
            .unwrap();
    }
    let ours = InterProcessMultiLock::new(a, paths.clone());
    assert_eq!(ours.paths(), [paths[0].as_str(), paths[1].as_str()]);
    // Another process holds the second lock: ours takes neither.
    let second = InterProcessMutex::new(b.clone(), &paths[1]);
    let held = second.acquire().await.unwrap();
    assert!(ours.try_acquire().await.unwrap().is_none());
    timed_out(ours.acquire_timeout(SHORT).await);
    assert!(
        children(&admin, &paths[0]).await.is_empty(),
        "the first was kept"
    );
    assert_eq!(children(&admin, &paths[1]).await.len(), 1);

    let waiting = tokio::spawn(async move { ours.acquire().await.map(|g| (g, ours)) });
    until_children(&admin, &paths[1], 2).await;
    held.release().await.unwrap();
    let (guard, ours) = soon("both", waiting).await.unwrap().unwrap();
    assert!(guard.is_held());
    let nodes: Vec<String> = guard.guards().iter().map(|g| g.path().to_owned()).collect();
    assert!(nodes[0].starts_with(&paths[0]) && nodes[1].starts_with(&paths[1]));
    let theirs = InterProcessMultiLock::new(b, paths.clone());
    assert!(theirs.try_acquire().await.unwrap().is_none());

    // One lock lost is the whole guard's loss.
    delete_under(&admin, &nodes[0]).await;
    assert_eq!(soon("lost", guard.lost()).await, LostReason::NodeDeleted);
    assert!(!guard.is_held());
    assert_eq!(guard.lost_reason(), Some(LostReason::NodeDeleted));
    // The first lock's node is gone already; the release deletes the second's and says
    // nothing failed (a lost lock is released without error).
    guard.release().await.unwrap();
    for p in &paths {
        until_children(&admin, p, 0).await;
    }
    let again = ours.try_acquire().await.unwrap().expect("both free");
    again.release().await.unwrap();
    // Reverse order: the second lock's node was deleted before the first's.
    let pzxid = |p: &str| {
        let admin = admin.clone();
        let p = p.to_owned();
        async move { admin.exists(&p).await.unwrap().expect("persistent").pzxid }
    };
    assert!(pzxid(&paths[1]).await < pzxid(&paths[0]).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributed_barrier_holds_waiters_until_removed() {
    let (a, b, admin) = clients().await;
    let path = format!("{}/gate", unique("dbarrier"));
    let setter = DistributedBarrier::new(a, &path);
    let waiter = DistributedBarrier::new(b, &path);
    // Not set: a wait goes through at once.
    soon("an open barrier", waiter.wait()).await.unwrap();
    setter.set().await.unwrap();
    setter.set().await.unwrap(); // set twice is fine
    assert!(waiter.is_set().await.unwrap());
    assert!(admin.exists(&path).await.unwrap().is_some());
    timed_out(waiter.wait_timeout(SHORT).await);
    let waiting = {
        let waiter = waiter.clone();
        tokio::spawn(async move { waiter.wait().await })
    };
    tokio::time::sleep(SHORT).await;
    assert!(!waiting.is_finished(), "through a set barrier");
    setter.remove().await.unwrap();
    soon("the waiter goes through", waiting)
        .await
        .unwrap()
        .unwrap();
    setter.remove().await.unwrap(); // removed twice is fine
    assert!(!waiter.is_set().await.unwrap());
}

/// A multi-lock held when its session expires: the guard says it is lost, a waiter on
/// another client gets both locks, and ours takes them again on the new session once the
/// lost guard is released. Nothing is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_lock_across_an_expiry() {
    let (proxy, c) = proxied().await;
    let (_, b, admin) = clients().await;
    let base = unique("hold-multi-exp");
    let paths = [format!("{base}/a"), format!("{base}/b")];
    let ours = InterProcessMultiLock::new(c.clone(), paths.clone());
    let guard = ours.acquire().await.unwrap();
    let theirs = InterProcessMultiLock::new(b, paths.clone());
    let waiting = tokio::spawn(async move { theirs.acquire().await.map(|g| (g, theirs)) });
    until_children(&admin, &paths[0], 2).await;
    let (_, new) = expire_and_renew(&proxy, &c).await;
    assert_ne!(soon("lost", guard.lost()).await, LostReason::Released);
    assert!(!guard.is_held());
    let (their_guard, _theirs) = soon("theirs after the expiry", waiting)
        .await
        .unwrap()
        .unwrap();
    assert!(their_guard.is_held());
    drop(guard);
    their_guard.release().await.unwrap();
    let again = soon("ours on the new session", ours.acquire())
        .await
        .unwrap();
    for g in again.guards() {
        assert_eq!(owner(&admin, g.path()).await, new);
    }
    again.release().await.unwrap();
    for p in &paths {
        until_children(&admin, p, 0).await;
    }
}

/// A distributed barrier's wait goes on across a connection loss and a session expiry (its
/// node is persistent): it passes only once the barrier is removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributed_barrier_wait_across_a_connection_loss_and_an_expiry() {
    let (proxy, c) = proxied().await;
    let (_, _, admin) = clients().await;
    let path = format!("{}/gate", unique("dbarrier-faults"));
    let gate = DistributedBarrier::new(admin.clone(), &path);
    gate.set().await.unwrap();
    let ours = DistributedBarrier::new(c.clone(), &path);
    let waiting = {
        let ours = ours.clone();
        tokio::spawn(async move { ours.wait().await })
    };
    let server = conformance::shared_standalone();
    let watching = || async {
        let session = session_of(&c);
        watches_of(server, session).contains(&path).then_some(())
    };
    until_some("our wait watches the barrier", watching).await;
    partition_and_heal(&proxy, &c).await;
    expire_and_renew(&proxy, &c).await;
    // Watching again, on the new session.
    until_some("our wait watches the barrier again", watching).await;
    assert!(!waiting.is_finished(), "through a set barrier: {waiting:?}");
    gate.remove().await.unwrap();
    soon("through once removed", waiting)
        .await
        .unwrap()
        .unwrap();
}
