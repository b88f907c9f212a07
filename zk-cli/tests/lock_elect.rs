//! `zk lock` and `zk elect` against a real ZooKeeper 3.8 (the test kit's shared
//! server): running commands, exit codes, lost locks, fencing variables, `create -e` and
//! `watch` until interrupted.

mod support;

use std::{
    path::{Path, PathBuf},
    process::{ExitStatus, Output},
    time::Duration,
};

use support::{admin, assert_code, server, stderr, stdout, unique, zk, SOON, ZK};
use tokio::{
    process::{Child, Command},
    task::JoinHandle,
};
use zk_recipes::InterProcessMutex;
use zk_session::Version;

/// A scratch directory for the commands' side effects.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(unique(tag).trim_start_matches('/'));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// CMD learns the lock path, its node and the fencing token (the node's czxid, which grows
/// with each holder), in the environment.
#[tokio::test]
async fn lock_and_elect_give_cmd_the_fencing_variables() {
    let path = unique("lock-env");
    let show = "echo \"$ZK_LOCK_PATH\"; echo \"$ZK_LOCK_NODE\"; echo \"$ZK_FENCING_TOKEN\"";
    let mut tokens = Vec::new();
    for verb in ["lock", "lock", "elect"] {
        let o = zk(&[verb, &path, "--", "sh", "-c", show]).await;
        assert_code(&o, 0);
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out:?}");
        assert_eq!(lines[0], path);
        let marker = if verb == "lock" { "-lock-" } else { "-latch-" };
        assert!(
            lines[1].starts_with(&format!("{path}/_c_")) && lines[1].contains(marker),
            "{out:?}"
        );
        tokens.push(lines[2].parse::<u64>().expect("a number"));
    }
    assert!(
        tokens[0] > 0 && tokens[0] < tokens[1] && tokens[1] < tokens[2],
        "{tokens:?}"
    );
    // The token is the node's czxid: a node created after the last run has a larger one.
    let c = admin().await;
    let probe = format!("{path}-probe");
    let (_, stat) = c
        .create_with_stat(&probe, b"", zk_session::CreateOptions::persistent())
        .await
        .unwrap();
    assert!(stat.czxid as u64 > tokens[2]);
    c.delete(&probe, Version::Any).await.unwrap();
}

