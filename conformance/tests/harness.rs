//! Tests of the real-server harness itself.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use conformance::{shared_standalone, Ensemble, HarnessError, Mode, Standalone};

const HEALTHY: Duration = Duration::from_secs(30);

fn pid_alive(pid: u32) -> bool {
    // A zombie still has /proc/<pid>; check its state too.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn standalone_serves_in_standalone_mode() {
    let t = Instant::now();
    let zk = Standalone::start().unwrap();
    eprintln!("standalone started in {:?}", t.elapsed());
    assert_eq!(zk.mode(), Some(Mode::Standalone));
    let srvr = zk.srvr().unwrap();
    assert!(srvr.contains("Zookeeper version: 3.8"), "{srvr}");
    assert!(zk.connect_string().starts_with("127.0.0.1:"));
    assert_eq!(zk.client_addr().port(), zk.client_port());
    assert!(zk.is_running());
    let cfg = std::fs::read_to_string(zk.dir().join("zoo.cfg")).unwrap();
    assert!(cfg.contains("tickTime=200"), "{cfg}");

    let pid = zk.pid().unwrap();
    let dir = zk.dir().to_path_buf();
    drop(zk);
    assert!(!pid_alive(pid), "server process {pid} survived drop");
    assert!(!dir.exists(), "{} survived drop", dir.display());
}

#[test]
fn standalone_options_reach_the_server() {
    let zk = Standalone::builder()
        .tick_time(100)
        .extended_types(true)
        .max_session_timeout(Duration::from_secs(5))
        .start()
        .unwrap();
    let conf = zk.four_letter(Duration::from_secs(2), "conf").unwrap();
    assert!(conf.contains("tickTime=100"), "{conf}");
    assert!(conf.contains("maxSessionTimeout=5000"), "{conf}");
    assert!(conf.contains("minSessionTimeout=200"), "{conf}");
}

#[test]
fn standalone_kill9_restart_keeps_port_and_data() {
    let zk = Standalone::start().unwrap();
    let port = zk.client_port();
    let before = zk.pid().unwrap();
    zk.kill9();
    assert!(!zk.is_running());
    assert!(!pid_alive(before));
    assert!(zk.srvr().is_err(), "a killed server answered");
    let t = Instant::now();
    assert_eq!(zk.restart().unwrap(), Mode::Standalone);
    eprintln!("standalone restarted in {:?}", t.elapsed());
    assert_eq!(zk.client_port(), port);
    assert_ne!(zk.pid().unwrap(), before);
    // The transaction log of the first run is still there.
    assert!(zk.dir().join("data/version-2").is_dir());
}

#[test]
fn stop_is_graceful_and_idempotent() {
    let zk = Standalone::start().unwrap();
    let pid = zk.pid().unwrap();
    zk.stop().unwrap();
    assert!(!zk.is_running());
    assert!(!pid_alive(pid));
    zk.stop().unwrap();
    zk.kill9();
    assert!(matches!(zk.pause(), Err(HarnessError::NotRunning { .. })));
    assert_eq!(zk.start().unwrap(), Mode::Standalone);
}

#[test]
fn pause_and_resume_standalone() {
    let zk = Standalone::start().unwrap();
    zk.pause().unwrap();
    assert!(zk.is_paused());
    assert!(zk.is_running());
    let t = Instant::now();
    let err = zk.four_letter(Duration::from_millis(500), "srvr");
    assert!(err.is_err(), "a paused server answered: {err:?}");
    assert!(t.elapsed() < Duration::from_secs(2));
    zk.resume().unwrap();
    assert!(!zk.is_paused());
    assert_eq!(zk.mode(), Some(Mode::Standalone));
    // stop() also works on a paused server.
    zk.pause().unwrap();
    zk.stop().unwrap();
    assert!(!zk.is_running());
}

#[test]
fn shared_standalone_is_started_once() {
    let a = shared_standalone();
    let b = shared_standalone();
    assert!(std::ptr::eq(a, b));
    assert_eq!(a.mode(), Some(Mode::Standalone));
}

#[test]
fn ensemble_of_three_has_one_leader() {
    let t = Instant::now();
    let ens = Ensemble::start(3).unwrap();
    eprintln!("3-node ensemble started in {:?}", t.elapsed());
    assert_eq!(ens.len(), 3);
    let modes = ens.modes();
    assert_eq!(
        modes.iter().filter(|m| **m == Some(Mode::Leader)).count(),
        1,
        "{modes:?}"
    );
    assert_eq!(
        modes.iter().filter(|m| **m == Some(Mode::Follower)).count(),
        2,
        "{modes:?}"
    );
    let leader = ens.leader_index().unwrap();
    assert_eq!(modes[leader], Some(Mode::Leader));
    assert_eq!(ens.follower_indices().len(), 2);

    let cs = ens.connect_string();
    let parts: Vec<&str> = cs.split(',').collect();
    assert_eq!(parts.len(), 3, "{cs}");
    for (i, part) in parts.iter().enumerate() {
        assert_eq!(*part, ens.server(i).connect_string());
        assert_eq!(ens.server(i).myid(), Some(i as u32 + 1));
        let myid = std::fs::read_to_string(ens.server(i).dir().join("data/myid")).unwrap();
        assert_eq!(myid.trim(), (i + 1).to_string());
    }
    let pids: Vec<u32> = ens.servers().iter().map(|s| s.pid().unwrap()).collect();
    let dirs: Vec<_> = ens
        .servers()
        .iter()
        .map(|s| s.dir().to_path_buf())
        .collect();
    drop(ens);
    for pid in pids {
        assert!(!pid_alive(pid), "member {pid} survived drop");
    }
    assert!(dirs.iter().all(|d| !Path::new(d).exists()));
}

