//! zk-recipes' InterProcessSemaphoreV2, ReadWriteLock, SharedCount and DistributedAtomicLong beside real
//! Curator (Java 17 and Debian's libcurator-recipes-java 5.4) on the same paths of a real
//! server: mixed holders of the semaphore never exceed its leases, mixed holders of the
//! read/write lock never overlap a writer with anyone, and the counters' values are read and
//! written from both sides.
//!
//! The peer is conformance/java/CuratorCoordination.java, compiled here with javac. Every
//! holder, ours or Curator's, creates an ephemeral-sequential flag under a flag directory
//! while it holds and lists the directory: more flags than leases (semaphore), or a writer's
//! flag beside any other (rw lock), is an overlap, and fails the test. Nothing is skipped:
//! when javac or the Curator jars are missing, the tests fail and say what to install.

mod recipes_support;

use std::{
    sync::{
        atomic::AtomicBool,
        atomic::{AtomicUsize, Ordering},
        Arc, OnceLock,
    },
    time::Duration,
};

use conformance::peers::{self, JavaProgram};
use recipes_support::{
    children, client, compile_curator_peer, ephemeral_sequential, session_of, shared, soon, unique,
    until_some, watches_under,
};
use zk_recipes::{
    DistributedAtomicLong, DistributedBarrier, InterProcessMultiLock, InterProcessSemaphoreMutex,
    InterProcessSemaphoreV2, ReadWriteLock, RecipeError, SharedCount,
};
use zk_session::{Client, CreateOptions, RetryPolicy, Version};

/// How long one peer run may take on a loaded 2-core machine.
const PEER_LIMIT: Duration = Duration::from_secs(120);

/// CuratorCoordination compiled into a scratch directory, once per process.
fn curator() -> &'static JavaProgram {
    static PROGRAM: OnceLock<JavaProgram> = OnceLock::new();
    PROGRAM
        .get_or_init(|| compile_curator_peer("CuratorCoordination.java", "zk-recipes-coordination"))
}

/// Runs the peer with `args` to its end on a blocking thread; its stdout, checked for
/// ERROR and VIOLATION lines.
async fn run_peer(args: Vec<String>) -> String {
    let out = tokio::task::spawn_blocking(move || {
        let mut cmd = curator().command();
        cmd.args(&args);
        peers::run_child(&mut cmd, PEER_LIMIT)
    })
    .await
    .unwrap()
    .unwrap_or_else(|e| panic!("the Curator peer failed: {e}"));
    assert!(
        !out.lines()
            .any(|l| l.starts_with("ERROR") || l.starts_with("VIOLATION")),
        "the Curator peer saw an overlap or failed:\n{out}"
    );
    out
}

/// The line after `prefix ` in the peer's output.
fn said<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix} in {out:?}"))
        .trim()
}

/// Creates an ephemeral-sequential flag named `prefix…` under `flags` and lists them; the
/// flag's name and the others' names.
async fn raise_flag(c: &Client, flags: &str, prefix: &str) -> (String, Vec<String>) {
    let path = ephemeral_sequential(c, &format!("{flags}/{prefix}")).await;
    let own = path.rsplit('/').next().unwrap().to_owned();
    let others = children(c, flags)
        .await
        .into_iter()
        .filter(|n| *n != own)
        .collect();
    (path, others)
}

/// One of our holders' rounds: `k` numbers the holder, `i` the round; returns whether it
/// saw an overlap.
type Round = Arc<dyn Fn(Client, usize, usize) -> BoxFuture<bool> + Send + Sync>;
type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

/// Runs the Curator peer with `peer_args` and two of our holders doing `round` at the same
/// time: at least `rounds` each, and for as long as the peer runs, so that the two overlap.
/// Fails on any overlap either side saw.
async fn mixed_holders(peer_args: Vec<String>, rounds: usize, round: Round) {
    let connect = shared();
    let peer = tokio::spawn(run_peer(peer_args));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let mut ours = Vec::new();
    for k in 0..2 {
        let c = client(&connect).await;
        let (overlaps, done, round) = (overlaps.clone(), done.clone(), round.clone());
        ours.push(tokio::spawn(async move {
            let mut i = 0;
            while i < rounds || !done.load(Ordering::SeqCst) {
                if round(c.clone(), k, i).await {
                    overlaps.fetch_add(1, Ordering::SeqCst);
                }
                i += 1;
            }
        }));
    }
    let out = soon("the Curator peer finishes", peer).await.unwrap();
    done.store(true, Ordering::SeqCst);
    assert!(out.contains("DONE"), "{out}");
    for t in ours {
        soon("our holders finish", t).await.unwrap();
    }
    assert_eq!(overlaps.load(Ordering::SeqCst), 0, "we saw an overlap");
}

