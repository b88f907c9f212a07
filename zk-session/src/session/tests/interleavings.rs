//! Every order of queued requests, watch registrations and removals around a reconnect, with
//! a disconnect at every step of the reconnect sequence; the invariants of the session:
//! every request answered exactly once, every live watch registered on the server exactly
//! once, no removed watch revived, no fresh watch removed.

use zk_proto::{EventType, OpCode};

use crate::session::Key;

use super::{
    harness::{get_data, Harness, Reply, Slot, Stream, Watch, SESSION, TIMEOUT_MS},
    server::Mode,
};
use crate::{watched_event::WatchKind, Error, ErrorCode};

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
    /// A caller adds a persistent watch on /a and keeps it.
    Persist,
    /// The caller of the persistent watch added on /a before the outage drops it.
    DropOldPersist,
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
    /// Likewise, and the next handshake finds the session expired: a new one is made.
    Expire(usize),
}

/// The same, with persistent watches on the path of the one-shots (ZOOKEEPER-4466): one
/// added, or none (so that the one-shots outlive the last persistent watch there).
const MIXED_EVENTS: [[Event; 5]; 2] = [
    [
        Event::Persist,
        Event::Fresh,
        Event::FreshChild,
        Event::DropOldPersist,
        Event::Abandon,
    ],
    [
        Event::Plain,
        Event::Fresh,
        Event::FreshChild,
        Event::DropOldPersist,
        Event::Abandon,
    ],
];

struct Held {
    replies: Vec<(Event, Reply)>,
    /// Whether an add_watch was answered with success, once checked.
    persist_ok: bool,
    watches: Vec<Watch>,
    streams: Vec<Stream>,
    old_a: Option<Watch>,
    old_persistent: Option<Stream>,
    old_b: Watch,
    auth_replies: Vec<Slot<Key, Result<(), Error>>>,
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
            r.abandon();
            h.drop_watch(w);
        }
        Event::DropOld => {
            let w = held.old_a.take().expect("dropped once");
            h.drop_watch(w);
        }
        Event::Plain => {
            let r = h.request(get_data("/a"), None);
            held.replies.push((ev, r));
        }
        Event::Persist => {
            let (r, w) = h.add_watch("/a");
            held.replies.push((ev, r));
            held.streams.push(w);
        }
        Event::DropOldPersist => {
            let w = held.old_persistent.take().expect("dropped once");
            h.drop_stream(w);
        }
    }
}

/// Connected, with data watches on /a and /b (and a persistent watch on /a when `mixed`),
/// then cut; the same credential is added twice during the outage.
fn setup(mixed: bool) -> (Harness, Held) {
    let mut h = Harness::connected();
    let (mut ra, old_a) = h.get_data_watch("/a");
    let (mut rb, old_b) = h.get_data_watch("/b");
    let old_persistent = mixed.then(|| {
        let (mut r, w) = h.add_watch("/a");
        h.serve_all();
        assert!(r.answer().is_ok());
        w
    });
    h.serve_all();
    assert!(ra.answer().is_ok() && rb.answer().is_ok());
    h.cut();
    let mut auth_replies = Vec::new();
    for _ in 0..2 {
        auth_replies.push(h.add_auth(b"u:p"));
    }
    let held = Held {
        replies: Vec::new(),
        persist_ok: false,
        watches: Vec::new(),
        streams: Vec::new(),
        old_a: Some(old_a),
        old_persistent,
        old_b,
        auth_replies,
    };
    (h, held)
}

