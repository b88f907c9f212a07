//! zk-recipes' Mutex beside real Curator (InterProcessMutex, Java 17 and Debian's
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
    process::Stdio,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex as StdMutex, OnceLock,
    },
    time::Duration,
};

use recipes_support::*;
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
    process::{Child, ChildStdin, Command},
    sync::mpsc,
};
use zk_recipes::Mutex;
use zk_session::{CreateOptions, ErrorCode, Version};

/// The jars Curator's InterProcessMutex needs at run time.
const CURATOR_JARS: &[&str] = &[
    "curator-framework.jar",
    "curator-client.jar",
    "curator-recipes.jar",
    "zookeeper.jar",
    "zookeeper-jute.jar",
    "guava.jar",
    "slf4j-api.jar",
    "slf4j-nop.jar",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Curator,
    Kazoo,
}

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The classpath with CuratorLock compiled into a scratch directory, once per process.
fn curator_classpath() -> &'static str {
    static CP: OnceLock<Result<String, String>> = OnceLock::new();
    let cp = CP.get_or_init(|| {
        let install = conformance::ensure_installed().map_err(|e| e.to_string())?;
        let jar_dir = Path::new(conformance::install::JAR_DIR);
        let missing: Vec<&str> = CURATOR_JARS
            .iter()
            .copied()
            .filter(|j| !jar_dir.join(j).exists())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "missing {missing:?} in {}: apt-get install libcurator-recipes-java \
                 (scripts/test does)",
                jar_dir.display()
            ));
        }
        let out = std::env::temp_dir().join(format!("zk-recipes-curator-{}", std::process::id()));
        std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
        let mut cp = vec![out.display().to_string()];
        cp.extend(
            CURATOR_JARS
                .iter()
                .map(|j| jar_dir.join(j).display().to_string()),
        );
        let cp = cp.join(":");
        let javac = install
            .java
            .canonicalize()
            .ok()
            .and_then(|j| Some(j.parent()?.join("javac")))
            .filter(|j| j.exists())
            .unwrap_or_else(|| PathBuf::from("javac"));
        let compiled = std::process::Command::new(&javac)
            .arg("-nowarn")
            .arg("-d")
            .arg(&out)
            .arg("-cp")
            .arg(&cp)
            .arg(sources().join("java/CuratorLock.java"))
            .output()
            .map_err(|e| format!("cannot run {} (install a JDK): {e}", javac.display()))?;
        if !compiled.status.success() {
            return Err(format!(
                "javac failed:\n{}",
                String::from_utf8_lossy(&compiled.stderr)
            ));
        }
        Ok(cp)
    });
    match cp {
        Ok(cp) => cp,
        Err(e) => panic!("Curator interop cannot run: {e}"),
    }
}

/// A Curator or kazoo process holding or looping on a lock, followed line by line.
struct Peer {
    kind: Kind,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<String>,
    seen: Vec<String>,
    stderr: Arc<StdMutex<String>>,
}

