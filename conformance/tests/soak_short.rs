//! The short variant of the fault-injection soak (`conformance/src/bin/soak`): a minute of
//! faults against a real 3-node ensemble with three client processes, a fixed seed, and
//! every invariant must hold. The long run is `cargo run --release -p conformance --bin soak
//! -- --seconds 1800 --seed …` (see BENCHMARKS.md).

use std::{process::Command, time::Duration};

use conformance::peers::{run_to_end, Exit};

/// Seed of the schedule: its first faults are a member killed, a client cut off by a network
/// partition past its session timeout while holding a lock, a SIGSTOPped member, a client
/// paused past its session timeout while holding a lock, connections reset, a brief
/// partition and a lost quorum.
const SEED: u64 = 20240607;
const SECONDS: u64 = 60;
/// Start-up, the faults, the stop and the checks, with room for a loaded machine; the soak
/// is killed (and the test fails) beyond this.
const LIMIT: Duration = Duration::from_secs(170);

#[test]
fn short_soak_holds_every_invariant() {
    let dir = std::env::temp_dir().join(format!("soak-short-{}", std::process::id()));
    let mut soak = Command::new(env!("CARGO_BIN_EXE_soak"));
    soak.args([
        "--seconds",
        &SECONDS.to_string(),
        "--seed",
        &SEED.to_string(),
        "--clients",
        "3",
        "--dir",
        &dir.display().to_string(),
    ]);
    let run = run_to_end(&mut soak, LIMIT).expect("start the soak program");
    let out = run.stdout;
    println!("{out}");
    eprintln!("{}", run.stderr);
    let status = match run.exit {
        Exit::Exited(st) => st,
        Exit::TimedOut(_) => panic!("the soak took longer than {LIMIT:?}"),
        Exit::WaitFailed(e) => panic!("wait for the soak: {e}"),
    };
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
    assert!(out.contains("client process paused past session timeout: worker"));
    assert!(out.contains("lock acquisitions: "));
    // Where network namespaces can be made (root, iproute2) the partition must have happened;
    // elsewhere the soak says it skipped it.
    if out.contains("network partitions: worker") {
        assert!(out.contains("client partitioned past session timeout: worker"));
        assert!(!out.contains("network partitions: 0 past the session timeout"));
    } else {
        assert!(out.contains("network partitions: not available here"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
