//! zk-recipes' InterProcessMutex beside real Curator (InterProcessMutex, Java 17 and Debian's
//! libcurator-recipes-java) and real kazoo (Lock with `extra_lock_patterns=["-lock-"]`,
//! Python) on one lock path of a real server: each excludes and is excluded by the other,
//! waiters are served in queue order across implementations, and a mixed stress run never
//! has two holders.
//!
//! The peers are conformance/java/CuratorLock.java (compiled here with javac) and
//! conformance/python/kazoo_lock.py. Nothing is skipped: when javac, the Curator jars, python3
//! or kazoo are missing, the tests fail and say what to install (scripts/test installs them).

mod recipes_support;

use std::{
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, OnceLock,
    },
    time::Duration,
};

use conformance::peers::{self, JavaProgram, KazooProgram};
use recipes_support::{peer::Peer, *};
use zk_recipes::InterProcessMutex;
use zk_session::{CreateOptions, ErrorCode, Version};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Curator,
    Kazoo,
}

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// CuratorLock compiled into a scratch directory, once per process.
fn curator() -> &'static JavaProgram {
    static PROGRAM: OnceLock<Result<JavaProgram, String>> = OnceLock::new();
    let program = PROGRAM.get_or_init(|| {
        JavaProgram::compile(
            &sources().join("java/CuratorLock.java"),
            &peers::process_dir(&std::env::temp_dir(), "zk-recipes-curator"),
            peers::CURATOR_JARS,
            "libcurator-recipes-java (scripts/test does)",
        )
    });
    match program {
        Ok(p) => p,
        Err(e) => panic!("Curator interop cannot run: {e}"),
    }
}

/// kazoo_lock.py, once kazoo imports.
fn kazoo() -> &'static KazooProgram {
    static PROGRAM: OnceLock<Result<KazooProgram, String>> = OnceLock::new();
    let program =
        PROGRAM.get_or_init(|| KazooProgram::prepare(sources().join("python/kazoo_lock.py")));
    match program {
        Ok(p) => p,
        Err(e) => panic!("kazoo interop cannot run: {e}"),
    }
}

/// Starts the Curator or kazoo peer with `args` (`hold CONNECT PATH MS` or `loop CONNECT
/// PATH FLAG N`) and waits until it is connected.
async fn start(kind: Kind, args: &[&str]) -> Peer {
    let mut cmd = match kind {
        Kind::Curator => curator().command(),
        Kind::Kazoo => kazoo().command(),
    };
    cmd.args(args);
    Peer::start(&format!("{kind:?}"), cmd).await
}

/// The peer holds; we cannot take the lock and queue behind it; it releases; we get it. Then
/// the other way round. Then the queue order across both: ours, the peer's, ours.
async fn mutual_exclusion(kind: Kind) {
    let connect = shared();
    let (c, admin) = (client(&connect).await, client(&connect).await);
    let path = unique(&format!("interop-{kind:?}"));
    let ours = Arc::new(InterProcessMutex::new(c.clone(), &path));

    // The peer holds first.
    let mut peer = start(kind, &["hold", &connect, &path, "120000"]).await;
    peer.expect("ACQUIRED").await;
    assert!(
        ours.try_acquire().await.unwrap().is_none(),
        "the peer holds it"
    );
    let waiter = spawn_acquire(&ours);
    until_children(&admin, &path, 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !waiter.is_finished(),
        "acquired while the peer holds the lock"
    );
    peer.send("release").await;
    peer.expect("RELEASED").await;
    let g = soon("ours after the peer", waiter).await.unwrap().unwrap();
    assert_eq!(children(&admin, &path).await, vec![name_of(g.path())]);
    peer.finish().await;

    // We hold first.
    let mut peer = start(kind, &["hold", &connect, &path, "120000"]).await;
    until_children(&admin, &path, 2).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !peer.has_said("ACQUIRED"),
        "the peer acquired while we hold"
    );
    g.release().await.unwrap();
    peer.expect("ACQUIRED").await;
    assert!(ours.try_acquire().await.unwrap().is_none());
    peer.send("release").await;
    peer.expect("RELEASED").await;
    peer.finish().await;

    // Queue order: ours holds, then the peer queues, then another of ours.
    let first = ours.acquire().await.unwrap();
    let mut peer = start(kind, &["hold", &connect, &path, "120000"]).await;
    until_children(&admin, &path, 2).await;
    let other = Arc::new(InterProcessMutex::new(admin.clone(), &path));
    let third = spawn_acquire(&other);
    until_children(&admin, &path, 3).await;
    first.release().await.unwrap();
    peer.expect("ACQUIRED").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!third.is_finished(), "jumped the queue past the peer");
    peer.send("release").await;
    peer.expect("RELEASED").await;
    let g = soon("the third after the peer", third)
        .await
        .unwrap()
        .unwrap();
    g.release().await.unwrap();
    peer.finish().await;
    assert!(children(&admin, &path).await.is_empty());
}

/// The peer and two of our handles compete for the lock many times; whoever holds it creates
/// an ephemeral flag node and deletes it before releasing, so a second holder would find the
/// flag there. Neither side ever does.
async fn no_overlap_under_contention(kind: Kind) {
    const ROUNDS: usize = 25;
    let connect = shared();
    let path = unique(&format!("interop-stress-{kind:?}"));
    let flag = format!("{path}-inside");
    let peer = start(kind, &["loop", &connect, &path, &flag, &ROUNDS.to_string()]).await;
    let overlaps = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let c = client(&connect).await;
        let (path, flag, overlaps) = (path.clone(), flag.clone(), overlaps.clone());
        tasks.push(tokio::spawn(async move {
            let m = InterProcessMutex::new(c.clone(), &path);
            for _ in 0..ROUNDS {
                let g = m.acquire().await.unwrap();
                match c.create(&flag, b"", CreateOptions::ephemeral()).await {
                    Ok(_) => {
                        tokio::time::sleep(Duration::from_millis(3)).await;
                        c.delete(&flag, Version::Any).await.unwrap();
                    }
                    Err(e) if e.code() == Some(ErrorCode::NodeExists) => {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(e) => panic!("{e}"),
                }
                g.release().await.unwrap();
            }
        }));
    }
    for t in tasks {
        soon("our tasks finish", t).await.unwrap();
    }
    let mut peer = peer;
    peer.expect("DONE").await;
    assert!(
        !peer.has_said("VIOLATION"),
        "the peer found another holder inside: {:?}",
        peer.stdout.snapshot()
    );
    assert_eq!(
        overlaps.load(Ordering::SeqCst),
        0,
        "we found the peer inside"
    );
    peer.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curator_mutual_exclusion_and_queue_order() {
    mutual_exclusion(Kind::Curator).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curator_no_overlap_under_contention() {
    no_overlap_under_contention(Kind::Curator).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kazoo_mutual_exclusion_and_queue_order() {
    mutual_exclusion(Kind::Kazoo).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kazoo_no_overlap_under_contention() {
    no_overlap_under_contention(Kind::Kazoo).await;
}
