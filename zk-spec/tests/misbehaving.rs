//! The checker is able to fail: a fake server that misbehaves in one way, in front of a real
//! ZooKeeper server, makes the checks for that rule fail; every malformed-input check catches
//! a server that crashes on its input, one that hangs on it, and (where the input has a
//! request header) one that answers it as a success.

mod misbehaving_support;

use std::time::Duration;

use misbehaving_support::{FakeServer, Misbehaviour};
use zk_spec::{registry, Area, Outcome, Runner};
use zk_testkit::shared_standalone;

/// A runner against a fresh fake server, with a short wait for frames: the hanging server
/// makes every malformed check wait that long.
fn fake(how: Misbehaviour) -> (FakeServer, Runner) {
    let fake = FakeServer::start(shared_standalone().client_addr(), how);
    // A fake server has nothing to harm: the dangerous checks run too.
    let runner = Runner::new(fake.addr())
        .io_timeout(Duration::from_secs(1))
        .dangerous(true);
    (fake, runner)
}

fn outcome(how: Misbehaviour, id: &str) -> Outcome {
    let (_fake, runner) = fake(how);
    runner
        .run_check(id)
        .unwrap()
        .expect("a check of that id")
        .outcome
}

fn failed_got(o: &Outcome) -> &str {
    match o {
        Outcome::Failed(f) => &f.got,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn through_a_faithful_proxy_the_ordering_and_malformed_checks_pass() {
    let (_fake, runner) = fake(Misbehaviour::Faithful);
    for area in [Area::Ordering, Area::Malformed] {
        let report = runner.run_area(area).unwrap();
        let failed: Vec<_> = report
            .failures()
            .map(|r| (r.check.id, r.outcome.clone()))
            .collect();
        assert!(failed.is_empty(), "{failed:?}");
        assert_eq!(report.counts().0, registry::in_area(area).len());
    }
}

#[test]
fn replies_out_of_order_fail_the_ordering_check() {
    let o = outcome(Misbehaviour::ReorderReplies, "ordering.replies-in-order");
    assert!(failed_got(&o).contains("a reply with xid"), "{o:?}");
}

#[test]
fn a_zxid_going_backwards_fails_the_zxid_check() {
    let o = outcome(Misbehaviour::ZxidBackwards, "ordering.zxid-monotonic");
    assert!(failed_got(&o).contains("zxid 0x1"), "{o:?}");
}

#[test]
fn every_malformed_check_catches_a_server_that_crashes_on_its_input() {
    // The fake server serves well-formed traffic: the crash is the malformed input's doing.
    assert_eq!(
        outcome(Misbehaviour::CrashOnMalformed, "ops.get-data"),
        Outcome::Passed
    );
    for check in registry::in_area(Area::Malformed) {
        let o = outcome(Misbehaviour::CrashOnMalformed, check.id);
        assert!(o.is_failed(), "{}: {o:?}", check.id);
    }
}

#[test]
fn every_malformed_check_catches_a_server_that_hangs_on_its_input() {
    assert_eq!(
        outcome(Misbehaviour::HangOnMalformed, "ops.get-data"),
        Outcome::Passed
    );
    // Each check waits out the read timeout: four at a time.
    let checks = registry::in_area(Area::Malformed);
    std::thread::scope(|s| {
        for chunk in checks.chunks(checks.len().div_ceil(4)) {
            s.spawn(move || {
                for check in chunk {
                    let o = outcome(Misbehaviour::HangOnMalformed, check.id);
                    let got = failed_got(&o);
                    assert!(
                        got.contains("open and silent") || got.contains("timed out"),
                        "{}: {o:?}",
                        check.id
                    );
                }
            });
        }
    });
}

#[test]
fn malformed_requests_answered_as_successes_fail_their_checks() {
    for id in [
        "malformed.truncated-record",
        "malformed.unknown-opcode",
        "malformed.negative-string-length",
        "malformed.huge-vector-count",
        "malformed.multi-without-end",
        "malformed.zero-length",
        "malformed.truncated.create.flags",
        "malformed.truncated.set-data.version",
        "malformed.truncated.multi.op",
        "malformed.truncated.set-watches.child-watches",
        "malformed.truncated.auth.data",
        "malformed.negative-length.create.data",
        "malformed.negative-length.set-watches.path",
        "malformed.huge-length.set-data.data",
    ] {
        let o = outcome(Misbehaviour::AcceptMalformed, id);
        assert!(o.is_failed(), "{id}: {o:?}");
    }
}

#[test]
fn replies_out_of_order_fail_every_pipelined_opcode_check() {
    let ids: Vec<_> = registry::select(None, Some("ordering.pipelined"))
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert!(ids.len() >= 20, "{ids:?}");
    let (_fake, runner) = fake(Misbehaviour::ReorderReplies);
    for id in ids {
        let o = runner
            .run_check(id)
            .unwrap()
            .expect("a check of that id")
            .outcome;
        assert!(failed_got(&o).contains("a reply with xid"), "{id}: {o:?}");
    }
}
