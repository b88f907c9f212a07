//! The semaphore, the read/write lock and the double barrier against a real ZooKeeper 3.8
//! server when the connection is lost (a partition at the fault proxy, the session kept)
//! and when the session expires and the client goes on with a new one (the default): waits
//! go on across a connection loss, holders are told they lost, waiters on the new session
//! get in, and no node is left behind. The counters' are in recipes_counters.rs.

mod recipes_support;

use std::sync::Arc;

use recipes_support::{
    children, client, cut_and_reconnect, cut_off, expire_and_renew, expire_session,
    let_back_renewed, name_of, owner, partition_and_heal, proxied, session_of, shared, soon,
    spawn_on, unique, until_children, until_some, until_state, watches_of, OpCode,
};
use tokio::task::JoinHandle;
use zk_recipes::{
    DoubleBarrier, InterProcessSemaphoreV2, LostReason, ReadWriteLock, RecipeError, SemaphoreLease,
    SuspendPolicy,
};
use zk_session::{Client, Op, SessionState, Version};

/// A semaphore of one lease at a fresh path, held by `admin`, and our acquire on `c` waiting
/// for it: the path, the holder's lease, our semaphore and the waiting acquire.
async fn held_with_waiter(
    c: &Client,
    admin: &Client,
    tag: &str,
) -> (
    String,
    SemaphoreLease,
    Arc<InterProcessSemaphoreV2>,
    JoinHandle<zk_recipes::Result<SemaphoreLease>>,
) {
    let path = unique(tag);
    let held = InterProcessSemaphoreV2::new(admin.clone(), &path, 1)
        .acquire()
        .await
        .unwrap();
    let ours = Arc::new(InterProcessSemaphoreV2::new(c.clone(), &path, 1));
    let waiter = spawn_on(&ours, |ours| async move { ours.acquire().await });
    until_children(admin, &format!("{path}/leases"), 2).await;
    (path, held, ours, waiter)
}

/// A semaphore acquire waiting for a lease when its connection is lost (session kept) goes
/// on waiting, and gets the lease when the holder gives it back: one lease node, ours, on
/// the same session, and no lock node left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_acquire_waits_across_a_connection_loss() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let (path, held, _ours, waiter) = held_with_waiter(&c, &admin, "sem-cut").await;
    let leases = format!("{path}/leases");
    partition_and_heal(&proxy, &c).await;
    // A second cut, the plain kind (the client reconnects at once).
    cut_and_reconnect(&proxy, &c).await;
    assert!(!waiter.is_finished(), "the wait ended: {:?}", waiter);
    held.release().await.unwrap();
    let lease = soon("the lease after the connection loss", waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(children(&admin, &leases).await, vec![name_of(lease.path())]);
    assert_eq!(owner(&admin, lease.path()).await, session_of(&c));
    until_children(&admin, &format!("{path}/locks"), 0).await;
    lease.release().await.unwrap();
    assert!(children(&admin, &leases).await.is_empty());
}

/// The reply to the lease node's create is lost (the proxy passes the create on, drops the
/// reply and closes the connection): after the reconnect the acquire finds its node by its
/// protected id and adopts it, so no orphan lease counts against the others, and it gets
/// the lease when the holder gives it back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_lease_create_whose_reply_is_lost_is_adopted() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("sem-lost-reply");
    let leases = format!("{path}/leases");
    let held = InterProcessSemaphoreV2::new(admin.clone(), &path, 1)
        .acquire()
        .await
        .unwrap();
    let connections = proxy.connections();
    proxy.cut_reply(OpCode::Create2, &format!("{leases}/_c_"));
    let ours = Arc::new(InterProcessSemaphoreV2::new(c.clone(), &path, 1));
    let waiter = spawn_on(&ours, |ours| async move { ours.acquire().await });
    let before = until_children(&admin, &leases, 2).await;
    until_some("the reconnect after the cut", || async {
        (proxy.connections() > connections).then_some(())
    })
    .await;
    held.release().await.unwrap();
    let lease = soon("the lease after the lost reply", waiter)
        .await
        .unwrap()
        .unwrap();
    assert!(
        before.contains(&name_of(lease.path())),
        "adopted the node made before the cut"
    );
    assert_eq!(children(&admin, &leases).await, vec![name_of(lease.path())]);
    assert_eq!(owner(&admin, lease.path()).await, session_of(&c));
    lease.release().await.unwrap();
    assert!(children(&admin, &leases).await.is_empty());
    until_children(&admin, &format!("{path}/locks"), 0).await;
}

