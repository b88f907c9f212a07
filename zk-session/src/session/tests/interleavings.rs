//! Every order of queued requests, watch registrations and removals around a reconnect, with
//! a disconnect at every step of the reconnect sequence; the invariants of the session:
//! every request answered exactly once, every live watch registered on the server exactly
//! once, no removed watch revived, no fresh watch removed.

use bytes::Bytes;
use tokio::sync::oneshot;
use zk_proto::{GetDataRequest, OpCode, Request};

use super::harness::{Harness, Reply, Watch};
use crate::{command::Command, watch::WatchKind, Error, ErrorCode};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Event {
    /// A caller sets a data watch on /a and keeps it.
    Fresh,
    /// A caller sets a child watch on /a and keeps it.
    FreshChild,
    /// A caller sets a data watch on /a and gives up at once (reply and watch dropped).
    Abandon,
    /// The caller of the data watch set on /a before the outage drops it.
    DropOld,
    /// A request without a watch.
    Plain,
}

const EVENTS: [Event; 5] = [
    Event::Fresh,
    Event::FreshChild,
    Event::Abandon,
    Event::DropOld,
    Event::Plain,
];

/// Where the connection drops once more after the reconnect.
#[derive(Debug, Clone, Copy)]
enum Cut {
    None,
    /// The next connection attempt fails before its handshake.
    Handshake,
    /// After the server has answered this many requests of the new connection.
    After(usize),
}

struct Held {
    replies: Vec<(Event, Reply)>,
    watches: Vec<Watch>,
    old_a: Option<Watch>,
    old_b: Watch,
    auth_replies: Vec<oneshot::Receiver<Result<(), Error>>>,
}

fn permutations(items: &[Event]) -> Vec<Vec<Event>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, first);
            out.push(p);
        }
    }
    out
}

fn apply(h: &mut Harness, held: &mut Held, ev: Event) {
    match ev {
        Event::Fresh => {
            let (r, w) = h.get_data_watch("/a");
            held.replies.push((ev, r));
            held.watches.push(w);
        }
        Event::FreshChild => {
            let (r, w) = h.get_children_watch("/a");
            held.replies.push((ev, r));
            held.watches.push(w);
        }
        Event::Abandon => {
            let (r, w) = h.get_data_watch("/a");
            drop(r);
            h.drop_watch(w);
        }
        Event::DropOld => {
            let w = held.old_a.take().expect("dropped once");
            h.drop_watch(w);
        }
        Event::Plain => {
            let r = h.request(
                Request::GetData(GetDataRequest {
                    path: "/a".into(),
                    watch: false,
                }),
                None,
            );
            held.replies.push((ev, r));
        }
    }
}

/// Connected, with data watches on /a and /b, then cut; the same credential is added twice
/// during the outage.
fn setup() -> (Harness, Held) {
    let mut h = Harness::connected();
    let (mut ra, old_a) = h.get_data_watch("/a");
    let (mut rb, old_b) = h.get_data_watch("/b");
    h.serve_all();
    assert!(ra.answer().is_ok() && rb.answer().is_ok());
    h.cut();
    let mut auth_replies = Vec::new();
    for _ in 0..2 {
        let (tx, rx) = oneshot::channel();
        h.core.handle_command(
            Command::AddAuth {
                scheme: "digest".into(),
                auth: Bytes::from_static(b"u:p"),
                reply: tx,
            },
            h.now,
        );
        auth_replies.push(rx);
    }
    let held = Held {
        replies: Vec::new(),
        watches: Vec::new(),
        old_a: Some(old_a),
        old_b,
        auth_replies,
    };
    (h, held)
}

/// Runs one interleaving; returns how many requests the server answered before the cut (so
/// the caller knows when later cut points add nothing).
fn run(order: &[Event], split: usize, batched: bool, cut: Cut) -> usize {
    let (mut h, mut held) = setup();
    for &ev in &order[..split] {
        apply(&mut h, &mut held, ev);
    }
    let mut log_from = h.log.len();
    assert!(h.accept());
    for &ev in &order[split..] {
        apply(&mut h, &mut held, ev);
        if !batched {
            h.serve_all();
        }
    }
    let mut served = 0;
    match cut {
        Cut::None => {}
        Cut::Handshake => {
            h.cut();
            let (host, _) = h.connect_action().expect("reconnects");
            h.core.handle_connect_failed(host, "refused", h.now);
            log_from = h.log.len();
            assert!(h.accept());
        }
        Cut::After(k) => {
            served = h.serve(k);
            h.cut();
            log_from = h.log.len();
            assert!(h.accept());
        }
    }
    h.serve_all();
    check(
        &mut h,
        &mut held,
        log_from,
        &format!("{order:?} split {split} batched {batched} {cut:?}"),
    );
    served
}

fn check(h: &mut Harness, held: &mut Held, log_from: usize, case: &str) {
    // Every request answered exactly once (a oneshot cannot carry two): an answer is there.
    for (ev, r) in &mut held.replies {
        match r.answer() {
            Ok(_) | Err(Error::Code(ErrorCode::ConnectionLoss)) => {}
            Err(e) => panic!("{case}: {ev:?} answered {e}"),
        }
    }
    for rx in &mut held.auth_replies {
        assert!(rx.try_recv().is_ok(), "{case}: add_auth not answered");
    }
    assert!(
        h.pending.is_empty(),
        "{case}: the server still owes replies"
    );
    // The credential added twice goes out once per connection.
    let auths = h.log[log_from..]
        .iter()
        .filter(|(_, op)| *op == OpCode::Auth)
        .count();
    assert!(auths <= 1, "{case}: {auths} auth packets on one connection");
    assert_eq!(h.watches.duplicates, 0, "{case}: a watch registered twice");
    // Every live watch is on the server; nothing else is.
    let mut live_data = false;
    let mut live_child = false;
    for w in &mut held.watches {
        if w.is_live() {
            match w.kind {
                WatchKind::Data => live_data = true,
                WatchKind::Child => live_child = true,
                _ => unreachable!(),
            }
        }
    }
    assert!(held.old_b.is_live(), "{case}: the watch on /b ended");
    assert!(
        h.watches.data.contains("/b"),
        "{case}: /b not re-registered"
    );
    assert_eq!(
        h.watches.data.contains("/a"),
        live_data,
        "{case}: server data watch on /a vs a live one held (fresh removed or dropped revived)"
    );
    assert_eq!(
        h.watches.child.contains("/a"),
        live_child,
        "{case}: server child watch on /a vs a live one held"
    );
}

/// Every order of the five events, split at every point between the outage and the new
/// connection, with the server answering each at once or all at the end, and the new
/// connection cut at every step of its sequence (auth, SetWatches, each request) or before
/// its handshake.
#[test]
fn every_order_of_requests_removals_and_registrations_around_a_reconnect() {
    let mut cases = 0;
    for order in permutations(&EVENTS) {
        for split in 0..=order.len() {
            for batched in [false, true] {
                run(&order, split, batched, Cut::None);
                run(&order, split, batched, Cut::Handshake);
                cases += 2;
                for k in 0.. {
                    let served = run(&order, split, batched, Cut::After(k));
                    cases += 1;
                    if served < k {
                        break;
                    }
                }
            }
        }
    }
    // 120 orders x 6 splits x 2 reply modes x (2 + the cut points of each).
    assert!(cases > 120 * 6 * 2 * 3, "{cases}");
    println!("{cases} interleavings");
}
