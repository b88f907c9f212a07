//! A new server list while connected or connecting, and giving up on the first connection
//! when every server fails for good.

use super::harness::{config, refused, Harness, SESSION};
use crate::{
    connect_error::ConnectFailure,
    session::{Action, Phase},
    TlsFailure,
};

fn actions(h: &mut Harness) -> Vec<Action> {
    std::iter::from_fn(|| h.core.poll_action()).collect()
}

fn hosts(names: &[&str]) -> Vec<(String, u16)> {
    names.iter().map(|n| (n.to_string(), 2181)).collect()
}

fn update(h: &mut Harness, names: &[&str]) {
    let mut rx = h.server_list(hosts(names));
    assert!(rx.try_recv().is_ok(), "answered at once");
}

fn connected_host(h: &Harness) -> usize {
    match h.core.phase() {
        Phase::Connected { host, .. } => host,
        p => panic!("not connected: {p:?}"),
    }
}

#[test]
fn a_client_whose_server_stays_listed_and_nothing_was_added_keeps_its_connection() {
    let mut h = Harness::connected();
    let on = h.core.cfg.hosts[connected_host(&h)].0.clone();
    // The same servers in another order, less one that is not ours.
    let mut rest: Vec<&str> = ["h0", "h1", "h2"]
        .into_iter()
        .filter(|n| *n != on)
        .collect();
    rest.truncate(1);
    let new = [rest[0], on.as_str()];
    update(&mut h, &new);
    let acts = actions(&mut h);
    assert_eq!(acts, [Action::ServerList(hosts(&new))]);
    assert_eq!(connected_host(&h), 1, "the index follows the server");
}

#[test]
fn a_client_whose_server_left_the_list_moves_and_keeps_its_session() {
    let mut h = Harness::connected();
    update(&mut h, &["n1", "n2"]);
    let acts = actions(&mut h);
    assert_eq!(
        acts[0],
        Action::ServerList(hosts(&["n1", "n2"])),
        "{acts:?}"
    );
    assert_eq!(acts[1], Action::Disconnect, "{acts:?}");
    let Some(Action::Connect { host, request, .. }) = acts.get(2) else {
        panic!("{acts:?}")
    };
    assert!(*host < 2);
    assert_eq!(request.session_id, SESSION);
    // Only the new servers are tried from now on.
    h.core.handle_connect_failed(*host, refused(), h.now);
    let next = actions(&mut h);
    assert!(
        next.iter()
            .all(|a| !matches!(a, Action::Connect { host, .. } if *host >= 2)),
        "{next:?}"
    );
}

#[test]
fn an_attempt_to_a_server_no_longer_listed_is_given_up() {
    let mut h = Harness::new(config(2));
    let (host, _) = h.connect_action().unwrap();
    assert!(matches!(h.core.phase(), Phase::Connecting { .. }));
    let keep = if host == 0 { "h1" } else { "h0" };
    update(&mut h, &[keep, "n1"]);
    let acts = actions(&mut h);
    assert!(
        matches!(
            &acts[..],
            [
                Action::ServerList(_),
                Action::Disconnect,
                Action::Connect { .. }
            ]
        ),
        "{acts:?}"
    );
}

fn fail_all(h: &mut Harness, failure: impl Fn(usize) -> ConnectFailure) {
    for _ in 0..3 {
        let (host, _) = h.connect_action().expect("an attempt");
        h.core.handle_connect_failed(host, failure(host), h.now);
    }
}

#[test]
fn connect_gives_up_only_when_every_server_failed_for_good() {
    let no_cert = || ConnectFailure::Tls(TlsFailure::NoClientCert);
    let mut h = Harness::new(config(3));
    fail_all(&mut h, |_| no_cert());
    let verdict = h.shared.hopeless.borrow().clone().expect("gave up");
    assert!(
        matches!(&verdict, crate::Error::Tls(e) if e.failure == TlsFailure::NoClientCert),
        "{verdict:?}"
    );
    // The client itself keeps trying, for a caller of `build` who waits for a fix.
    assert!(!matches!(h.core.phase(), Phase::Ended(_)));

    // One server refused the connection: that may pass, so connect keeps waiting.
    let mut h = Harness::new(config(3));
    fail_all(&mut h, |host| if host == 1 { refused() } else { no_cert() });
    assert!(h.shared.hopeless.borrow().is_none());
    // An interrupted handshake is no reason to give up either.
    let mut h = Harness::new(config(3));
    fail_all(&mut h, |_| {
        ConnectFailure::Tls(TlsFailure::Interrupted(std::io::ErrorKind::ConnectionReset))
    });
    assert!(h.shared.hopeless.borrow().is_none());
}

#[test]
fn with_fail_fast_connect_gives_up_once_every_server_refused() {
    let mut cfg = config(3);
    cfg.fail_fast_on_refusal = true;
    let mut h = Harness::new(cfg);
    // Two refusals are not yet every server.
    for _ in 0..2 {
        let (host, _) = h.connect_action().expect("an attempt");
        h.core.handle_connect_failed(host, refused(), h.now);
    }
    assert!(h.shared.hopeless.borrow().is_none());
    let (host, _) = h.connect_action().expect("an attempt");
    h.core.handle_connect_failed(host, refused(), h.now);
    let verdict = h.shared.hopeless.borrow().clone().expect("gave up");
    match &verdict {
        crate::Error::ConnectRefused { errors } => {
            let mut servers: Vec<_> = errors.iter().map(|e| e.server().to_owned()).collect();
            servers.sort();
            assert_eq!(servers, ["h0:2181", "h1:2181", "h2:2181"]);
        }
        other => panic!("{other:?}"),
    }

    // A server that timed out instead may be starting: no verdict, nor without the option.
    for (fail_fast, timeout_one) in [(true, true), (false, false)] {
        let mut cfg = config(3);
        cfg.fail_fast_on_refusal = fail_fast;
        let mut h = Harness::new(cfg);
        fail_all(&mut h, |host| {
            if timeout_one && host == 2 {
                ConnectFailure::Timeout
            } else {
                refused()
            }
        });
        assert!(h.shared.hopeless.borrow().is_none(), "{fail_fast}");
    }
}