/// A semaphore acquire waiting when its session expires fails with `Lost(Expired)` and
/// leaves no node in either session; acquiring again on the new session works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_acquire_in_flight_during_the_expiry_fails_lost() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let (path, held, ours, waiter) = held_with_waiter(&c, &admin, "sem-exp-wait").await;
    let leases = format!("{path}/leases");
    let (_, new) = expire_and_renew(&proxy, &c).await;
    match soon("the waiting acquire ends", waiter).await.unwrap() {
        Err(RecipeError::Lost(LostReason::Expired)) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(children(&admin, &leases).await, vec![name_of(held.path())]);
    let retry = spawn_on(&ours, |ours| async move { ours.acquire().await });
    until_children(&admin, &leases, 2).await;
    held.release().await.unwrap();
    let lease = soon("the retry", retry).await.unwrap().unwrap();
    assert_eq!(owner(&admin, lease.path()).await, new);
    lease.release().await.unwrap();
    assert!(children(&admin, &leases).await.is_empty());
    until_children(&admin, &format!("{path}/locks"), 0).await;
}

/// A lease says when it can no longer be trusted, as a mutex guard does: on a suspended
/// connection under the default policy (and stays lost), and under `WaitForLost` not then,
/// but when its node is deleted or its session expires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_lost_says_suspended_deleted_or_expired() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("lease-lost");
    let strict = InterProcessSemaphoreV2::new(c.clone(), &path, 3);
    let patient = InterProcessSemaphoreV2::builder(c.clone(), &path)
        .max_leases(3)
        .suspend_policy(SuspendPolicy::WaitForLost)
        .build();
    let a = strict.acquire().await.unwrap();
    let b = patient.acquire().await.unwrap();
    assert!(a.is_held() && b.is_held());
    assert_eq!(a.lost_reason(), None);

    partition_and_heal(&proxy, &c).await;
    assert_eq!(soon("a is told", a.lost()).await, LostReason::Suspended);
    assert!(!a.is_held(), "trust does not come back");
    assert!(
        b.is_held(),
        "WaitForLost keeps the lease across a short loss"
    );
    a.release().await.unwrap();

    admin.delete(b.path(), Version::Any).await.unwrap();
    assert_eq!(soon("b is told", b.lost()).await, LostReason::NodeDeleted);
    assert_eq!(b.lost_reason(), Some(LostReason::NodeDeleted));
    b.release().await.unwrap();

    let d = patient.acquire().await.unwrap();
    expire_and_renew(&proxy, &c).await;
    assert_eq!(soon("d is told", d.lost()).await, LostReason::Expired);
    d.release().await.unwrap();
    assert!(children(&admin, &format!("{path}/leases")).await.is_empty());
}

/// A lease's fenced writes go through while its node exists and are refused once it is
/// deleted (by the server's check, or at once when the lease already knows), leaving the
/// data as the last fenced write made it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_fenced_writes_stop_with_the_lease_node() {
    let admin = client(&shared()).await;
    let c = client(&shared()).await;
    let path = unique("lease-fence");
    let data = format!("{path}-data");
    admin
        .create(&data, b"0", zk_session::CreateOptions::persistent())
        .await
        .unwrap();
    let lease = InterProcessSemaphoreV2::new(c.clone(), &path, 1)
        .acquire()
        .await
        .unwrap();
    lease
        .fenced_multi([Op::set_data(&data, b"1", Version::Any)])
        .await
        .unwrap();
    admin.delete(lease.path(), Version::Any).await.unwrap();
    match lease
        .fenced_multi([Op::set_data(&data, b"2", Version::Any)])
        .await
    {
        Err(RecipeError::Lost(LostReason::NodeDeleted)) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(&admin.get_data(&data).await.unwrap().0[..], b"1");
    assert_eq!(soon("told", lease.lost()).await, LostReason::NodeDeleted);
    lease.release().await.unwrap();
}

