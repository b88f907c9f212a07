//! The short variant of the fault-injection soak (`conformance/src/bin/soak`): a minute of
//! faults against a real 3-node ensemble with three client processes, a fixed seed, and
//! every invariant must hold. The long run is `cargo run --release -p conformance --bin soak
//! -- --seconds 1800 --seed …` (see BENCHMARKS.md).

use std::{
    io::Read,
    process::{Command, Stdio},
    thread,
    time::{Duration, Instant},
};

/// Seed of the schedule: its first faults are a client paused past its session timeout
/// while holding a lock, a SIGSTOPped member, connections reset and a lost quorum.
const SEED: u64 = 20240607;
const SECONDS: u64 = 60;
/// Start-up, the faults, the stop and the checks, with room for a loaded machine; the soak
/// is killed (and the test fails) beyond this.
const LIMIT: Duration = Duration::from_secs(170);

#[test]
fn short_soak_holds_every_invariant() {
    let dir = std::env::temp_dir().join(format!("soak-short-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_soak"))
        .args([
            "--seconds",
            &SECONDS.to_string(),
            "--seed",
            &SEED.to_string(),
            "--clients",
            "3",
            "--dir",
            &dir.display().to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the soak program");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for the soak") {
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
    let status = status.unwrap_or_else(|| panic!("the soak took longer than {LIMIT:?}"));
    assert!(
        status.success(),
        "the soak failed ({status}); worker logs in {}",
        dir.display()
    );
    assert!(
        out.contains("\ninvariant violations: 0\n"),
        "no zero-violation line in the report"
    );
    assert!(!out.contains("[FAIL]"));
    // The run did what it is for: faults, locks, terms.
    assert!(out.contains("client process paused past session timeout"));
    assert!(out.contains("lock acquisitions: "));
    let _ = std::fs::remove_dir_all(&dir);
}
