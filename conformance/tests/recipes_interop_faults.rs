//! zk-recipes beside real Curator (5.4, Debian's libcurator-recipes-java) on one path of a
//! real server when one side fails: our holder's session is expired (taken over and closed
//! from a second connection) or times out behind a cut connection, or Curator's JVM is
//! SIGKILLed. The lock, the lease or the leadership passes to the other side only once the
//! failed side's node is gone, the failed side of ours says it lost it, and after its client
//! comes back on a new session it neither claims nor holds what it lost.
//!
//! The peer is conformance/java/CuratorFaults.java, compiled here with javac. It says which
//! session it has, so the tests can ask the server (`wchc`, ephemeral owners) what Curator
//! waits on and owns. Nothing is skipped: without javac or the jars the tests fail and say
//! what to install.

mod recipes_support;

use std::{
    sync::{Arc, OnceLock},
    time::{Duration, Instant},
};

use conformance::{peers::JavaProgram, shared_standalone};
use recipes_support::{peer::Peer, *};
use tokio::task::JoinHandle;
use zk_recipes::{
    InterProcessMutex, InterProcessMutexGuard, LeaderLatch, LeadershipEvent, LostReason,
    RecipeError, Semaphore, SuspendPolicy,
};
use zk_session::{Client, CreateOptions, Op, Version};

/// The Curator peer's session timeout when nothing fails on its side (the shared server
/// caps sessions at 4 s).
const CURATOR_SESSION_MS: &str = "4000";
/// The session timeout of a side that is left to time out: short, so the tests stay short.
const SHORT_SESSION: Duration = Duration::from_secs(2);

/// CuratorFaults compiled into a scratch directory, once per process.
fn curator() -> &'static JavaProgram {
    static PROGRAM: OnceLock<JavaProgram> = OnceLock::new();
    PROGRAM.get_or_init(|| compile_curator_peer("CuratorFaults.java", "zk-recipes-faults"))
}

/// Starts the peer in `mode` on `path` with sessions of `session_ms`; the peer and its
/// session id.
async fn start_peer(mode: &str, path: &str, session_ms: &str) -> (Peer, i64) {
    let mut cmd = curator().command_with(&["-Xmx128m"]);
    cmd.args([mode, &shared(), path, session_ms]);
    let mut peer = Peer::start(&format!("Curator {mode}"), cmd).await;
    let session = peer.answer("SESSION").await;
    let session = session
        .parse()
        .unwrap_or_else(|_| panic!("a session id, not {session:?}"));
    (peer, session)
}

/// Waits until `session` watches `path` on the shared server: a Curator waiter that
/// watches the node ahead of it can only go on when told that node changed.
async fn until_watching(session: i64, path: &str) {
    eventually(&format!("Curator's session watches {path}"), || async {
        watches_of(shared_standalone(), session)
            .iter()
            .any(|p| p == path)
    })
    .await;
}

/// What the peer's `ACQUIRED` line lists (the children of `parent` as Curator saw them once
/// in) must be one node, not `ours`, owned by the peer's `session`: our node was gone.
async fn only_curators(admin: &Client, parent: &str, listed: &str, ours: &str, session: i64) {
    assert!(
        !listed.is_empty() && !listed.contains(','),
        "Curator got in beside another node: {listed:?} under {parent}"
    );
    assert_ne!(listed, name_of(ours), "Curator listed our node as its own");
    let node = format!("{parent}/{listed}");
    assert_eq!(owner(admin, &node).await, session, "{node} is Curator's");
    assert!(
        admin.exists(ours).await.unwrap().is_none(),
        "{ours} is gone"
    );
}

/// Our side of a test: a client behind its own fault proxy, an admin client that looks on,
/// the recipe's path and a persistent data node beside it for fenced writes.
struct Side {
    proxy: Proxy,
    c: Client,
    admin: Client,
    path: String,
    target: String,
}

impl Side {
    /// Our client has a session of `session`.
    async fn new(tag: &str, session: Duration) -> Side {
        let proxy = Proxy::start(shared_standalone().client_addr()).await;
        let c = Client::builder(&proxy.connect_string())
            .session_timeout(session)
            .connect()
            .await
            .expect("connect");
        let admin = client(&shared()).await;
        let path = unique(tag);
        let target = format!("{path}-data");
        admin
            .create(&target, b"", CreateOptions::persistent())
            .await
            .unwrap();
        Side {
            proxy,
            c,
            admin,
            path,
            target,
        }
    }

