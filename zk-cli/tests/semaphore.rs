//! `zk semaphore` against a real ZooKeeper 3.8 (the conformance harness's shared server):
//! CMD runs holding a lease, with the lease in its environment; the semaphore admits at most
//! N holders at once; a full semaphore times out with exit 4 and leaves no node behind.

mod support;

use std::time::Duration;

use support::{admin, assert_code, command, finish, stderr, stdout, unique, zk, SOON};

/// Three holders of a two-lease semaphore, each holding a while: at most two are inside at
/// once (each writes its start and end into a log file), and each sees its lease node.
#[tokio::test]
async fn at_most_n_commands_hold_a_lease_at_once() {
    let path = unique("sem");
    let log = std::env::temp_dir().join(unique("sem-log").trim_start_matches('/'));
    let script = format!(
        "echo \"in $ZK_LOCK_NODE\" >> {log}; sleep 1; echo out >> {log}",
        log = log.display()
    );
    let mut runs = Vec::new();
    for _ in 0..3 {
        let cmd = command([
            "semaphore",
            &path,
            "--leases",
            "2",
            "--",
            "sh",
            "-c",
            &script,
        ]);
        runs.push(tokio::spawn(finish(cmd, None)));
    }
    for r in runs {
        let o = tokio::time::timeout(SOON, r).await.unwrap().unwrap();
        assert_code(&o, 0);
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let (mut inside, mut most) = (0, 0);
    for line in text.lines() {
        if let Some(node) = line.strip_prefix("in ") {
            assert!(
                node.starts_with(&format!("{path}/leases/_c_")) && node.contains("-lease-"),
                "{node}"
            );
            inside += 1;
            most = most.max(inside);
        } else {
            inside -= 1;
        }
    }
    assert_eq!(text.lines().count(), 6, "{text}");
    assert!(most <= 2, "{most} holders at once:\n{text}");
    let c = admin().await;
    assert!(c
        .get_children(&format!("{path}/leases"))
        .await
        .unwrap()
        .is_empty());
}

/// While the only lease is held (by a Rust holder), `zk semaphore --timeout` gives up with
/// exit 4, runs nothing and leaves no lease node behind; once it is free, CMD runs.
#[tokio::test]
async fn a_full_semaphore_times_out_with_exit_4() {
    let path = unique("sem-full");
    let c = admin().await;
    let held = zk_recipes::InterProcessSemaphoreV2::new(c.clone(), &path, 1)
        .acquire()
        .await
        .unwrap();
    let o = zk(&[
        "semaphore",
        &path,
        "--leases",
        "1",
        "--timeout",
        "0.5",
        "--",
        "echo",
        "ran",
    ])
    .await;
    assert_code(&o, 4);
    assert!(!stdout(&o).contains("ran"));
    let leases = c.get_children(&format!("{path}/leases")).await.unwrap();
    assert_eq!(leases.len(), 1, "{leases:?}");
    held.release().await.unwrap();
    let o = tokio::time::timeout(
        Duration::from_secs(30),
        zk(&["semaphore", &path, "--leases", "1", "--", "echo", "ran"]),
    )
    .await
    .unwrap();
    assert_code(&o, 0);
    assert_eq!(stdout(&o).trim(), "ran");
}

/// The lease node deleted under a running CMD: CMD is stopped and `zk` exits 5, saying why
/// (the lease's own lost signal).
#[tokio::test]
async fn a_lost_lease_stops_the_command_with_exit_5() {
    let path = unique("sem-lost");
    let c = admin().await;
    let cmd = command(["semaphore", &path, "--leases", "1", "--", "sleep", "300"]);
    let run = tokio::spawn(finish(cmd, None));
    let leases = format!("{path}/leases");
    let locks = format!("{path}/locks");
    // The lease is zk's once its node is there and the semaphore's lock is given back
    // (Curator's layout: acquire holds <path>/locks while it counts the leases); deleting
    // the node before that fails the acquire itself (exit 3), not the running CMD.
    let node = tokio::time::timeout(SOON, async {
        loop {
            if let Ok(mut ch) = c.get_children(&leases).await {
                let deciding = c.get_children(&locks).await.map_or(true, |l| !l.is_empty());
                if let (Some(n), false) = (ch.pop(), deciding) {
                    return format!("{leases}/{n}");
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("zk takes a lease");
    c.delete(&node, zk_session::Version::Any).await.unwrap();
    let o = tokio::time::timeout(SOON, run).await.unwrap().unwrap();
    assert_code(&o, 5);
    let err = stderr(&o);
    assert!(
        err.contains(&format!("lost the lease at {path} (lease node deleted)")),
        "{err}"
    );
}