/// Across an expiry of the holder's session: the write holder is told it lost the lock (and
/// stays lost on the new session), a read acquire waiting on the same client fails
/// `Lost(Expired)`, the reader of another client waiting behind the writer gets in, and our
/// writer on the new session gets the lock once that reader is gone; no node of either
/// session is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rw_lock_holder_and_waiters_across_the_expiry() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("rw-exp");
    let ours = ReadWriteLock::new(c.clone(), &path);
    let w = ours.write_lock().acquire().await.unwrap();
    let theirs = Arc::new(ReadWriteLock::new(admin.clone(), &path));
    let their_reader = spawn_on(&theirs, |theirs| async move {
        theirs.read_lock().acquire().await
    });
    let our_second = Arc::new(ReadWriteLock::new(c.clone(), &path));
    let our_reader = spawn_on(
        &our_second,
        |l| async move { l.read_lock().acquire().await },
    );
    until_children(&admin, &path, 3).await;

    let (_, new) = expire_and_renew(&proxy, &c).await;
    // Told when it was cut off (the default policy), before the expiry; it stays lost.
    assert_eq!(
        soon("the writer is told", w.lost()).await,
        LostReason::Suspended
    );
    assert!(!w.is_held());
    match soon("our waiting reader ends", our_reader).await.unwrap() {
        Err(RecipeError::Lost(LostReason::Expired)) => {}
        other => panic!("{other:?}"),
    }
    let r = soon("their reader gets in", their_reader)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(children(&admin, &path).await, vec![name_of(r.path())]);
    drop(w);

    let writer = spawn_on(
        &our_second,
        |l| async move { l.write_lock().acquire().await },
    );
    until_children(&admin, &path, 2).await;
    assert!(!writer.is_finished(), "a writer got in beside a reader");
    r.release().await.unwrap();
    let w2 = soon("our writer on the new session", writer)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(owner(&admin, w2.path()).await, new);
    assert!(w2.is_held());
    w2.release().await.unwrap();
    assert!(children(&admin, &path).await.is_empty());
}

/// A read lock held under `WaitForLost` is kept across a connection loss and lost with the
/// expiry of its session (told `Expired`); a writer of another client waiting behind it
/// gets in then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rw_lock_under_wait_for_lost_is_told_of_the_expiry() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("rw-patient");
    let ours = ReadWriteLock::builder(c.clone(), &path)
        .suspend_policy(SuspendPolicy::WaitForLost)
        .build();
    let r = ours.read_lock().acquire().await.unwrap();
    let theirs = Arc::new(ReadWriteLock::new(admin.clone(), &path));
    let writer = spawn_on(&theirs, |l| async move { l.write_lock().acquire().await });
    until_children(&admin, &path, 2).await;
    partition_and_heal(&proxy, &c).await;
    assert!(
        r.is_held(),
        "kept across a short loss: {:?}",
        r.lost_reason()
    );
    assert!(!writer.is_finished(), "a writer got in beside a reader");
    expire_and_renew(&proxy, &c).await;
    assert_eq!(
        soon("the reader is told", r.lost()).await,
        LostReason::Expired
    );
    let w = soon("their writer", writer).await.unwrap().unwrap();
    assert_eq!(children(&admin, &path).await, vec![name_of(w.path())]);
    drop(r);
    w.release().await.unwrap();
    assert!(children(&admin, &path).await.is_empty());
}