#[tokio::test]
async fn lock_runs_the_command_and_passes_its_status() {
    let path = unique("lock-status");
    assert_code(&zk(&["lock", &path, "--", "sh", "-c", "exit 7"]).await, 7);
    assert_code(&zk(&["lock", &path, "--", "true"]).await, 0);
    assert_code(&zk(&["lock", &path, "--", "/nonexistent/cmd"]).await, 127);
    assert_code(&zk(&["lock", &path]).await, 2);
    // Nothing left behind.
    let c = admin().await;
    let left = c.get_children(&path).await.unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

/// Each run claims a directory with mkdir (atomic: fails if it exists) and holds it a while:
/// if two commands ever overlapped, the second mkdir would fail and so would the run.
const CRITICAL: &str = "mkdir \"$0/held\" || exit 99; sleep 0.3; rmdir \"$0/held\"";

/// Two zk processes side by side, each running `zk ARGS(worker)` `runs` times, every run
/// exiting 0.
async fn two_workers(runs: usize, args: impl Fn(usize) -> Vec<String>) {
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let args = args(i);
            tokio::spawn(async move {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                for _ in 0..runs {
                    assert_code(&zk(&args).await, 0);
                }
            })
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
}

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_zk_lock_processes_never_overlap() {
    let path = unique("lock-overlap");
    let dir = scratch("lock-overlap");
    let d = dir.to_str().unwrap().to_owned();
    two_workers(3, |_| {
        owned(&["lock", &path, "--", "sh", "-c", CRITICAL, &d])
    })
    .await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_zk_elect_processes_never_overlap() {
    let path = unique("elect-overlap");
    let dir = scratch("elect-overlap");
    let d = dir.to_str().unwrap().to_owned();
    two_workers(2, |i| {
        let id = format!("worker-{i}");
        owned(&["elect", &path, "--id", &id, "--", "sh", "-c", CRITICAL, &d])
    })
    .await;
    assert_code(&zk(&["elect", &path, "--", "sh", "-c", "exit 3"]).await, 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn lock_timeout_gives_up_and_leaves_no_node() {
    let path = unique("lock-timeout");
    let c = admin().await;
    let held = InterProcessMutex::new(c.clone(), path.clone());
    let guard = held.acquire().await.unwrap();
    let o = zk(&["lock", &path, "--timeout", "0.5", "--", "true"]).await;
    assert_code(&o, 4);
    assert!(stderr(&o).contains("timed out"), "{}", stderr(&o));
    // Only our node is there.
    assert_eq!(c.get_children(&path).await.unwrap().len(), 1);
    guard.release().await.unwrap();
}

/// Runs `zk lock PATH -- sh -c SCRIPT ARG0` in the background (killed when dropped).
fn spawn_lock_script(path: &str, script: &str, arg0: &Path) -> JoinHandle<std::io::Result<Output>> {
    let child = Command::new(ZK)
        .args([
            "--server",
            &server(),
            "lock",
            path,
            "--",
            "sh",
            "-c",
            script,
        ])
        .arg(arg0)
        .kill_on_drop(true)
        .output();
    tokio::spawn(child)
}

/// The output of a background zk once it has exited, within [`SOON`].
async fn exited(run: JoinHandle<std::io::Result<Output>>) -> Output {
    tokio::time::timeout(SOON, run)
        .await
        .unwrap()
        .unwrap()
        .unwrap()
}

/// Polls `probe` every 50 ms until it gives a value, within [`SOON`].
async fn poll_soon<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    tokio::time::timeout(SOON, async {
        loop {
            if let Some(v) = probe().await {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect(what)
}

#[tokio::test]
async fn lost_lock_terminates_the_command_and_exits_5() {
    let path = unique("lock-lost");
    let dir = scratch("lock-lost");
    let mark = dir.join("got-term");
    let script =
        "trap 'echo TERM > \"$0\"; exit 0' TERM; : > \"$0.ready\"; while :; do sleep 0.1; done";
    let run = spawn_lock_script(&path, script, &mark);
    // Once the command runs under the lock (its trap set), an administrator deletes the lock
    // node: sooner, the SIGTERM could come before the trap, or the acquire itself fail.
    let ready = dir.join("got-term.ready");
    poll_soon("the command runs under the lock", || async {
        ready.exists().then_some(())
    })
    .await;
    let c = admin().await;
    let node = poll_soon("zk takes the lock", || async {
        let ch = c.get_children(&path).await.ok()?;
        ch.first().map(|n| format!("{path}/{n}"))
    })
    .await;
    c.delete(&node, Version::Any).await.unwrap();
    let o = exited(run).await;
    assert_code(&o, 5);
    assert!(stderr(&o).contains("lost the lock"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&mark).unwrap().trim(), "TERM");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What CMD started stops with it: a shell script's background command gets the SIGTERM too
/// (CMD runs in a process group of its own, and the group is signalled).
#[tokio::test]
async fn lost_lock_terminates_what_the_command_started() {
    let path = unique("lock-lost-tree");
    let dir = scratch("lock-lost-tree");
    let pid_file = dir.join("grandchild");
    // `sleep` in the background, its pid written out; the shell waits for it.
    let script = "sleep 300 & echo $! > \"$0\"; wait";
    let run = spawn_lock_script(&path, script, &pid_file);
    let c = admin().await;
    let grandchild: u32 = poll_soon("the script starts its background command", || async {
        std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    })
    .await;
    let proc_dir = PathBuf::from(format!("/proc/{grandchild}"));
    assert!(proc_dir.exists());
    let node = c.get_children(&path).await.unwrap().remove(0);
    c.delete(&format!("{path}/{node}"), Version::Any)
        .await
        .unwrap();
    let o = exited(run).await;
    assert_code(&o, 5);
    // Orphaned, it is reaped by init (or a subreaper) once it has died; give that a moment.
    let gone = tokio::time::timeout(SOON, async {
        while std::fs::read_to_string(proc_dir.join("stat")).is_ok_and(|st| !st.contains(") Z ")) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(
        gone.is_ok(),
        "the background sleep {grandchild} outlived the lost lock"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Sends SIGINT to a running zk and waits (within [`SOON`]) for it to exit.
async fn interrupt(child: &mut Child) -> ExitStatus {
    let pid = child.id().unwrap();
    let s = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .await
        .unwrap();
    assert!(s.success());
    tokio::time::timeout(SOON, child.wait())
        .await
        .unwrap()
        .unwrap()
}

/// Starts `zk --server SERVER ARGS...` with its standard output piped to us.
fn spawn_piped(args: &[&str]) -> Child {
    Command::new(ZK)
        .args(["--server", &server()])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn watch_prints_changes_and_create_e_holds_its_node_until_interrupted() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let base = unique("watch");
    let c = admin().await;
    assert_code(&zk(&["create", &base]).await, 0);
    let mut watch = spawn_piped(&["watch", &base]);
    let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    // The watch is set once zk is connected; keep changing the node until it reports.
    let first = tokio::time::timeout(SOON, async {
        let mut n = 0u32;
        loop {
            n += 1;
            c.set_data(&base, n.to_string().as_bytes(), Version::Any)
                .await
                .unwrap();
            if let Ok(line) =
                tokio::time::timeout(Duration::from_millis(500), lines.next_line()).await
            {
                return line.unwrap().expect("a line");
            }
        }
    })
    .await
    .expect("zk watch reports a change");
    assert_eq!(first, format!("NodeDataChanged {base}"));

    // An ephemeral node lives while `zk create -e` runs, and goes when it is interrupted.
    let eph = format!("{base}/eph");
    let mut holder = spawn_piped(&["create", "-e", &eph]);
    let mut out = BufReader::new(holder.stdout.take().unwrap()).lines();
    let printed = tokio::time::timeout(SOON, out.next_line()).await.unwrap();
    assert_eq!(printed.unwrap().as_deref(), Some(eph.as_str()));
    assert!(c.exists(&eph).await.unwrap().is_some());
    let status = interrupt(&mut holder).await;
    assert_eq!(status.code(), Some(0));
    assert_eq!(
        c.exists(&eph).await.unwrap(),
        None,
        "closed with its session"
    );

    let status = interrupt(&mut watch).await;
    assert_eq!(status.code(), Some(0));
    c.delete(&base, Version::Any).await.unwrap();
}