    /// Cuts our client off and expires its session while Curator waits; once Curator says
    /// ACQUIRED, checks that it got in alone under `parent` (see [`only_curators`]), lets our
    /// client back and waits for its new session. Curator's node and our new session id.
    async fn expire_until_curator_in(
        &self,
        peer: &mut Peer,
        parent: &str,
        ours: &str,
        curator: i64,
    ) -> (String, i64) {
        let old = session_of(&self.c);
        self.proxy.partition(true);
        expire_session(&shared(), &self.c).await;
        let listed = peer.answer("ACQUIRED").await;
        only_curators(&self.admin, parent, &listed, ours, curator).await;
        (listed, let_back_renewed(&self.proxy, &self.c, old).await)
    }

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
        assert_eq!(children(&self.admin, &self.path).await, vec![listed]);
        let again = spawn_acquire(m);
        until_children(&self.admin, &self.path, 2).await;
        let g = hand_back(peer, again).await;
        assert_eq!(owner(&self.admin, g.path()).await, new);
        g
    }

    /// A fenced write to the data node, which must be refused: the hold is lost.
    fn stale_write(&self) -> [Op; 1] {
        [Op::set_data(&self.target, b"stale", Version::Any)]
    }

    /// Nothing is left under `parent`, nor written by a stale hold; removes the data node.
    async fn clean(&self, parent: &str) {
        assert!(children(&self.admin, parent).await.is_empty());
        assert_ne!(
            &self.admin.get_data(&self.target).await.unwrap().0[..],
            b"stale"
        );
        self.admin.delete(&self.target, Version::Any).await.unwrap();
    }
}

/// A fenced write of a lost hold must fail with `Lost`.
fn assert_refused<T: std::fmt::Debug>(r: zk_recipes::Result<T>) {
    assert!(matches!(r, Err(RecipeError::Lost(_))), "{r:?}");
}