/// A reader waiting behind a writer across a connection loss keeps waiting and gets in
/// when the writer releases, on the same session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rw_lock_waiter_across_a_connection_loss() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("rw-cut");
    let theirs = ReadWriteLock::new(admin.clone(), &path);
    let w = theirs.write_lock().acquire().await.unwrap();
    let ours = Arc::new(ReadWriteLock::new(c.clone(), &path));
    let reader = spawn_on(
        &ours,
        |ours| async move { ours.read_lock().acquire().await },
    );
    until_children(&admin, &path, 2).await;
    partition_and_heal(&proxy, &c).await;
    assert!(!reader.is_finished(), "the wait ended: {reader:?}");
    w.release().await.unwrap();
    let r = soon("the reader after the connection loss", reader)
        .await
        .unwrap()
        .unwrap();
    assert!(r.is_held());
    assert_eq!(children(&admin, &path).await, vec![name_of(r.path())]);
    assert_eq!(owner(&admin, r.path()).await, session_of(&c));
    r.release().await.unwrap();
    assert!(children(&admin, &path).await.is_empty());
}

/// Members of a double barrier whose connection is lost while entering and while leaving
/// (session kept) carry on: all enter, all leave, and nothing is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn double_barrier_across_a_connection_loss() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("barrier-cut");
    let ours = Arc::new(DoubleBarrier::new(c.clone(), &path, 2));
    let theirs = Arc::new(DoubleBarrier::new(admin.clone(), &path, 2));
    let entering = spawn_on(&ours, |ours| async move { ours.acquire().await });
    until_children(&admin, &path, 1).await;
    cut_off(&proxy, &c).await;
    // The second member comes in while ours is cut off, and makes `ready`.
    let their_member = soon("their enter", theirs.acquire()).await.unwrap();
    proxy.partition(false);
    let our_member = soon("our enter after the connection loss", entering)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(children(&admin, &path).await.len(), 3);
    assert_eq!(owner(&admin, our_member.path()).await, session_of(&c));

    let leaving = tokio::spawn(our_member.release());
    // Ours waits for theirs (whichever is first in order, it watches the other's node);
    // its connection is lost meanwhile.
    let server = conformance::shared_standalone();
    let watched = their_member.path().to_owned();
    until_some("our leave watches their node", || async {
        watches_of(server, session_of(&c))
            .contains(&watched)
            .then_some(())
    })
    .await;
    partition_and_heal(&proxy, &c).await;
    assert!(!leaving.is_finished(), "left before all: {leaving:?}");
    soon("their leave", their_member.release()).await.unwrap();
    soon("our leave after the connection loss", leaving)
        .await
        .unwrap()
        .unwrap();
    until_children(&admin, &path, 0).await;
}

/// An enter waiting when the member's session expires fails with `Lost(Expired)` (its node
/// went with the session, so it must not be let through); entering again on the new session
/// works, and the barrier ends empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn double_barrier_enter_during_the_expiry_fails_lost() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("barrier-exp");
    let ours = Arc::new(DoubleBarrier::new(c.clone(), &path, 2));
    let entering = spawn_on(&ours, |ours| async move { ours.acquire().await });
    until_children(&admin, &path, 1).await;
    let (_, new) = expire_and_renew(&proxy, &c).await;
    match soon("the enter ends", entering).await.unwrap() {
        Err(RecipeError::Lost(LostReason::Expired)) => {}
        other => panic!("{other:?}"),
    }
    assert!(children(&admin, &path).await.is_empty());

    let theirs = DoubleBarrier::new(admin.clone(), &path, 2);
    let again = spawn_on(&ours, |ours| async move { ours.acquire().await });
    let their_member = soon("their enter", theirs.acquire()).await.unwrap();
    let our_member = soon("our enter on the new session", again)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(owner(&admin, our_member.path()).await, new);
    let leaving = tokio::spawn(our_member.release());
    soon("their leave", their_member.release()).await.unwrap();
    soon("our leave", leaving).await.unwrap().unwrap();
    assert!(children(&admin, &path).await.is_empty());
}

