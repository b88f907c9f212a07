//! Our LeaderSelector and LeaderLatch beside Apache Curator's (5.4, Debian's jars in
//! /usr/share/java) on the same paths of a real server: they never lead at once, and
//! leadership passes between them.
//!
//! The Curator side is conformance/java/ElectionPeer.java, compiled with javac into cargo's
//! target temporary directory on first use and driven over stdin/stdout. Without Java 17 or the
//! jars these tests fail, saying what is missing.

use std::{
    future::Future,
    io::Write,
    path::Path,
    process::{Child, ChildStdin, Stdio},
    sync::{
        atomic::{AtomicBool, AtomicU32, Ordering},
        Arc, Mutex as StdMutex, OnceLock,
    },
    time::Duration,
};

use conformance::{
    peers::{self, JavaProgram, Lines},
    shared_standalone,
};
use zk_recipes::{LeaderLatch, LeaderSelector, Leadership, Participant, RecipeError};
use zk_session::{Client, CreateOptions, Error, ErrorCode, Version};

/// Generous: a JVM with Curator starts in seconds, but this machine may be busy.
const SOON: Duration = Duration::from_secs(60);

/// ElectionPeer, compiled once per test process; panics saying what is missing.
fn election_peer() -> &'static JavaProgram {
    static PROGRAM: OnceLock<Result<JavaProgram, String>> = OnceLock::new();
    let program = PROGRAM.get_or_init(|| {
        let jars: Vec<&str> = peers::CURATOR_JARS
            .iter()
            .chain(peers::NETTY_JARS)
            .copied()
            .collect();
        JavaProgram::compile(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("java/ElectionPeer.java"),
            // Under target/ (cargo clean removes it).
            &peers::process_dir(Path::new(env!("CARGO_TARGET_TMPDIR")), "election-peer"),
            &jars,
            "libcurator-recipes-java libzookeeper-java libslf4j-java libnetty-java",
        )
    });
    match program {
        Ok(p) => p,
        Err(e) => panic!("Curator interop needs a Java 17 JDK and Debian's jars: {e}"),
    }
}

/// One ElectionPeer process. Its output lines are collected as they come.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    lines: Lines,
}

