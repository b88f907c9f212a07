//! Robustness mode: nothing found against a real server in a short run; against a fake
//! server that hangs or crashes on malformed input, a finding whose saved case replays.

mod misbehaving_support;

use std::time::Duration;

use misbehaving_support::{FakeServer, Misbehaviour};
use zk_spec::fuzz::{self, case, Case, FuzzConfig};
use zk_testkit::shared_standalone;

fn config(addr: std::net::SocketAddr, secs: u64) -> FuzzConfig {
    let mut c = FuzzConfig::new(addr, Duration::from_secs(secs));
    c.seed = 11;
    c.io_timeout = Duration::from_secs(1);
    c
}

#[test]
fn a_short_run_against_zookeeper_finds_nothing() {
    let report = fuzz::run(&config(shared_standalone().client_addr(), 4)).unwrap();
    assert!(report.requests > 100 && report.mutated > 10, "{report:?}");
    assert!(report.probes > 0);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

#[test]
fn a_server_that_hangs_on_malformed_input_is_found_and_the_case_replays() {
    let fake = FakeServer::start(
        shared_standalone().client_addr(),
        Misbehaviour::HangOnMalformed,
    );
    let dir = std::env::temp_dir().join(format!("zk-spec-fuzz-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = config(fake.addr(), 20);
    c.out_dir = Some(dir.clone());
    let report = fuzz::run(&c).unwrap();
    let found = report.findings.first().expect("a finding");
    assert!(
        found.case.what.contains("neither answered nor closed"),
        "{found:?}"
    );
    assert!(found.reproduced);
    // Shrunk to the one frame that hangs it.
    assert_eq!(found.case.steps.len(), 1, "{found:?}");
    assert!(found.case.steps[0].mutation.is_some());
    let text = std::fs::read_to_string(found.saved.as_ref().unwrap()).unwrap();
    let again = Case::from_text(&text).unwrap();
    let fresh = FakeServer::start(
        shared_standalone().client_addr(),
        Misbehaviour::HangOnMalformed,
    );
    assert!(case::replay(fresh.addr(), &again.steps, Duration::from_secs(1)).is_some());
    // The real server handles the same frames.
    assert_eq!(
        case::replay(
            shared_standalone().client_addr(),
            &again.steps,
            Duration::from_secs(1)
        ),
        None
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_server_that_crashes_on_malformed_input_is_found() {
    let fake = FakeServer::start(
        shared_standalone().client_addr(),
        Misbehaviour::CrashOnMalformed,
    );
    let report = fuzz::run(&config(fake.addr(), 20)).unwrap();
    assert!(!report.findings.is_empty(), "{report:?}");
    assert!(
        report.elapsed < Duration::from_secs(20),
        "stopped at the first finding"
    );
}

#[test]
fn only_loopback_servers_are_fuzzed() {
    let err = fuzz::run(&config("192.0.2.1:2181".parse().unwrap(), 1)).unwrap_err();
    assert!(err.contains("loopback"), "{err}");
}
