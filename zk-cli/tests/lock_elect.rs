//! `zk lock` and `zk elect` against a real ZooKeeper 3.8 (the conformance harness's shared
//! server): running commands, exit codes, lost locks, fencing variables, `create -e` and
//! `watch` until interrupted.

mod support;

use std::{path::PathBuf, time::Duration};

use support::{admin, assert_code, server, stderr, stdout, unique, zk, SOON, ZK};
use tokio::process::Command;
use zk_recipes::Mutex;
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
        .create_with_stat(&probe, b"", &zk_session::CreateOptions::persistent())
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_zk_lock_processes_never_overlap() {
    let path = unique("lock-overlap");
    let dir = scratch("lock-overlap");
    let d = dir.to_str().unwrap().to_owned();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (path, d) = (path.clone(), d.clone());
            tokio::spawn(async move {
                for _ in 0..3 {
                    let o = zk(&["lock", &path, "--", "sh", "-c", CRITICAL, &d]).await;
                    assert_code(&o, 0);
                }
            })
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_zk_elect_processes_never_overlap() {
    let path = unique("elect-overlap");
    let dir = scratch("elect-overlap");
    let d = dir.to_str().unwrap().to_owned();
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let (path, d) = (path.clone(), d.clone());
            tokio::spawn(async move {
                let id = format!("worker-{i}");
                for _ in 0..2 {
                    let o =
                        zk(&["elect", &path, "--id", &id, "--", "sh", "-c", CRITICAL, &d]).await;
                    assert_code(&o, 0);
                }
            })
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    assert_code(&zk(&["elect", &path, "--", "sh", "-c", "exit 3"]).await, 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn lock_timeout_gives_up_and_leaves_no_node() {
    let path = unique("lock-timeout");
    let c = admin().await;
    let held = Mutex::new(c.clone(), path.clone());
    let guard = held.acquire().await.unwrap();
    let o = zk(&["lock", &path, "--timeout", "0.5", "--", "true"]).await;
    assert_code(&o, 4);
    assert!(stderr(&o).contains("timed out"), "{}", stderr(&o));
    // Only our node is there.
    assert_eq!(c.get_children(&path).await.unwrap().len(), 1);
    guard.release().await.unwrap();
}

#[tokio::test]
async fn lost_lock_terminates_the_command_and_exits_5() {
    let path = unique("lock-lost");
    let dir = scratch("lock-lost");
    let mark = dir.join("got-term");
    let script = "trap 'echo TERM > \"$0\"; exit 0' TERM; while :; do sleep 0.1; done";
    let child = Command::new(ZK)
        .args([
            "--server",
            &server(),
            "lock",
            &path,
            "--",
            "sh",
            "-c",
            script,
        ])
        .arg(&mark)
        .kill_on_drop(true)
        .output();
    let run = tokio::spawn(child);
    // Once the command runs under the lock, an administrator deletes the lock node.
    let c = admin().await;
    let node = tokio::time::timeout(SOON, async {
        loop {
            if let Ok(ch) = c.get_children(&path).await {
                if let Some(n) = ch.first() {
                    return format!("{path}/{n}");
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("zk takes the lock");
    c.delete(&node, Version::Any).await.unwrap();
    let o = tokio::time::timeout(SOON, run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
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
    let child = Command::new(ZK)
        .args([
            "--server",
            &server(),
            "lock",
            &path,
            "--",
            "sh",
            "-c",
            script,
        ])
        .arg(&pid_file)
        .kill_on_drop(true)
        .output();
    let run = tokio::spawn(child);
    let c = admin().await;
    let grandchild: u32 = tokio::time::timeout(SOON, async {
        loop {
            if let Some(pid) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the script starts its background command");
    let proc_dir = PathBuf::from(format!("/proc/{grandchild}"));
    assert!(proc_dir.exists());
    let node = c.get_children(&path).await.unwrap().remove(0);
    c.delete(&format!("{path}/{node}"), Version::Any)
        .await
        .unwrap();
    let o = tokio::time::timeout(SOON, run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
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

/// Sends SIGINT to a running zk.
async fn interrupt(pid: u32) {
    let s = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .await
        .unwrap();
    assert!(s.success());
}

#[tokio::test]
async fn watch_prints_changes_and_create_e_holds_its_node_until_interrupted() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let base = unique("watch");
    let c = admin().await;
    assert_code(&zk(&["create", &base]).await, 0);
    let mut watch = Command::new(ZK)
        .args(["--server", &server(), "watch", &base])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
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
    let mut holder = Command::new(ZK)
        .args(["--server", &server(), "create", "-e", &eph])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = BufReader::new(holder.stdout.take().unwrap()).lines();
    let printed = tokio::time::timeout(SOON, out.next_line()).await.unwrap();
    assert_eq!(printed.unwrap().as_deref(), Some(eph.as_str()));
    assert!(c.exists(&eph).await.unwrap().is_some());
    interrupt(holder.id().unwrap()).await;
    let status = tokio::time::timeout(SOON, holder.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(
        c.exists(&eph).await.unwrap(),
        None,
        "closed with its session"
    );

    interrupt(watch.id().unwrap()).await;
    let status = tokio::time::timeout(SOON, watch.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    c.delete(&base, Version::Any).await.unwrap();
}