/// A unique path and its flag directory, created.
async fn paths(admin: &Client, tag: &str) -> (String, String) {
    let path = unique(tag);
    let flags = format!("{path}-flags");
    zk_recipes::create_parents(admin, &flags).await.unwrap();
    (path, flags)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_leases_are_shared_with_curator_and_never_exceeded() {
    const MAX: usize = 2;
    const ROUNDS: usize = 12;
    let admin = client(&shared()).await;
    let (path, flags) = paths(&admin, "interop-sem").await;
    let args = [
        "semaphore",
        &shared(),
        &path,
        &MAX.to_string(),
        &flags,
        &ROUNDS.to_string(),
    ];
    let (p, f) = (path.clone(), flags.clone());
    let round: Round = Arc::new(move |c: Client, _k, _i| {
        let (path, flags) = (p.clone(), f.clone());
        Box::pin(async move {
            let semaphore = InterProcessSemaphoreV2::new(c.clone(), &path, MAX as u32);
            let lease = semaphore.acquire().await.unwrap();
            let (flag, others) = raise_flag(&c, &flags, "f-").await;
            tokio::time::sleep(Duration::from_millis(3)).await;
            c.delete(&flag, Version::Any).await.unwrap();
            lease.release().await.unwrap();
            others.len() + 1 > MAX
        })
    });
    mixed_holders(args.map(String::from).to_vec(), ROUNDS, round).await;
    assert!(children(&admin, &format!("{path}/leases")).await.is_empty());
    assert!(children(&admin, &format!("{path}/locks")).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rw_lock_is_shared_with_curator_and_writers_exclude_everyone() {
    const ROUNDS: usize = 15;
    let admin = client(&shared()).await;
    let (path, flags) = paths(&admin, "interop-rw").await;
    let args = ["rwlock", &shared(), &path, &flags, &ROUNDS.to_string()];
    let (p, f) = (path.clone(), flags.clone());
    let round: Round = Arc::new(move |c: Client, k, i| {
        let (path, flags) = (p.clone(), f.clone());
        Box::pin(async move {
            let lock = ReadWriteLock::new(c.clone(), &path);
            let writer = (i + k) % 3 == 0;
            let side = if writer {
                lock.write_lock()
            } else {
                lock.read_lock()
            };
            let guard = side.acquire().await.unwrap();
            let (flag, others) = raise_flag(&c, &flags, if writer { "w-" } else { "r-" }).await;
            tokio::time::sleep(Duration::from_millis(3)).await;
            c.delete(&flag, Version::Any).await.unwrap();
            guard.release().await.unwrap();
            others.iter().any(|o| writer || o.starts_with("w-"))
        })
    });
    mixed_holders(args.map(String::from).to_vec(), ROUNDS, round).await;
    assert!(children(&admin, &path).await.is_empty());
}

/// One of our exclusive holders' rounds under `flags`: another flag beside ours is an
/// overlap.
async fn exclusive_round(c: &Client, flags: &str) -> bool {
    let (flag, others) = raise_flag(c, flags, "x-").await;
    tokio::time::sleep(Duration::from_millis(3)).await;
    c.delete(&flag, Version::Any).await.unwrap();
    !others.is_empty()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_mutex_is_shared_with_curator_and_never_held_twice() {
    const ROUNDS: usize = 12;
    let admin = client(&shared()).await;
    let (path, flags) = paths(&admin, "interop-semmutex").await;
    let args = ["semmutex", &shared(), &path, &flags, &ROUNDS.to_string()];
    let (p, f) = (path.clone(), flags.clone());
    let round: Round = Arc::new(move |c: Client, _k, _i| {
        let (path, flags) = (p.clone(), f.clone());
        Box::pin(async move {
            let mutex = InterProcessSemaphoreMutex::new(c.clone(), &path);
            let guard = mutex.acquire().await.unwrap();
            let overlap = exclusive_round(&c, &flags).await;
            guard.release().await.unwrap();
            overlap
        })
    });
    mixed_holders(args.map(String::from).to_vec(), ROUNDS, round).await;
    assert!(children(&admin, &format!("{path}/leases")).await.is_empty());
    assert!(children(&admin, &format!("{path}/locks")).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_lock_is_shared_with_curator_and_never_held_twice() {
    const ROUNDS: usize = 12;
    let admin = client(&shared()).await;
    let (path, flags) = paths(&admin, "interop-multi").await;
    let locks = [format!("{path}/a"), format!("{path}/b")];
    let args = [
        "multilock",
        &shared(),
        &locks.join(","),
        &flags,
        &ROUNDS.to_string(),
    ];
    let f = flags.clone();
    let ls = locks.clone();
    let round: Round = Arc::new(move |c: Client, _k, _i| {
        let (locks, flags) = (ls.clone(), f.clone());
        Box::pin(async move {
            let both = InterProcessMultiLock::new(c.clone(), locks);
            let guard = both.acquire().await.unwrap();
            let overlap = exclusive_round(&c, &flags).await;
            guard.release().await.unwrap();
            overlap
        })
    });
    mixed_holders(args.map(String::from).to_vec(), ROUNDS, round).await;
    for l in &locks {
        assert!(children(&admin, l).await.is_empty());
    }
}

/// Curator waits on our barrier and passes only once we remove it; we wait on Curator's
/// and pass only once Curator removes it. The remover creates `opened` before removing the
/// barrier, so a waiter through before that is caught (by the peer, or here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributed_barrier_is_shared_with_curator() {
    let connect = shared();
    let (c, admin) = (client(&connect).await, client(&connect).await);
    let path = format!("{}/gate", unique("interop-dbarrier"));
    let opened = format!("{path}-opened");
    let ours = DistributedBarrier::new(c.clone(), &path);
    let run = |args: &[&str]| run_peer(args.iter().map(|a| a.to_string()).collect());

    // Ours set, Curator waits.
    ours.set().await.unwrap();
    let peer = tokio::spawn(run(&["dbarrier-wait", &connect, &path, &opened]));
    let server = conformance::shared_standalone();
    let me = session_of(&c);
    until_some("Curator watches our barrier", || async {
        watches_under(server, &path)
            .iter()
            .any(|(s, p)| *s != me && *p == path)
            .then_some(())
    })
    .await;
    assert!(!peer.is_finished(), "Curator went through a set barrier");
    admin
        .create(&opened, b"", CreateOptions::persistent())
        .await
        .unwrap();
    ours.remove().await.unwrap();
    let out = soon("Curator goes through", peer).await.unwrap();
    assert!(out.contains("PASSED"), "{out}");

    // Curator's set, ours waits.
    admin.delete(&opened, Version::Any).await.unwrap();
    run(&["dbarrier-set", &connect, &path]).await;
    assert!(ours.is_set().await.unwrap());
    let waiting = {
        let (ours, admin, opened) = (ours.clone(), admin.clone(), opened.clone());
        tokio::spawn(async move {
            ours.wait().await.unwrap();
            admin.exists(&opened).await.unwrap().is_some()
        })
    };
    assert!(matches!(
        ours.wait_timeout(Duration::from_millis(300)).await,
        Err(RecipeError::Timeout)
    ));
    assert!(!waiting.is_finished(), "through Curator's set barrier");
    admin
        .create(&opened, b"", CreateOptions::persistent())
        .await
        .unwrap();
    run(&["dbarrier-remove", &connect, &path]).await;
    assert!(
        soon("ours goes through", waiting).await.unwrap(),
        "through before Curator removed the barrier"
    );
    assert!(!ours.is_set().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_count_values_cross_between_curator_and_us() {
    let connect = shared();
    let path = unique("interop-count");
    let c = client(&connect).await;
    let ours = SharedCount::builder(c, &path)
        .seed(17)
        .start()
        .await
        .unwrap();
    let out = run_peer(["count-get", &connect, &path].map(String::from).to_vec()).await;
    assert_eq!(said(&out, "VALUE"), "17");
    let out = run_peer(
        ["count-tryset", &connect, &path, "-123456"]
            .map(String::from)
            .to_vec(),
    )
    .await;
    assert!(
        out.lines().any(|l| l == "OK"),
        "Curator's set failed: {out}"
    );
    let mut changes = ours.changes();
    soon(
        "we see Curator's value",
        changes.wait_for(|c| c.value() == -123456),
    )
    .await
    .unwrap();
    assert!(ours.try_set(ours.versioned(), i32::MAX).await.unwrap());
    let out = run_peer(["count-get", &connect, &path].map(String::from).to_vec()).await;
    assert_eq!(said(&out, "VALUE"), i32::MAX.to_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_long_increments_from_both_sides_add_up() {
    const ROUNDS: usize = 40;
    let connect = shared();
    let path = unique("interop-long");
    let c = client(&connect).await;
    let ours = DistributedAtomicLong::builder(c, &path)
        .retry(RetryPolicy::exponential_backoff(
            Duration::from_millis(2),
            1000,
        ))
        .build();
    ours.force_set(1 << 40).await.unwrap();
    let out = run_peer(["long-get", &connect, &path].map(String::from).to_vec()).await;
    assert_eq!(said(&out, "VALUE"), (1i64 << 40).to_string());
    // Both sides add at once; every success lands exactly once.
    let peer = tokio::spawn(run_peer(
        ["long-add", &connect, &path, "3", &ROUNDS.to_string()]
            .map(String::from)
            .to_vec(),
    ));
    let mut ok = 0;
    for _ in 0..ROUNDS {
        if ours.add(5).await.unwrap().succeeded {
            ok += 1;
        }
    }
    let out = soon("the Curator peer finishes", peer).await.unwrap();
    let theirs: i64 = said(&out, "DONE").parse().unwrap();
    assert_eq!((ok, theirs), (ROUNDS as i64, ROUNDS as i64));
    let want = (1i64 << 40) + 5 * ok + 3 * theirs;
    assert_eq!(ours.get().await.unwrap(), want);
    let out = run_peer(["long-get", &connect, &path].map(String::from).to_vec()).await;
    assert_eq!(said(&out, "VALUE"), want.to_string());
}