impl Peer {
    fn spawn(args: &[&str]) -> Peer {
        let mut child = election_peer()
            .command_with(&["-Xmx128m"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run java ({e}): Curator interop needs Java 17"));
        let stdin = child.stdin.take().unwrap();
        let lines = Lines::follow(child.stdout.take().unwrap());
        Peer {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn count(&self, line: &str) -> usize {
        self.lines.snapshot().iter().filter(|l| *l == line).count()
    }

    /// Waits until `line` has been printed `n` times in all.
    async fn wait_count(&self, line: &str, n: usize) {
        let printed = self
            .lines
            .wait_for(SOON, |lines, _| {
                (lines.iter().filter(|l| *l == line).count() >= n).then_some(())
            })
            .await;
        assert!(
            printed.is_some(),
            "the Curator peer did not print {line:?} {n} times; it printed {:?}",
            self.lines.snapshot()
        );
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn unique(tag: &str) -> String {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    format!(
        "/election-interop-{tag}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

async fn client(connect: &str) -> Client {
    Client::builder(connect)
        .session_timeout(Duration::from_secs(20))
        .connect()
        .await
        .expect("connect")
}

async fn soon<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(SOON, f)
        .await
        .unwrap_or_else(|_| panic!("timed out after {SOON:?}: {what}"))
}

/// The ids in a recipe's own view of its line (`participants()`), in line order.
fn ids_in_line(participants: Result<Vec<Participant>, RecipeError>) -> Vec<String> {
    participants.unwrap().into_iter().map(|p| p.id).collect()
}

async fn participant_ids(c: &Client, path: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut children = match c.get_children(path).await {
        Ok(ch) => ch,
        Err(e) if e.code() == Some(ErrorCode::NoNode) => return ids,
        Err(e) => panic!("{e}"),
    };
    children.sort_by_key(|n| n[n.len() - 10..].to_owned());
    for n in children {
        if let Ok((d, _)) = c.get_data(&format!("{path}/{n}")).await {
            ids.push(String::from_utf8_lossy(&d).into_owned());
        }
    }
    ids
}

/// Two Curator LeaderSelectors and two of ours with auto-requeue on one path. Every leader,
/// Curator's or ours, holds an ephemeral marker node while it leads; finding it already there
/// would mean two leaders at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selector_beside_curator_leader_selector() {
    let zk = shared_standalone();
    let cs = zk.connect_string();
    let admin = client(&cs).await;
    let base = unique("selector");
    admin
        .create(&base, b"", CreateOptions::persistent())
        .await
        .unwrap();
    let path = format!("{base}/leader");
    let marker = format!("{base}/active");

    let mut peers: Vec<Peer> = ["curator-1", "curator-2"]
        .iter()
        .map(|id| Peer::spawn(&["selector", &cs, &path, id, &base, "150"]))
        .collect();
    for p in &peers {
        p.wait_count("READY", 1).await;
    }

    let violation = Arc::new(AtomicBool::new(false));
    let stopping = Arc::new(AtomicBool::new(false));
    let terms = Arc::new(StdMutex::new(Vec::<String>::new()));
    let mut ours = Vec::new();
    let mut our_clients = Vec::new();
    for id in ["rust-1", "rust-2"] {
        let c = client(&cs).await;
        our_clients.push(c.clone());
        let (violation, terms, marker) = (violation.clone(), terms.clone(), marker.clone());
        let (tc, stopping) = (c.clone(), stopping.clone());
        let s = LeaderSelector::builder(c, path.clone())
            .task(move |lead: Leadership| {
                let (violation, terms, marker) = (violation.clone(), terms.clone(), marker.clone());
                let (c, stopping) = (tc.clone(), stopping.clone());
                async move {
                    if stopping.load(Ordering::SeqCst) {
                        // Winding down: lead without the marker until closed.
                        std::future::pending::<()>().await;
                    }
                    match c
                        .create(&marker, lead.id().as_bytes(), CreateOptions::ephemeral())
                        .await
                    {
                        Err(Error::Code(ErrorCode::NodeExists)) => {
                            violation.store(true, Ordering::SeqCst)
                        }
                        r => {
                            r.unwrap();
                        }
                    }
                    terms.lock().unwrap().push(lead.id().to_owned());
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    c.delete(&marker, Version::Any).await.unwrap();
                }
            })
            .id(id)
            .auto_requeue(true)
            .start()
            .await
            .expect("the selector starts");
        ours.push(s);
    }

    // Leadership goes round: every participant leads several times.
    for p in &peers {
        p.wait_count("END", 3).await;
    }
    soon("our selectors lead", async {
        loop {
            let n = {
                let t = terms.lock().unwrap();
                ["rust-1", "rust-2"]
                    .iter()
                    .map(|id| t.iter().filter(|x| x == id).count())
                    .min()
                    .unwrap()
            };
            if n >= 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    // Curator's ids are visible to ours, and the other way round (same node data format).
    soon("all four in line", async {
        loop {
            let mut ids = ids_in_line(ours[0].participants().await);
            ids.sort();
            if ids == ["curator-1", "curator-2", "rust-1", "rust-2"] {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;

    // Wind down without cutting a marked term short: the term under way ends as usual, and
    // whoever leads next holds on without the marker until closed.
    stopping.store(true, Ordering::SeqCst);
    for p in &mut peers {
        p.send("stop");
    }
    for p in &peers {
        p.wait_count("STOPPING", 1).await;
    }
    soon("the last marked term ends", async {
        while admin.exists(&marker).await.unwrap().is_some() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    for s in ours {
        soon("close", s.close()).await.unwrap();
    }
    // A term that began just as the wind-down did may have left its ephemeral marker.
    for c in &our_clients {
        c.close().await.unwrap();
    }
    for p in &mut peers {
        p.send("quit");
    }
    for p in &peers {
        p.wait_count("CLOSED", 1).await;
    }
    for p in &peers {
        assert_eq!(
            p.count("VIOLATION"),
            0,
            "a Curator leader found another leader"
        );
        assert_eq!(p.count("START"), p.count("END"));
    }
    assert!(
        !violation.load(Ordering::SeqCst),
        "one of ours found another leader"
    );
    assert!(participant_ids(&admin, &path).await.is_empty());
    assert_eq!(admin.exists(&marker).await.unwrap(), None);
}

/// Our LeaderLatch and Curator's LeaderLatch on one path hand leadership to each other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latch_beside_curator_leader_latch() {
    let zk = shared_standalone();
    let cs = zk.connect_string();
    let (ca, cb) = (client(&cs).await, client(&cs).await);
    let path = unique("latch");

    let a = soon(
        "a starts",
        LeaderLatch::builder(ca.clone(), &path).id("rust-a").start(),
    )
    .await
    .unwrap();
    soon("a leads", leads(&a)).await.unwrap();
    let mut j = Peer::spawn(&["latch", &cs, &path, "curator-j"]);
    j.wait_count("READY", 1).await;
    j.send("status");
    j.wait_count("STATUS false", 1).await;
    // Each sees the other, by id, in the same order.
    let ids: Vec<String> = soon("both in line", async {
        loop {
            let ids = ids_in_line(a.participants().await);
            if ids.len() == 2 {
                return ids;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(ids, ["rust-a", "curator-j"]);

    // Ours leaves: Curator's takes over.
    a.close().await.unwrap();
    j.wait_count("LEADER", 1).await;

    // Ours queues behind Curator's, and does not lead while it does.
    let b = soon(
        "b starts",
        LeaderLatch::builder(cb.clone(), &path).id("rust-b").start(),
    )
    .await
    .unwrap();
    let r = tokio::time::timeout(Duration::from_millis(500), leads(&b))
        .await
        .unwrap_or(Err(RecipeError::Timeout));
    assert!(matches!(r, Err(RecipeError::Timeout)), "{r:?}");
    assert_eq!(b.leader().await.unwrap().unwrap().id, "curator-j");
    j.send("status");
    j.wait_count("STATUS true", 1).await;

    // Curator's leaves: ours takes over.
    j.send("close");
    j.wait_count("CLOSED", 1).await;
    soon("b leads", leads(&b)).await.unwrap();
    assert_eq!(b.leader().await.unwrap().unwrap().id, "rust-b");
    b.close().await.unwrap();
    assert!(participant_ids(&ca, &path).await.is_empty());
}

/// Waits until `latch` leads (`Ok`), or it ends first (why).
async fn leads(latch: &LeaderLatch) -> zk_recipes::Result<()> {
    let mut status = latch.status();
    match status.wait_for(|s| s.is_leader() || s.has_ended()).await? {
        zk_recipes::LatchStatus::Ended(e) => Err(e),
        zk_recipes::LatchStatus::Closed => Err(RecipeError::Closed),
        _ => Ok(()),
    }
}