impl Peer {
    /// Starts the peer with `args` (`hold CONNECT PATH MS` or `loop CONNECT PATH FLAG N`) and
    /// waits until it is connected.
    async fn start(kind: Kind, args: &[&str]) -> Peer {
        let mut cmd = match kind {
            Kind::Curator => {
                let java = &conformance::ensure_installed().expect("java").java;
                let mut c = Command::new(java);
                c.arg("-cp").arg(curator_classpath()).arg("CuratorLock");
                c
            }
            Kind::Kazoo => {
                let mut c = Command::new("python3");
                c.arg(sources().join("python/kazoo_lock.py"));
                c
            }
        };
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the {kind:?} peer (install it): {e}"));
        let (tx, lines) = mpsc::unbounded_channel();
        let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
        tokio::spawn(async move {
            while let Ok(Some(line)) = out.next_line().await {
                let _ = tx.send(line);
            }
        });
        let stderr = Arc::new(StdMutex::new(String::new()));
        let mut err = child.stderr.take().unwrap();
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut buf = String::new();
            let _ = err.read_to_string(&mut buf).await;
            sink.lock().unwrap().push_str(&buf);
        });
        let stdin = child.stdin.take();
        let mut peer = Peer {
            kind,
            child,
            stdin,
            lines,
            seen: Vec::new(),
            stderr,
        };
        peer.expect("READY").await;
        peer
    }

    /// Waits for a line starting with `want`; fails with the peer's output if it ends first
    /// or says ERROR.
    async fn expect(&mut self, want: &str) {
        let wait = async {
            loop {
                match self.lines.recv().await {
                    Some(line) => {
                        self.seen.push(line.clone());
                        if line.starts_with("ERROR") {
                            return Err(line);
                        }
                        if line.starts_with(want) {
                            return Ok(());
                        }
                    }
                    None => return Err("the process ended".to_owned()),
                }
            }
        };
        match tokio::time::timeout(SOON, wait).await {
            Ok(Ok(())) => {}
            Ok(Err(why)) => self.fail(&format!("waiting for {want}: {why}")).await,
            Err(_) => self.fail(&format!("no {want} within {SOON:?}")).await,
        }
    }

    /// Whether the peer has said `what` by now (without waiting).
    fn has_said(&mut self, what: &str) -> bool {
        while let Ok(line) = self.lines.try_recv() {
            self.seen.push(line);
        }
        self.seen.iter().any(|l| l.starts_with(what))
    }

    async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    async fn finish(mut self) {
        self.stdin.take();
        match tokio::time::timeout(SOON, self.child.wait()).await {
            Ok(Ok(s)) if s.success() => {}
            other => self.fail(&format!("exit: {other:?}")).await,
        }
    }

    async fn fail(&mut self, why: &str) -> ! {
        let _ = self.child.start_kill();
        tokio::time::sleep(Duration::from_millis(200)).await;
        panic!(
            "{:?} peer: {why}\nstdout: {:?}\nstderr: {}",
            self.kind,
            self.seen,
            self.stderr.lock().unwrap()
        );
    }
}

/// The peer holds; we cannot take the lock and queue behind it; it releases; we get it. Then
/// the other way round. Then the queue order across both: ours, the peer's, ours.
async fn mutual_exclusion(kind: Kind) {
    let connect = shared();
    let (c, admin) = (client(&connect).await, client(&connect).await);
    let path = unique(&format!("interop-{kind:?}"));
    let ours = Arc::new(Mutex::new(c.clone(), &path));

    // The peer holds first.
    let mut peer = Peer::start(kind, &["hold", &connect, &path, "120000"]).await;
    peer.expect("ACQUIRED").await;
    assert!(
        ours.try_acquire().await.unwrap().is_none(),
        "the peer holds it"
    );
    let waiter = tokio::spawn({
        let ours = ours.clone();
        async move { ours.acquire().await }
    });
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
    let mut peer = Peer::start(kind, &["hold", &connect, &path, "120000"]).await;
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
    let mut peer = Peer::start(kind, &["hold", &connect, &path, "120000"]).await;
    until_children(&admin, &path, 2).await;
    let other = Arc::new(Mutex::new(admin.clone(), &path));
    let third = tokio::spawn({
        let other = other.clone();
        async move { other.acquire().await }
    });
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
    let peer = Peer::start(kind, &["loop", &connect, &path, &flag, &ROUNDS.to_string()]).await;
    let overlaps = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let c = client(&connect).await;
        let (path, flag, overlaps) = (path.clone(), flag.clone(), overlaps.clone());
        tasks.push(tokio::spawn(async move {
            let m = Mutex::new(c.clone(), &path);
            for _ in 0..ROUNDS {
                let g = m.acquire().await.unwrap();
                match c.create(&flag, b"", &CreateOptions::ephemeral()).await {
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
        peer.seen
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
