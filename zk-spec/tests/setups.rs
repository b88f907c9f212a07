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