/// Runs one interleaving; returns how many requests the server answered before the cut (so
/// the caller knows when later cut points add nothing).
fn run(order: &[Event], split: usize, batched: bool, cut: Cut) -> usize {
    let mixed = order.contains(&Event::DropOldPersist);
    let (mut h, mut held) = setup(mixed);
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
            h.core
                .handle_connect_failed(host, super::harness::refused(), h.now);
            log_from = h.log.len();
            assert!(h.accept());
        }
        Cut::After(k) => {
            served = h.serve(k);
            h.cut();
            log_from = h.log.len();
            assert!(h.accept());
        }
        Cut::Expire(k) => {
            served = h.serve(k);
            h.cut();
            assert!(h.accept_as(SESSION, 0).is_some());
            log_from = h.log.len();
            assert_eq!(
                h.accept_as(SESSION + 1, TIMEOUT_MS),
                Some(0),
                "a new session"
            );
        }
    }
    let expired = matches!(cut, Cut::Expire(_));
    h.serve_all();
    let case = format!("{order:?} split {split} batched {batched} {cut:?}");
    check(&mut h, &mut held, log_from, expired, &case);
    // A change to /a fires the one-shots; a persistent watch stays on the server.
    h.change(EventType::NodeDataChanged, "/a");
    h.change(EventType::NodeChildrenChanged, "/a");
    h.serve_all();
    let case = format!("{case}, then a change");
    check(&mut h, &mut held, log_from, expired, &case);
    served
}

fn check(h: &mut Harness, held: &mut Held, log_from: usize, expired: bool, case: &str) {
    // Every request answered exactly once (a oneshot cannot carry two): an answer is there.
    for (ev, mut r) in held.replies.drain(..) {
        match r.answer() {
            Ok(_) => held.persist_ok |= ev == Event::Persist,
            Err(Error::Code(ErrorCode::ConnectionLoss)) => {}
            Err(Error::Code(ErrorCode::SessionExpired)) if expired => {}
            Err(e) => panic!("{case}: {ev:?} answered {e}"),
        }
    }
    for mut rx in held.auth_replies.drain(..) {
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
    let mut live_data = held.old_a.as_mut().is_some_and(Watch::is_live);
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
    if expired {
        // The old session's one-shot watches ended with it; none is on the new session.
        assert!(!live_data && !live_child && !held.old_b.is_live(), "{case}");
        assert!(!h.watches.data.contains_key("/b"), "{case}: /b revived");
    } else {
        assert!(held.old_b.is_live(), "{case}: the watch on /b ended");
        assert!(
            h.watches.data.contains_key("/b"),
            "{case}: /b not re-registered"
        );
    }
    let persistent = held.persist_ok || held.old_persistent.is_some();
    if persistent {
        assert_eq!(
            (h.watches.data.get("/a"), h.watches.child.get("/a")),
            (Some(&Mode::Persistent), Some(&Mode::Persistent)),
            "{case}: a persistent watch held on /a is not persistent on the server"
        );
        return;
    }
    assert_eq!(
        h.watches.data.contains_key("/a"),
        live_data,
        "{case}: server data watch on /a vs a live one held (fresh removed or dropped revived)"
    );
    assert_eq!(
        h.watches.child.contains_key("/a"),
        live_child,
        "{case}: server child watch on /a vs a live one held"
    );
}

/// Runs every interleaving of `events`; returns how many.
fn enumerate(events: &[Event]) -> usize {
    let mut cases = 0;
    for order in permutations(events) {
        for split in 0..=order.len() {
            for batched in [false, true] {
                run(&order, split, batched, Cut::None);
                run(&order, split, batched, Cut::Handshake);
                cases += 2;
                for cut in [Cut::After, Cut::Expire] {
                    for k in 0.. {
                        let served = run(&order, split, batched, cut(k));
                        cases += 1;
                        if served < k {
                            break;
                        }
                    }
                }
            }
        }
    }
    cases
}

/// Every order of the five events, split at every point between the outage and the new
/// connection, with the server answering each at once or all at the end, and the new
/// connection cut at every step of its sequence (auth, SetWatches, each request) or before
/// its handshake.
#[test]
fn every_order_of_requests_removals_and_registrations_around_a_reconnect() {
    let cases = enumerate(&EVENTS);
    // 120 orders x 6 splits x 2 reply modes x (2 + the cut points of each).
    assert!(cases > 120 * 6 * 2 * 3, "{cases}");
    println!("{cases} interleavings");
}

/// The same with a persistent watch added, and one dropped, on the path of the one-shots:
/// the server's watch on the path stays persistent while one is held, and holds no more than
/// the one-shots need once none is.
#[test]
fn every_order_of_persistent_and_one_shot_watches_on_one_path_around_a_reconnect() {
    let cases: usize = MIXED_EVENTS.iter().map(|e| enumerate(e)).sum();
    println!("{cases} interleavings");
}
