//! The areas that need a server set up for them, each against a test-kit server set up so:
//! every check passes. The default suite (tests/real_server.rs) skips them.

mod setups_support;

use zk_spec::{Area, Runner, Setup};
use zk_testkit::Ensemble;

use setups_support::all_pass;

/// A 3-member ensemble with read-only mode of which only member 2 still runs, read-only.
fn lone_read_only_member(local_sessions: bool) -> Ensemble {
    let ens = Ensemble::builder()
        .size(3)
        .read_only_mode(true)
        .config("localSessionsEnabled", local_sessions.to_string())
        .config("localSessionsUpgradingEnabled", local_sessions.to_string())
        .start()
        .unwrap();
    ens.server(0).stop().unwrap();
    ens.server(1).stop().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while ens.server(2).mode() != Some(zk_testkit::Mode::ReadOnly) {
        assert!(std::time::Instant::now() < deadline, "never read-only");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    ens
}

fn read_only_runner(ens: &Ensemble) -> Runner {
    let alone = ens.server(2).client_addr();
    Runner::new(alone).setup(Setup::default().read_only(alone))
}

#[test]
fn a_member_without_its_quorum_serves_reads_only() {
    // Read-only clients of 3.8 need local sessions: see the next test.
    let ens = lone_read_only_member(true);
    all_pass(&read_only_runner(&ens), &[Area::ReadOnly], &[]);
}

#[test]
fn without_local_sessions_a_read_only_member_answers_a_connect_with_a_reply_header() {
    let ens = lone_read_only_member(false);
    let report = read_only_runner(&ens).run_area(Area::ReadOnly).unwrap();
    let connect = report.get("read-only.connect").unwrap();
    match &connect.outcome {
        zk_spec::Outcome::Failed(f) => {
            assert!(
                f.known_bug.is_some() && f.got.contains("NotReadOnly"),
                "{f:?}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(failed(&report, "read-only.connect"));
    assert_eq!(
        report
            .get("read-only.refuses-read-write")
            .map(|r| &r.outcome),
        Some(&zk_spec::Outcome::Passed)
    );
    let skipped = report
        .results
        .iter()
        .filter(|r| matches!(r.outcome, zk_spec::Outcome::Skipped(_)))
        .count();
    assert_eq!(skipped, report.results.len() - 2, "{report:#?}");
}

/// `super:zk-spec-super`'s digest, for `zookeeper.DigestAuthenticationProvider.superDigest`.
const SUPER_DIGEST: &str = "super:84vzVkJ8qptZaVSTHfGe9kibdTk=";

#[test]
fn an_ensemble_with_reconfig_and_acls_is_reconfigured_by_its_superuser_only() {
    let ens = Ensemble::builder()
        .size(3)
        .reconfig_enabled(true)
        .system_property(
            "zookeeper.DigestAuthenticationProvider.superDigest",
            SUPER_DIGEST,
        )
        .start()
        .unwrap();
    let setup = Setup::default()
        .ensemble(ens.client_addrs())
        .reconfig(zk_spec::Credentials::parse("super:zk-spec-super"));
    let runner = Runner::new(ens.server(0).client_addr()).setup(setup);
    all_pass(&runner, &[Area::Sessions, Area::Reconfig], &[]);
}

fn sasl_server(enforce: bool) -> zk_testkit::Standalone {
    zk_testkit::Standalone::builder()
        .sasl(
            zk_testkit::SaslServer::digest_md5()
                .user("bob", "bobsecret")
                .enforce(enforce),
        )
        .start()
        .unwrap()
}

#[test]
fn sasl_digest_md5_logins_and_the_sasl_scheme() {
    let zk = sasl_server(false);
    let runner = Runner::new(zk.client_addr()).setup(Setup::default().sasl("bob", "bobsecret"));
    // SASL is offered, not required.
    all_pass(&runner, &[Area::Sasl], &["sasl.enforced"]);
}

#[test]
fn a_server_that_requires_sasl_serves_logged_in_sessions_only() {
    let zk = sasl_server(true);
    let runner = Runner::new(zk.client_addr()).setup(Setup::default().sasl("bob", "bobsecret"));
    // A digest-only session is not served at all.
    all_pass(&runner, &[Area::Sasl], &["sasl.acl.digest-is-not-sasl"]);
}

/// The shared TLS server and its secure port with the kit's client certificate, said to
/// have `subject`.
fn tls_target(subject: &str) -> (&'static zk_testkit::TlsStandalone, zk_spec::TlsTarget) {
    let env = zk_testkit::shared_tls_standalone();
    let tls = zk_spec::TlsTarget {
        addr: env.zk.secure_connect_string().parse().unwrap(),
        ca: env.certs.ca(),
        cert: env.certs.client_cert(),
        key: env.certs.client_key(),
        server_name: zk_testkit::certs::SERVER_DNS_NAME.into(),
        subject: Some(subject.into()),
    };
    (env, tls)
}

#[test]
fn the_x509_scheme_over_tls_with_a_client_certificate() {
    let (env, tls) = tls_target(zk_testkit::certs::CLIENT_SUBJECT);
    let runner = Runner::new(env.zk.client_addr()).setup(Setup::default().tls(tls));
    all_pass(&runner, &[Area::X509], &[]);
}

/// Whether check `id` ran and failed.
fn failed(report: &zk_spec::Report, id: &str) -> bool {
    report
        .get(id)
        .is_some_and(|r| matches!(r.outcome, zk_spec::Outcome::Failed(_)))
}

#[test]
fn the_set_up_areas_fail_against_servers_not_set_up_as_said() {
    // Two unrelated servers given as an ensemble: a session does not move between them.
    let a = zk_testkit::shared_standalone();
    let b = zk_testkit::Standalone::start().unwrap();
    let setup = Setup::default()
        .ensemble(vec![a.client_addr(), b.client_addr()])
        // A read-write server given as the read-only member.
        .read_only(a.client_addr());
    let report = Runner::new(a.client_addr())
        .setup(setup)
        .run_area(Area::Sessions)
        .unwrap();
    assert!(failed(&report, "sessions.move"), "{report:#?}");
    let report = Runner::new(a.client_addr())
        .setup(Setup::default().read_only(a.client_addr()))
        .run_area(Area::ReadOnly)
        .unwrap();
    for id in [
        "read-only.connect",
        "read-only.writes",
        "read-only.refuses-read-write",
    ] {
        assert!(failed(&report, id), "{id}: {report:#?}");
    }
    // A client certificate whose subject is not the one said.
    let (env, tls) = tls_target("CN=someone-else");
    let report = Runner::new(env.zk.client_addr())
        .setup(Setup::default().tls(tls))
        .run_area(Area::X509)
        .unwrap();
    assert!(failed(&report, "x509.who-am-i"), "{report:#?}");
    assert!(!failed(&report, "x509.session"), "{report:#?}");
}

#[test]
fn an_ensemble_that_skips_acls_is_reconfigured_by_anyone() {
    let ens = Ensemble::start_reconfigurable(3).unwrap();
    let runner = Runner::new(ens.server(1).client_addr()).setup(Setup::default().reconfig(None));
    // Without ACL checks there is no NOAUTH to see, nor a read-only config node.
    all_pass(
        &runner,
        &[Area::Reconfig],
        &["reconfig.needs-auth", "reconfig.config-node.read-only"],
    );
}
