//! `zk-local` as a user runs it: it prints how to connect, the server answers there, and a
//! Ctrl-C (SIGINT) leaves no JVM and no scratch directory behind.

use std::{
    io::{BufRead, BufReader},
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

use zk_testkit::{four_letter_word, Mode};

/// Room for a JVM start (and a quorum) on a loaded 2-core machine.
const START_LIMIT: Duration = Duration::from_secs(120);
const STOP_LIMIT: Duration = Duration::from_secs(30);

struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    out: Vec<String>,
}

impl Running {
    fn start(args: &[&str]) -> Running {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zk-local"))
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start zk-local");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Running {
            child,
            lines,
            out: Vec::new(),
        }
    }

    /// Reads stdout until the list of server logs has ended (the last thing printed).
    fn read_description(&mut self, servers: usize) {
        let deadline = Instant::now() + START_LIMIT;
        let logs = |out: &[String]| out.iter().filter(|l| l.ends_with("/server.log")).count();
        while logs(&self.out) < servers {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.out.push(line),
                Err(e) => panic!("zk-local printed {:?} then {e:?}", self.out),
            }
        }
    }

    fn line_after(&self, prefix: &str) -> &str {
        self.out
            .iter()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` line in {:?}", self.out))
    }

    fn scratch_dirs(&self) -> Vec<PathBuf> {
        self.out
            .iter()
            .filter_map(|l| Path::new(l.trim()).parent())
            .filter(|d| d.starts_with(std::env::temp_dir()))
            .map(Path::to_path_buf)
            .collect()
    }

    /// The processes zk-local started (its children, from every thread).
    fn children(&self) -> Vec<u32> {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id())).unwrap();
        let mut pids = Vec::new();
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            pids.extend(
                children
                    .split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
        pids
    }

    /// Sends SIGINT, as Ctrl-C in its terminal would, and waits for the exit.
    fn interrupt(&mut self) {
        let sent = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let deadline = Instant::now() + STOP_LIMIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "zk-local exited with {status}");
                return;
            }
            assert!(Instant::now() < deadline, "zk-local did not stop on SIGINT");
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn alive(pid: u32) -> bool {
    // A zombie has exited; only its entry is left.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

/// Runs zk-local with `args`, checks what it printed and that every server answers, stops
/// it with SIGINT and checks that nothing is left. Returns its stdout lines.
fn run(args: &[&str], servers: usize, want: Mode) -> Vec<String> {
    let mut zk = Running::start(args);
    zk.read_description(servers);
    let export = zk.line_after("export ZK_SERVERS=").to_string();
    let plain = match zk
        .out
        .iter()
        .any(|l| l.starts_with("connect string (plain TCP): "))
    {
        true => zk.line_after("connect string (plain TCP): ").to_string(),
        false => {
            assert_eq!(zk.line_after("connect string: "), export);
            export.clone()
        }
    };
    assert_eq!(export.split(',').count(), servers, "{export}");
    let addrs: Vec<SocketAddr> = plain.split(',').map(|a| a.parse().unwrap()).collect();
    let modes: Vec<Option<Mode>> = addrs
        .iter()
        .map(|a| {
            four_letter_word(*a, "srvr", Duration::from_secs(5))
                .ok()
                .and_then(|s| Mode::from_srvr(&s))
        })
        .collect();
    assert!(modes.iter().all(Option::is_some), "{modes:?}");
    assert!(modes.contains(&Some(want)), "{modes:?}");

    let jvms = zk.children();
    assert_eq!(jvms.len(), servers, "one JVM per server: {jvms:?}");
    let dirs = zk.scratch_dirs();
    assert_eq!(dirs.len(), servers);
    assert!(dirs.iter().all(|d| d.is_dir()), "{dirs:?}");

    zk.interrupt();
    assert!(!jvms.iter().any(|&p| alive(p)), "a JVM outlived zk-local");
    assert!(!dirs.iter().any(|d| d.exists()), "scratch left: {dirs:?}");
    zk.out.clone()
}

#[test]
fn a_standalone_server_until_ctrl_c() {
    let out = run(&[], 1, Mode::Standalone);
    assert!(
        out.iter().any(|l| l.starts_with("then: zk ls /")),
        "{out:?}"
    );
}

#[test]
fn an_ensemble_with_tls_and_sasl_until_ctrl_c() {
    let out = run(&["--ensemble", "3", "--tls", "--sasl"], 3, Mode::Leader);
    let ca = out
        .iter()
        .find_map(|l| l.strip_prefix("CA certificate: "))
        .expect("the CA's path");
    assert!(!Path::new(ca).exists(), "the certificates are removed too");
    // The lines examples/tls.rs and examples/sasl.rs read, pointing at what was printed.
    let exported = |name: &str| {
        out.iter()
            .find_map(|l| l.strip_prefix(&format!("export {name}=")))
            .map(str::to_owned)
    };
    assert_eq!(exported("ZK_TLS_CA").as_deref(), Some(ca), "{out:?}");
    let pem = out
        .iter()
        .find_map(|l| l.strip_prefix("client certificate and key (one PEM file): "))
        .expect("the client PEM's path");
    assert_eq!(exported("ZK_TLS_CLIENT_PEM").as_deref(), Some(pem));
    assert_eq!(exported("ZK_SASL_USER").as_deref(), Some("zk-local"));
    assert!(exported("ZK_SASL_PASSWORD").is_some_and(|p| !p.is_empty()));
    assert!(out.iter().any(|l| l.contains("--sasl-user zk-local")));
}

#[test]
fn a_bad_argument_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_zk-local"))
        .arg("--ensemble")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: zk-local"));
}
