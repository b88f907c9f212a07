//! zk-recipes' locks and semaphore beside real Curator (5.4, Debian's
//! libcurator-recipes-java) on one path of a real server when one side fails: our holder's
//! session is expired (taken over and closed from a second connection) or times out behind a
//! cut connection, or Curator's JVM is SIGKILLed. The lock or the lease passes to the other
//! side only once the failed side's node is gone, the failed side of ours says it lost it,
//! and after its client comes back on a new session it neither claims nor holds what it lost.
//! Elections under the same faults: recipes_election_interop_faults.rs. The Curator peer and
//! the shared checks: interop_faults_support.

mod interop_faults_support;
mod recipes_support;

use std::{sync::Arc, time::Duration};

use interop_faults_support::*;
use recipes_support::{peer::Peer, *};
use zk_recipes::{
    InterProcessMutex, InterProcessMutexGuard, InterProcessSemaphoreV2, LostReason, SuspendPolicy,
};
use zk_session::{Op, Version};

impl Side {
    /// After our `m` lost `ours` and our client came back on session `new` while Curator
    /// (`peer`) holds the lock with node `listed`: neither claims the lock, a fenced write
    /// through `ours` is refused, our new session cannot take the lock; it queues behind
    /// Curator and gets the lock once Curator lets go. Returns that new guard.
    async fn mutex_after_loss(
        &self,
        m: &Arc<InterProcessMutex>,
        ours: InterProcessMutexGuard,
        listed: String,
        peer: Peer,
        new: i64,
    ) -> InterProcessMutexGuard {
        assert!(!ours.is_held() && !m.is_held());
        assert_refused(ours.fenced_multi(self.stale_write()).await);
        assert!(
            m.try_acquire().await.unwrap().is_none(),
            "our new session took the lock Curator holds"
        );
        ours.release().await.unwrap();
        assert_eq!(
            children(&self.admin, &self.path).await,
            vec![listed.clone()]
        );
        let again = spawn_acquire(m);
        until_children(&self.admin, &self.path, 2).await;
        let curators = format!("{}/{listed}", self.path);
        let g = hand_back(peer, &self.admin, &curators, again).await;
        assert_eq!(owner(&self.admin, g.path()).await, new);
        g
    }
}

/// 1. Our holder's session is expired while Curator waits on the lock: Curator gets in only
/// then, alone; our guard says Expired and its fenced writes fail; our client's new session
/// neither holds nor can take the lock until Curator lets it go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutex_curator_takes_over_when_our_holders_session_expires() {
    let side = Side::new("ifault-mutex-expiry", Duration::from_secs(10)).await;
    let path = &side.path;
    // Only the session's end counts, so the reason seen is the expiry itself.
    let m = Arc::new(
        InterProcessMutex::builder(side.c.clone(), path)
            .suspend_policy(SuspendPolicy::WaitForLost)
            .build(),
    );
    let ours = m.acquire().await.unwrap();
    let (mut peer, curator_session) = start_peer("mutex", path, CURATOR_SESSION_MS).await;
    until_children(&side.admin, path, 2).await;
    until_watching(curator_session, ours.path()).await;
    assert!(!peer.has_said("ACQUIRED"), "Curator got in while we hold");

    let (listed, new) = side
        .expire_until_curator_in(&mut peer, "ACQUIRED", path, ours.path(), curator_session)
        .await;
    assert_eq!(
        soon("our holder hears", ours.lost()).await,
        LostReason::Expired
    );
    // Its new session queues behind Curator, gets the lock when it lets go, and its fenced
    // write goes through.
    let g = side.mutex_after_loss(&m, ours, listed, peer, new).await;
    let fresh = [Op::set_data(&side.target, b"fresh", Version::Any)];
    g.fenced_multi(fresh).await.unwrap();
    g.release().await.unwrap();
    side.clean(path).await;
}

/// 2. Curator's JVM is SIGKILLed while it holds the lock and we wait: we get the lock once
/// the server has expired Curator's session, never while its node is still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutex_we_take_over_when_the_curator_holder_is_killed() {
    let mut case = KillCase::start("ifault-mutex-kill", "mutex", "ACQUIRED", "").await;
    let m = Arc::new(InterProcessMutex::new(case.c.clone(), &case.path));
    let waiter = spawn_acquire(&m);
    until_children(&case.admin, &case.path, 2).await;

    case.kill_until_gone(|| m.is_held() || waiter.is_finished())
        .await;
    let g = soon("ours after Curator's session", waiter)
        .await
        .unwrap()
        .unwrap();
    assert!(g.is_held());
    case.ours_alone(g.path()).await;
    g.release().await.unwrap();
    case.all_gone().await;
}

