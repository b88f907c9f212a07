//! The README's main command, `cargo run --release -p conformance --bin demo`, run as a test
//! (debug build), plain and with `--tls`: it must finish, show writes under the lock that add
//! up, and a failover of the leader.

use std::{process::Command, time::Duration};

use conformance::peers::{run_to_end, Exit};

/// The demo takes about 40 s; room for a loaded machine.
const LIMIT: Duration = Duration::from_secs(240);

#[test]
fn the_demo_runs_and_shows_the_failover() {
    let out = demo(&[]);
    assert!(out.contains("over TCP"), "parts 2 and 3 use plain TCP");
}

/// `demo --tls`: the same over mutual TLS, the client known by its certificate.
#[test]
fn the_demo_runs_over_tls() {
    let out = demo(&["--tls"]);
    assert!(out.contains("secure client ports"), "no secure ports");
    assert!(
        out.contains("client over TLS") && out.contains("(a session each, over TLS)"),
        "parts 2 and 3 use TLS"
    );
    assert!(out.contains("x509:CN=zk-client"), "no x509 identity");
}

/// Runs the demo with `args`, checks what every run shows, and returns its stdout.
fn demo(args: &[&str]) -> String {
    let run = run_to_end(Command::new(env!("CARGO_BIN_EXE_demo")).args(args), LIMIT)
        .expect("start the demo");
    let out = run.stdout;
    println!("{out}");
    eprintln!("{}", run.stderr);
    let status = match run.exit {
        Exit::Exited(st) => st,
        Exit::TimedOut(_) => panic!("the demo took longer than {LIMIT:?}"),
        Exit::WaitFailed(e) => panic!("wait for the demo: {e}"),
    };
    assert!(status.success(), "the demo failed: {status}");
    // Part 1: frames in hex; part 2: the same session after kill -9.
    assert!(out.contains("== 1."), "no protocol part");
    assert!(out.contains("same session 0x"), "no session failover");
    // Part 3: the lock was held and every fenced write counted once; leadership moved.
    let line = out
        .lines()
        .find(|l| l.contains("fenced writes under the lock"))
        .expect("no lock summary");
    let holds: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a count of writes");
    assert!(holds > 0, "{line}");
    assert!(line.contains(&format!("reached {holds} ")), "{line}");
    let leaders = out
        .lines()
        .find(|l| l.contains("leaders in order:"))
        .expect("no election summary");
    assert!(leaders.matches(" -> ").count() >= 1, "{leaders}");
    out
}
