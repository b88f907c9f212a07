//! The blocking client's threads, seen from /proc (Linux): one `zk-session-io` thread per
//! session, asleep while the session is idle, gone once the last handle is dropped. Alone
//! in its test binary, so that no other test's threads are counted.

use std::{
    fs,
    time::{Duration, Instant},
};

use conformance::shared_standalone;
use zk_session::blocking::Client;

/// The ids of this process's threads named `name`.
fn threads_named(name: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for entry in fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            ids.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    ids
}

/// How many times thread `tid` of this process has gone to sleep.
fn sleeps(tid: &str) -> u64 {
    let status = fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("voluntary_ctxt_switches:"))
        .unwrap();
    line.split_whitespace().last().unwrap().parse().unwrap()
}

#[test]
fn one_io_thread_per_session_asleep_when_idle_and_gone_after_the_last_drop() {
    let connect = || {
        Client::builder(&shared_standalone().connect_string())
            .session_timeout(Duration::from_secs(10))
            .connect_blocking()
            .unwrap()
    };
    let clients = [connect(), connect(), connect()];
    let io = threads_named("zk-session-io");
    assert_eq!(io.len(), 3, "{io:?}");

    // Idle for two seconds: a ping every 3.3 s at most, and no busy loop.
    let before: Vec<u64> = io.iter().map(|t| sleeps(t)).collect();
    std::thread::sleep(Duration::from_secs(2));
    for (t, b) in io.iter().zip(before) {
        let woke = sleeps(t) - b;
        println!("thread {t}: went to sleep {woke} times in 2 s of idleness");
        assert!(
            woke <= 10,
            "thread {t} slept {woke} times in 2 s while idle"
        );
    }

    let clone = clients[0].clone();
    drop(clients);
    // Each thread ends once its session is closed (a round trip to the server).
    wait_for_io_threads(1);
    assert_eq!(
        threads_named("zk-session-io").len(),
        1,
        "a clone keeps its session"
    );
    assert!(clone.state().is_connected());
    drop(clone);
    wait_for_io_threads(0);
}

/// Waits until at most `n` I/O threads are left.
fn wait_for_io_threads(n: usize) {
    let until = Instant::now() + Duration::from_secs(10);
    while threads_named("zk-session-io").len() > n {
        assert!(Instant::now() < until, "an I/O thread outlived its session");
        std::thread::sleep(Duration::from_millis(20));
    }
}