#[test]
fn ensemble_follower_kill9_and_restart() {
    let ens = Ensemble::start(3).unwrap();
    let follower = ens.follower_indices()[0];
    ens.server(follower).kill9();
    assert!(!ens.server(follower).is_running());
    assert_eq!(ens.server(follower).mode(), None);
    // The other two still form a quorum.
    let leader = ens.wait_healthy(HEALTHY).unwrap();
    assert_ne!(leader, follower);
    let t = Instant::now();
    assert_eq!(ens.server(follower).restart().unwrap(), Mode::Follower);
    eprintln!("follower restarted in {:?}", t.elapsed());
    assert_eq!(ens.wait_healthy(HEALTHY).unwrap(), leader);
}

#[test]
fn ensemble_pause_and_resume_member() {
    let ens = Ensemble::start(3).unwrap();
    let follower = ens.follower_indices()[0];
    let member = ens.server(follower);
    member.pause().unwrap();
    assert!(member.is_paused());
    let answer = member.four_letter(Duration::from_millis(500), "srvr");
    assert!(answer.is_err(), "a paused member answered: {answer:?}");
    assert_eq!(member.mode(), None);
    // The rest keep serving.
    ens.wait_healthy(HEALTHY).unwrap();
    member.resume().unwrap();
    let t = Instant::now();
    let mode = loop {
        if let Some(m) = member.mode() {
            break m;
        }
        assert!(t.elapsed() < HEALTHY, "resumed member never answered");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(matches!(mode, Mode::Follower | Mode::Leader), "{mode:?}");
    ens.wait_healthy(HEALTHY).unwrap();
}

#[test]
fn ensemble_elects_a_new_leader_when_the_leader_stops() {
    let ens = Ensemble::start(3).unwrap();
    let old = ens.leader_index().unwrap();
    let t = Instant::now();
    ens.server(old).stop().unwrap();
    let new = ens.wait_healthy(HEALTHY).unwrap();
    eprintln!("new leader elected in {:?}", t.elapsed());
    assert_ne!(new, old);
    assert_eq!(ens.server(new).mode(), Some(Mode::Leader));
    // The old leader comes back as a follower.
    assert_eq!(ens.server(old).restart().unwrap(), Mode::Follower);
    assert_eq!(ens.wait_healthy(HEALTHY).unwrap(), new);
}

#[test]
fn a_panicking_test_does_not_leak_its_server() {
    let pid = std::sync::Mutex::new(None);
    let result = std::panic::catch_unwind(|| {
        let zk = Standalone::start().unwrap();
        *pid.lock().unwrap() = zk.pid();
        panic!("test failure while a server runs");
    });
    assert!(result.is_err());
    let pid = pid.lock().unwrap().expect("server started");
    assert!(!pid_alive(pid), "server {pid} survived the panic");
}

const ORPHAN_HELPER_ENV: &str = "ZK_CONFORMANCE_ORPHAN_HELPER";

/// Run by `servers_die_with_a_killed_test_process` in a child process: starts servers, reports
/// their pids and waits to be killed.
#[test]
#[ignore = "helper process for servers_die_with_a_killed_test_process"]
fn orphan_helper_start_servers_and_hang() {
    if std::env::var_os(ORPHAN_HELPER_ENV).is_none() {
        return;
    }
    // One server started from a short-lived thread, one shared server.
    let own = std::thread::spawn(|| Standalone::start().unwrap())
        .join()
        .unwrap();
    let shared = shared_standalone();
    println!("PIDS {} {}", own.pid().unwrap(), shared.pid().unwrap());
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
fn servers_die_with_a_killed_test_process() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let mut helper = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "orphan_helper_start_servers_and_hang",
            "--nocapture",
        ])
        .env(ORPHAN_HELPER_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut pids = Vec::new();
    for line in BufReader::new(helper.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix("PIDS ") {
            pids = rest.split(' ').map(|p| p.parse::<u32>().unwrap()).collect();
            break;
        }
    }
    assert_eq!(pids.len(), 2, "helper did not report its servers");
    assert!(pids.iter().all(|p| pid_alive(*p)));
    helper.kill().unwrap(); // SIGKILL: no destructors, no atexit
    helper.wait().unwrap();
    let t = Instant::now();
    while pids.iter().any(|p| pid_alive(*p)) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "servers {pids:?} outlived their SIGKILLed test process"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("orphaned servers gone {:?} after SIGKILL", t.elapsed());
}
