//! The semaphore, the read/write lock and the double barrier against a real ZooKeeper 3.8
//! server: their limits, timeouts that leave nothing behind, the downgrade that keeps a
//! waiting writer out (CURATOR-621), and session expiry.

mod recipes_support;

use conformance::ephemeral_owner;
use std::{sync::Arc, time::Duration};

use recipes_support::{
    children, client, expire_and_renew, proxied, shared, soon, unique, until_children,
};
use zk_recipes::{DoubleBarrier, InterProcessSemaphoreV2, ReadWriteLock, RecipeError};
use zk_session::Acl;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_admits_max_leases_and_serves_waiters_as_leases_return() {
    let (a, b) = (client(&shared()).await, client(&shared()).await);
    let path = unique("sem");
    let ours = InterProcessSemaphoreV2::new(a.clone(), &path, 3);
    let two = ours.acquire_many(2).await.unwrap();
    let other = Arc::new(InterProcessSemaphoreV2::new(b.clone(), &path, 3));
    let third = other.acquire().await.unwrap();
    assert_eq!(ours.participant_nodes().await.unwrap().len(), 3);
    // Full: a timed acquire gives up and leaves no lease node (nor lock node) behind.
    let err = other
        .acquire_timeout(Duration::from_millis(300))
        .await
        .unwrap_err();
    assert!(matches!(err, RecipeError::Timeout), "{err:?}");
    assert_eq!(children(&a, &format!("{path}/leases")).await.len(), 3);
    assert!(children(&a, &format!("{path}/locks")).await.is_empty());
    // A waiter gets the lease given back.
    let waiter = {
        let other = other.clone();
        tokio::spawn(async move { other.acquire().await })
    };
    until_children(&a, &format!("{path}/leases"), 4).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiter.is_finished(), "a fourth lease was granted");
    let mut two = two.into_iter();
    two.next().unwrap().release().await.unwrap();
    let fourth = soon("the waiter", waiter).await.unwrap().unwrap();
    assert!(fourth.path().contains("/leases/_c_") && fourth.path().contains("-lease-"));
    // Bad counts are typed errors.
    assert!(matches!(
        ours.acquire_many(4).await,
        Err(RecipeError::InvalidArgument(_))
    ));
    drop(two);
    drop(third);
    fourth.release().await.unwrap();
    until_children(&a, &format!("{path}/leases"), 0).await;
}

/// A holder's session expires: its lease goes with it and a waiter gets in; the same
/// handle acquires again on the new session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_lease_of_an_expired_session_frees_its_place() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("sem-exp");
    let ours = InterProcessSemaphoreV2::new(c.clone(), &path, 1);
    let old = ours.acquire().await.unwrap();
    let other = Arc::new(InterProcessSemaphoreV2::new(admin.clone(), &path, 1));
    let waiter = {
        let other = other.clone();
        tokio::spawn(async move { other.acquire().await })
    };
    until_children(&admin, &format!("{path}/leases"), 2).await;
    expire_and_renew(&proxy, &c).await;
    let theirs = soon("the waiter after the expiry", waiter)
        .await
        .unwrap()
        .unwrap();
    drop(old);
    theirs.release().await.unwrap();
    let again = soon("a new lease on the new session", ours.acquire())
        .await
        .unwrap();
    let (_, stat) = admin.get_data(again.path()).await.unwrap();
    assert_eq!(stat.ephemeral_owner, ephemeral_owner(&c));
    again.release().await.unwrap();
}