/// Tells the peer to let go, waits until it has and has exited, then for our `waiter` to
/// get what the peer held.
async fn hand_back<T>(mut peer: Peer, waiter: JoinHandle<zk_recipes::Result<T>>) -> T {
    peer.send("release").await;
    peer.expect("RELEASED").await;
    peer.finish().await;
    soon("ours after Curator lets go", waiter)
        .await
        .unwrap()
        .unwrap()
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
        .expire_until_curator_in(&mut peer, path, ours.path(), curator_session)
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
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("ifault-mutex-kill");
    let short = SHORT_SESSION.as_millis().to_string();
    let (mut peer, curator_session) = start_peer("mutex", &path, &short).await;
    let listed = peer.answer("ACQUIRED").await;
    let curator_node = format!("{path}/{listed}");
    assert_eq!(owner(&admin, &curator_node).await, curator_session);
    let m = Arc::new(InterProcessMutex::new(c.clone(), &path));
    let waiter = spawn_acquire(&m);
    until_children(&admin, &path, 2).await;

    peer.kill9();
    // A grant seen before a later sighting of Curator's node would mean two holders.
    let deadline = Instant::now() + SOON;
    loop {
        let granted = m.is_held() || waiter.is_finished();
        if admin.exists(&curator_node).await.unwrap().is_none() {
            break;
        }
        assert!(
            !granted,
            "we got the lock while {curator_node} still exists"
        );
        assert!(
            Instant::now() < deadline,
            "the server kept the killed Curator's {curator_node} for {SOON:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let g = soon("ours after Curator's session", waiter)
        .await
        .unwrap()
        .unwrap();
    assert!(g.is_held());
    assert_eq!(owner(&admin, g.path()).await, session_of(&c));
    assert_eq!(children(&admin, &path).await, vec![name_of(g.path())]);
    g.release().await.unwrap();
    assert!(children(&admin, &path).await.is_empty());
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

    let old = session_of(&side.c);
    let curator_said = peer.stdout.clone();
    side.proxy.partition(true);
    assert_eq!(
        soon("our holder doubts the lock", ours.lost()).await,
        LostReason::Suspended
    );
    assert!(
        !curator_said
            .snapshot()
            .iter()
            .any(|l| l.starts_with("ACQUIRED")),
        "Curator got in before our holder let go"
    );
    // No expire_session here: the server times the session out by itself.
    let listed = peer.answer("ACQUIRED").await;
    only_curators(&side.admin, path, &listed, ours.path(), curator_session).await;

    let new = let_back_renewed(&side.proxy, &side.c, old).await;
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
        Semaphore::builder(side.c.clone(), path, 1)
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
        .expire_until_curator_in(&mut peer, &leases, ours.path(), curator_session)
        .await;
    assert_eq!(
        soon("our lease holder hears", ours.lost()).await,
        LostReason::Expired
    );
    assert!(!ours.is_held());
    assert_refused(ours.fenced_multi(side.stale_write()).await);
    ours.release().await.unwrap();
    assert_eq!(children(admin, &leases).await, vec![listed]);

    let again = spawn_on(&sem, |s| async move { s.acquire().await });
    until_children(admin, &leases, 2).await;
    let lease = hand_back(peer, again).await;
    assert_eq!(owner(admin, lease.path()).await, new);
    assert_eq!(children(admin, &leases).await, vec![name_of(lease.path())]);
    lease.release().await.unwrap();
    side.clean(&leases).await;
}

/// 5. Our LeaderLatch leads and Curator's waits; our leader is cut off and its session
/// expired at once. Ours steps down as soon as it is cut off, without waiting for the
/// session's end (before Curator's can lead), Curator's takes the lead once our node is
/// gone, and ours takes part again on its new session behind Curator's, leading only when
/// Curator's closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latch_curator_leads_when_our_leaders_session_expires() {
    let side = Side::new("ifault-latch", Duration::from_secs(10)).await;
    let (path, admin) = (&side.path, &side.admin);
    let latch = LeaderLatch::builder(side.c.clone(), path)
        .id("ours")
        .start()
        .await
        .unwrap();
    soon("ours leads", latch.await_leadership()).await.unwrap();
    let our_node = latch.our_path().expect("a node while leading");
    let (mut peer, curator_session) = start_peer("latch", path, CURATOR_SESSION_MS).await;
    until_children(admin, path, 2).await;
    until_watching(curator_session, &our_node).await;
    assert!(!peer.has_said("LEADER"), "two leaders");

    let mut changes = latch.changes();
    let old = session_of(&side.c);
    let curator_said = peer.stdout.clone();
    cut_off(&side.proxy, &side.c).await;
    // The expiry races our step-down: ours must not wait for the session's end.
    let victim = side.c.clone();
    let expiry = tokio::spawn(async move { expire_session(&shared(), &victim).await });
    assert_eq!(
        soon("ours steps down", changes.next()).await,
        Some(LeadershipEvent::NotLeader)
    );
    assert!(
        !curator_said.snapshot().iter().any(|l| l == "LEADER"),
        "Curator's latch led before ours stepped down"
    );
    assert!(!latch.has_leadership());
    soon("the expiry", expiry).await.unwrap();
    peer.expect("LEADER").await;
    assert!(admin.exists(&our_node).await.unwrap().is_none());

    let new = let_back_renewed(&side.proxy, &side.c, old).await;
    let rejoined = until_some("ours takes part again on the new session", || async {
        let node = latch.our_path()?;
        let owner = admin.exists(&node).await.ok()??.ephemeral_owner;
        (owner == new).then_some(node)
    })
    .await;
    assert_ne!(rejoined, our_node);
    assert_eq!(
        participant_ids(latch.participants().await.unwrap()),
        vec!["curator".to_owned(), "ours".to_owned()]
    );
    assert!(!latch.has_leadership(), "ours leads behind Curator's");
    assert!(!peer.has_said("NOTLEADER"), "Curator's stepped down");

    let leads = spawn_on(&Arc::new(latch), |l| async move {
        l.await_leadership().await?;
        Ok(l)
    });
    let latch = hand_back(peer, leads).await;
    latch.close().await;
    side.clean(path).await;
}