/// A member dropped after entering, without leaving, takes its node away, as its process
/// ending would: the other member's leave does not wait for it, and nothing is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn double_barrier_dropped_after_enter_leaves_nothing() {
    let (a, b) = (client(&shared()).await, client(&shared()).await);
    let path = unique("barrier-drop");
    let ours = Arc::new(DoubleBarrier::new(a.clone(), &path, 2));
    let theirs = DoubleBarrier::new(b.clone(), &path, 2);
    let entering = spawn_on(&ours, |ours| async move { ours.acquire().await });
    let their_member = soon("their enter", theirs.acquire()).await.unwrap();
    let our_member = soon("our enter", entering).await.unwrap().unwrap();
    assert!(a.exists(our_member.path()).await.unwrap().is_some());
    drop(our_member);
    soon("their leave", their_member.release()).await.unwrap();
    until_children(&b, &path, 0).await;
    // The client lives on: the node went because the member was dropped, not with a session.
    assert!(a.state().is_connected());
}

/// A member whose session expires after it entered has lost its node with the session: its
/// leave fails with `Lost`, the other member's leave does not wait for it, and nothing is
/// left (no request of the old session is sent on the new one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn double_barrier_leave_after_the_expiry() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("barrier-exp-leave");
    let ours = Arc::new(DoubleBarrier::new(c.clone(), &path, 2));
    let theirs = DoubleBarrier::new(admin.clone(), &path, 2);
    let entering = spawn_on(&ours, |ours| async move { ours.acquire().await });
    let their_member = soon("their enter", theirs.acquire()).await.unwrap();
    let our_member = soon("our enter", entering).await.unwrap().unwrap();
    expire_and_renew(&proxy, &c).await;
    assert!(admin.exists(our_member.path()).await.unwrap().is_none());
    // The member says so before it is asked to leave (suspended first, or expired).
    let reason = soon("our member is lost", our_member.lost()).await;
    assert_ne!(reason, LostReason::Released);
    assert!(!our_member.is_held());
    match soon("our leave", our_member.release()).await {
        Err(RecipeError::Lost(_)) => {}
        other => panic!("{other:?}"),
    }
    soon("their leave", their_member.release()).await.unwrap();
    until_children(&admin, &path, 0).await;
}

/// A connection lost for longer than the session timeout: the session is presumed lost, and
/// a waiting semaphore acquire and a waiting barrier enter fail with `Lost(SessionLost)`
/// instead of waiting on a session that is gone. Once the client is back with a new session,
/// nothing of theirs is left and the semaphore serves it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_end_when_the_session_is_presumed_lost() {
    let admin = client(&shared()).await;
    let proxy = recipes_support::Proxy::start(conformance::shared_standalone().client_addr()).await;
    let c = Client::builder(&proxy.connect_string())
        .session_timeout(std::time::Duration::from_secs(4))
        .connect()
        .await
        .expect("connect");
    let (path, held, ours, waiter) = held_with_waiter(&c, &admin, "sem-presumed-lost").await;
    let leases = format!("{path}/leases");
    let barrier_path = unique("barrier-presumed-lost");
    let barrier = Arc::new(DoubleBarrier::new(c.clone(), &barrier_path, 2));
    let entering = spawn_on(&barrier, |b| async move { b.acquire().await.map(drop) });
    until_children(&admin, &barrier_path, 1).await;

    proxy.partition(true);
    until_state(&c, SessionState::Lost).await;
    for (what, r) in [
        (
            "the acquire",
            soon("the acquire ends", waiter).await.unwrap().map(drop),
        ),
        ("the enter", soon("the enter ends", entering).await.unwrap()),
    ] {
        match r {
            Err(RecipeError::Lost(LostReason::SessionLost)) => {}
            other => panic!("{what}: {other:?}"),
        }
    }

    let old = session_of(&c);
    expire_session(&shared(), &c).await;
    let new = let_back_renewed(&proxy, &c, old).await;
    assert_eq!(children(&admin, &leases).await, vec![name_of(held.path())]);
    until_children(&admin, &barrier_path, 0).await;
    let again = spawn_on(&ours, |s| async move { s.acquire().await });
    until_children(&admin, &leases, 2).await;
    held.release().await.unwrap();
    let lease = soon("a lease on the new session", again)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(owner(&admin, lease.path()).await, new);
    lease.release().await.unwrap();
}
