//! The README's main command, `cargo run --release -p conformance --bin demo`, run as a test
//! (debug build): it must finish, show writes under the lock that add up, and a failover of
//! the leader.

use std::{
    io::Read,
    process::{Command, Stdio},
    thread,
    time::{Duration, Instant},
};

/// The demo takes about 40 s; room for a loaded machine.
const LIMIT: Duration = Duration::from_secs(240);

#[test]
fn the_demo_runs_and_shows_the_failover() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_demo"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the demo");
    let mut stdout = child.stdout.take().unwrap();
    let out = thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let mut stderr = child.stderr.take().unwrap();
    let err = thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for the demo") {
            break Some(st);
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(200));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    println!("{out}");
    eprintln!("{err}");
    let status = status.unwrap_or_else(|| panic!("the demo took longer than {LIMIT:?}"));
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
}