/// The builder's data and ACL land on the lease node; the lock node under `locks` gets the
/// ACL only, its data stays empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_builder_data_and_acl_are_the_lease_nodes() {
    let (a, b) = (client(&shared()).await, client(&shared()).await);
    let path = unique("sem-builder");
    let full = InterProcessSemaphoreV2::new(b.clone(), &path, 1)
        .acquire()
        .await
        .unwrap();
    let ours = Arc::new(
        InterProcessSemaphoreV2::builder(a.clone(), &path)
            .max_leases(1)
            .data(b"worker-7")
            .acl(Acl::read_unsafe())
            .build(),
    );
    // Full: our waiter holds the lock with its lease node created, waiting for a place.
    let waiter = {
        let ours = ours.clone();
        tokio::spawn(async move { ours.acquire().await })
    };
    until_children(&a, &format!("{path}/leases"), 2).await;
    let lock = until_children(&a, &format!("{path}/locks"), 1).await;
    let lock = format!("{path}/locks/{}", lock[0]);
    assert!(a.get_data(&lock).await.unwrap().0.is_empty());
    assert_eq!(a.get_acl(&lock).await.unwrap().0, Acl::read_unsafe());
    full.release().await.unwrap();
    let lease = soon("the waiter", waiter).await.unwrap().unwrap();
    assert_eq!(a.get_data(lease.path()).await.unwrap().0, &b"worker-7"[..]);
    assert_eq!(a.get_acl(lease.path()).await.unwrap().0, Acl::read_unsafe());
    lease.release().await.unwrap();
    until_children(&a, &format!("{path}/leases"), 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rw_lock_readers_share_writers_exclude_and_reenter() {
    let (a, b) = (client(&shared()).await, client(&shared()).await);
    let path = unique("rw");
    let ours = ReadWriteLock::new(a.clone(), &path);
    let theirs = Arc::new(ReadWriteLock::new(b.clone(), &path));
    let r1 = ours.read_lock().acquire().await.unwrap();
    let r2 = theirs.read_lock().acquire().await.unwrap();
    let again = r1.reenter().unwrap();
    assert_eq!(ours.read_lock().hold_count(), 2);
    // A writer waits for both readers; a reader after the writer waits for the writer.
    assert!(theirs.write_lock().try_acquire().await.unwrap().is_none());
    let writer = {
        let theirs = theirs.clone();
        tokio::spawn(async move { theirs.write_lock().acquire().await })
    };
    until_children(&a, &path, 3).await;
    let late = ReadWriteLock::new(client(&shared()).await, &path);
    assert!(late.read_lock().try_acquire().await.unwrap().is_none());
    drop(again);
    r1.release().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!writer.is_finished(), "the writer passed a reader");
    r2.release().await.unwrap();
    let w = soon("the writer", writer).await.unwrap().unwrap();
    assert!(w.path().contains("-__WRIT__"));
    assert!(ours.read_lock().try_acquire().await.unwrap().is_none());
    w.release().await.unwrap();
    let r = ours.read_lock().acquire().await.unwrap();
    assert!(r.path().contains("-__READ__"));
    r.release().await.unwrap();
}

/// The write holder takes the read lock at once, and keeps it after the write lock goes; a
/// writer that queued meanwhile still waits (CURATOR-621, unfixed in Curator 5.4): the read
/// node carries the write node's sequence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rw_lock_downgrade_keeps_a_waiting_writer_out() {
    let (a, b) = (client(&shared()).await, client(&shared()).await);
    let path = unique("rw-down");
    let ours = ReadWriteLock::new(a.clone(), &path);
    let theirs = Arc::new(ReadWriteLock::new(b.clone(), &path));
    let w = ours.write_lock().acquire().await.unwrap();
    let writer = {
        let theirs = theirs.clone();
        tokio::spawn(async move { theirs.write_lock().acquire().await })
    };
    until_children(&a, &path, 2).await;
    let r = ours.read_while_writing(&w).await.unwrap();
    let seq = |p: &str| p.rsplit("__").next().unwrap().to_owned();
    assert_eq!(
        seq(r.path()),
        seq(w.path()),
        "the read node takes the write sequence"
    );
    w.release().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !writer.is_finished(),
        "a writer got in beside the downgraded reader"
    );
    // Not a guard of the write side: refused.
    assert!(matches!(
        ours.read_while_writing(&r).await,
        Err(RecipeError::NotHeld)
    ));
    r.release().await.unwrap();
    let tw = soon("the writer", writer).await.unwrap().unwrap();
    tw.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn double_barrier_enters_together_and_leaves_together() {
    const N: usize = 3;
    let path = unique("barrier");
    let admin = client(&shared()).await;
    let lonely = DoubleBarrier::new(admin.clone(), &path, N);
    // Alone, the enter times out and takes its node away (CURATOR-318).
    assert!(matches!(
        lonely.acquire_timeout(Duration::from_millis(300)).await,
        Err(RecipeError::Timeout)
    ));
    assert!(children(&admin, &path).await.is_empty());
    let mut members = Vec::new();
    for _ in 0..N {
        let c = client(&shared()).await;
        let path = path.clone();
        members.push(tokio::spawn(async move {
            let b = DoubleBarrier::new(c, &path, N);
            let member = b.acquire().await.unwrap();
            assert!(member.is_held());
            member
        }));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut entered = Vec::new();
    for m in members {
        entered.push(soon("enter", m).await.unwrap());
    }
    let mut kids = children(&admin, &path).await;
    kids.sort();
    assert_eq!(kids.len(), N + 1);
    assert!(kids.contains(&"ready".to_owned()));
    assert!(kids.iter().filter(|k| *k != "ready").all(|k| k.len() == 36));
    // Leaving: nobody finishes before all have started to leave.
    let last = entered.pop().unwrap();
    let leaving: Vec<_> = entered
        .into_iter()
        .map(|m| tokio::spawn(m.release()))
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(leaving.iter().all(|l| !l.is_finished()), "left before all");
    last.release().await.unwrap();
    for l in leaving {
        soon("leave", l).await.unwrap().unwrap();
    }
    assert!(children(&admin, &path).await.is_empty());
}