/// 3. Our holder's connection is cut for longer than its session: it says the lock is lost
/// as soon as the connection goes (before Curator can get in), the server expires the
/// session and Curator gets in alone; once the cut heals our client's new session neither
/// holds nor takes the lock until Curator lets it go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutex_curator_takes_over_when_our_cut_off_holder_times_out() {
    let side = Side::new("ifault-mutex-cut", SHORT_SESSION).await;
    let path = &side.path;
    // The default policy: doubt the lock as soon as the connection is gone.
    let m = Arc::new(InterProcessMutex::new(side.c.clone(), path));
    let ours = m.acquire().await.unwrap();
    let (mut peer, curator_session) = start_peer("mutex", path, CURATOR_SESSION_MS).await;
    until_children(&side.admin, path, 2).await;
    until_watching(curator_session, ours.path()).await;

    // No expire_session here: the server times the session out by itself.
    let (listed, new) = side
        .cut_until_curator_in(
            &mut peer,
            "ACQUIRED",
            ours.lost(),
            ours.path(),
            curator_session,
            SessionEnd::TimesOut,
        )
        .await;
    let g = side.mutex_after_loss(&m, ours, listed, peer, new).await;
    g.release().await.unwrap();
    side.clean(path).await;
}

/// 4. The semaphore's one lease: ours is held when our session is expired while Curator's
/// InterProcessSemaphoreV2 waits; Curator gets the lease alone, our lease says Expired, and
/// our new session gets the lease after Curator returns it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_curator_takes_the_lease_when_our_holders_session_expires() {
    let side = Side::new("ifault-semaphore", Duration::from_secs(10)).await;
    let (path, admin) = (&side.path, &side.admin);
    let leases = format!("{path}/leases");
    let sem = Arc::new(
        InterProcessSemaphoreV2::builder(side.c.clone(), path)
            .max_leases(1)
            .suspend_policy(SuspendPolicy::WaitForLost)
            .build(),
    );
    let ours = sem.acquire().await.unwrap();
    let (mut peer, curator_session) = start_peer("semaphore", path, CURATOR_SESSION_MS).await;
    // Curator's lease node is in: it lists the leases next, and waits (a children watch,
    // which `wchc` does not show) while there are two.
    until_children(admin, &leases, 2).await;
    let locks = until_children(admin, &format!("{path}/locks"), 1).await;
    assert_eq!(
        owner(admin, &format!("{path}/locks/{}", locks[0])).await,
        curator_session
    );
    assert!(!peer.has_said("ACQUIRED"), "Curator got a second lease");

    let (listed, new) = side
        .expire_until_curator_in(&mut peer, "ACQUIRED", &leases, ours.path(), curator_session)
        .await;
    assert_eq!(
        soon("our lease holder hears", ours.lost()).await,
        LostReason::Expired
    );
    assert!(!ours.is_held());
    assert_refused(ours.fenced_multi(side.stale_write()).await);
    ours.release().await.unwrap();
    assert_eq!(children(admin, &leases).await, vec![listed.clone()]);

    let again = spawn_on(&sem, |s| async move { s.acquire().await });
    until_children(admin, &leases, 2).await;
    let curators = format!("{leases}/{listed}");
    let lease = hand_back(peer, admin, &curators, again).await;
    assert_eq!(owner(admin, lease.path()).await, new);
    assert_eq!(children(admin, &leases).await, vec![name_of(lease.path())]);
    lease.release().await.unwrap();
    side.clean(&leases).await;
}

/// 5. Curator's JVM is SIGKILLed while it holds the semaphore's one lease and ours waits
/// for it: ours gets the lease once the server has removed Curator's lease node, never while
/// it is still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_we_take_the_lease_when_the_curator_holder_is_killed() {
    let mut case =
        KillCase::start("ifault-semaphore-kill", "semaphore", "ACQUIRED", "/leases").await;
    let sem = Arc::new(InterProcessSemaphoreV2::new(case.c.clone(), &case.path, 1));
    let waiter = spawn_on(&sem, |s| async move { s.acquire().await });
    // Our lease node is in beside Curator's: ours counts two and waits.
    until_children(&case.admin, &format!("{}/leases", case.path), 2).await;

    case.kill_until_gone(|| waiter.is_finished()).await;
    let lease = soon("ours after Curator's session", waiter)
        .await
        .unwrap()
        .unwrap();
    case.ours_alone(lease.path()).await;
    lease.release().await.unwrap();
    case.all_gone().await;
}
