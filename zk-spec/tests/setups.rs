//! The areas that need a server set up for them, each against a test-kit server set up so:
//! every check passes. The default suite (tests/real_server.rs) skips them.

mod setups_support;

use zk_spec::{Area, Runner, Setup};
use zk_testkit::Ensemble;

use setups_support::all_pass;

#[test]
fn sessions_move_between_the_members_of_an_ensemble() {
    let ens = Ensemble::start(3).unwrap();
    let runner = Runner::new(ens.server(0).client_addr())
        .setup(Setup::default().ensemble(ens.client_addrs()));
    all_pass(&runner, &[Area::Sessions]);
}

#[test]
fn a_member_without_its_quorum_serves_reads_only() {
    // Read-only clients of 3.8 need local sessions (a global one cannot be made without a
    // quorum).
    let ens = Ensemble::builder()
        .size(3)
        .read_only_mode(true)
        .config("localSessionsEnabled", "true")
        .config("localSessionsUpgradingEnabled", "true")
        .start()
        .unwrap();
    ens.server(0).stop().unwrap();
    ens.server(1).stop().unwrap();
    let alone = ens.server(2);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while alone.mode() != Some(zk_testkit::Mode::ReadOnly) {
        assert!(std::time::Instant::now() < deadline, "never read-only");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let runner =
        Runner::new(alone.client_addr()).setup(Setup::default().read_only(alone.client_addr()));
    all_pass(&runner, &[Area::ReadOnly]);
}
