//! SetPartitioner against a real ZooKeeper 3.8 server: kazoo's layout (party and lock node
//! names, data), the set split without overlap and rebalanced when a member leaves, and a
//! churn test whose checker records every ownership interval (members killed, sessions
//! expired, members joining) and asserts that no item is ever owned by two members at once
//! and that every item is owned again once the churn stops.

mod recipes_partitioner_support;
mod recipes_support;

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use recipes_partitioner_support::kazoo_slice;
use recipes_support::{
    children, client, cut_and_reconnect, cut_off, expire_session, let_back_renewed, proxied,
    session_of, shared, soon, unique,
};
use tokio::task::JoinHandle;
use zk_recipes::{PartitionStatus, RecipeError, ReleaseMode, SetPartitioner};
use zk_session::Client;

const SETTLE: Duration = Duration::from_millis(400);

fn set(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("shard-{i:02}")).collect()
}

async fn member(c: &Client, path: &str, id: &str, items: &[String]) -> SetPartitioner {
    SetPartitioner::builder(c.clone(), path)
        .items(items.iter().cloned())
        .identifier(id)
        .time_boundary(SETTLE)
        .release_mode(ReleaseMode::Immediately)
        .start()
        .await
        .unwrap()
}

async fn acquired(p: &SetPartitioner) -> Vec<String> {
    let s = soon(
        "acquired",
        p.status().wait_for(|s| s.is_acquired() || s.has_ended()),
    )
    .await
    .unwrap();
    assert!(s.is_acquired(), "{s:?}");
    s.items().to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_split_the_set_in_kazoos_layout() {
    let path = unique("partition-layout");
    let items = set(7);
    let ids = ["m-b", "m-a", "m-c"];
    let mut members = Vec::new();
    for id in ids {
        let c = client(&shared()).await;
        members.push((member(&c, &path, id, &items).await, c));
    }
    let mut all = Vec::new();
    for (p, _) in &members {
        let got = acquired(p).await;
        assert_eq!(got, kazoo_slice(&items, &ids, p.identifier()));
        all.extend(got);
    }
    all.sort();
    assert_eq!(all, items, "each item exactly once");

    let admin = client(&shared()).await;
    let party = children(&admin, &format!("{path}/party")).await;
    assert_eq!(party.len(), 3);
    for name in &party {
        let (uuid, id) = name.split_once('-').unwrap();
        assert_eq!(uuid.len(), 32, "{name}");
        assert!(uuid.bytes().all(|b| b.is_ascii_hexdigit()), "{name}");
        let (data, _) = admin
            .get_data(&format!("{path}/party/{name}"))
            .await
            .unwrap();
        assert_eq!(&data[..], id.as_bytes());
    }
    for item in &items {
        let locks = children(&admin, &format!("{path}/locks/{item}")).await;
        assert_eq!(locks.len(), 1, "{item}: {locks:?}");
        let (uuid, seq) = locks[0].split_once("__lock__").unwrap();
        assert_eq!((uuid.len(), seq.len()), (32, 10), "{}", locks[0]);
    }

    // A member leaving: the others release and split the whole set between them.
    let (gone, _c) = members.remove(1);
    gone.close().await.unwrap();
    let left: Vec<&str> = members.iter().map(|(p, _)| p.identifier()).collect();
    soon("a rebalance over two members", async {
        loop {
            let mut all = Vec::new();
            let mut ok = true;
            for (p, _) in &members {
                let now = p.status().get();
                ok &= now.items() == kazoo_slice(&items, &left, p.identifier());
                all.extend(now.items().to_vec());
            }
            all.sort();
            if ok && all == items {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(children(&admin, &format!("{path}/party")).await.len() == 2);
    for (p, _) in members {
        p.close().await.unwrap();
    }
    assert!(children(&admin, &format!("{path}/party")).await.is_empty());
    for item in &items {
        assert!(children(&admin, &format!("{path}/locks/{item}"))
            .await
            .is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_waits_for_release_set_and_keeps_the_next_owner_out() {
    let path = unique("partition-release");
    let items = set(4);
    let (a_client, b_client) = (client(&shared()).await, client(&shared()).await);
    let a = SetPartitioner::builder(a_client.clone(), &path)
        .items(items.clone())
        .identifier("a")
        .time_boundary(SETTLE)
        .start()
        .await
        .unwrap();
    assert_eq!(acquired(&a).await, items);
    let b = member(&b_client, &path, "b", &items).await;
    soon(
        "a asked to release",
        a.status()
            .wait_for(|s| matches!(s, PartitionStatus::Release)),
    )
    .await
    .unwrap();
    // a has not released: b waits on a's lock of b's slice.
    tokio::time::sleep(SETTLE * 3).await;
    assert!(
        !b.status().get().is_acquired(),
        "b took items a still holds"
    );
    a.release_set().await.unwrap();
    assert_eq!(acquired(&b).await, kazoo_slice(&items, &["a", "b"], "b"));
    assert_eq!(acquired(&a).await, kazoo_slice(&items, &["a", "b"], "a"));
    a.close().await.unwrap();
    b.close().await.unwrap();
}

/// The ownership intervals every member reported, per item.
#[derive(Default)]
struct Checker {
    open: BTreeMap<String, (String, Instant)>,
    closed: BTreeMap<String, Vec<(String, Instant, Instant)>>,
    overlaps: Vec<String>,
}

impl Checker {
    fn start(&mut self, who: &str, items: &[String]) {
        let now = Instant::now();
        for item in items {
            if let Some((other, since)) = self.open.get(item) {
                self.overlaps.push(format!(
                    "{item}: {who} acquired it while {other} held it since {:?}",
                    since.elapsed()
                ));
            }
            self.open.insert(item.clone(), (who.to_owned(), now));
        }
    }

    fn end(&mut self, who: &str) {
        let now = Instant::now();
        let mine: Vec<String> = (self.open.iter())
            .filter(|(_, (w, _))| w == who)
            .map(|(i, _)| i.clone())
            .collect();
        for item in mine {
            let (w, since) = self.open.remove(&item).unwrap();
            self.closed.entry(item).or_default().push((w, since, now));
        }
    }

    fn owned(&self) -> BTreeSet<String> {
        self.open.keys().cloned().collect()
    }

    fn intervals(&self) -> usize {
        self.closed.values().map(Vec::len).sum::<usize>() + self.open.len()
    }
}

/// Follows a member as its user would: records its items on Acquired, and on Release
/// records their end before calling `release_set` (so the lock is given up only after).
fn drive(p: Arc<SetPartitioner>, who: String, checker: Arc<Mutex<Checker>>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut status = p.status();
        let mut now = status.get();
        loop {
            match &now {
                PartitionStatus::Acquired(items) => checker.lock().unwrap().start(&who, items),
                PartitionStatus::Release => {
                    checker.lock().unwrap().end(&who);
                    let _ = p.release_set().await;
                }
                s if s.has_ended() => {
                    checker.lock().unwrap().end(&who);
                    return;
                }
                _ => {}
            }
            now = match status.changed().await {
                Ok(s) => s,
                Err(_) => return,
            };
        }
    })
}

struct Member {
    who: String,
    proxy: recipes_support::Proxy,
    client: Client,
    p: Arc<SetPartitioner>,
    driver: JoinHandle<()>,
}

async fn join(path: &str, who: String, items: &[String], checker: &Arc<Mutex<Checker>>) -> Member {
    let (proxy, c) = proxied().await;
    let p = SetPartitioner::builder(c.clone(), path)
        .items(items.iter().cloned())
        .identifier(who.clone())
        .time_boundary(SETTLE)
        .start()
        .await
        .unwrap();
    let p = Arc::new(p);
    let driver = drive(p.clone(), who.clone(), checker.clone());
    Member {
        who,
        proxy,
        client: c,
        p,
        driver,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_churn_no_item_has_two_owners_and_all_are_owned_again() {
    let path = unique("partition-churn");
    let items = set(12);
    let checker = Arc::new(Mutex::new(Checker::default()));
    let mut members = Vec::new();
    let mut next = 0;
    for _ in 0..4 {
        members.push(join(&path, format!("w{next}"), &items, &checker).await);
        next += 1;
    }
    let all: BTreeSet<String> = items.iter().cloned().collect();
    let covered = || async {
        soon("every item owned", async {
            while checker.lock().unwrap().owned() != all {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
    };
    covered().await;
    for step in 0..6 {
        match step % 3 {
            // Killed: its user stops at once (the interval ends), its process goes.
            0 => {
                let m = members.remove(0);
                m.driver.abort();
                checker.lock().unwrap().end(&m.who);
                m.proxy.partition(true);
                drop(m.p);
                m.client.close().await.ok();
                members.push(join(&path, format!("w{next}"), &items, &checker).await);
                next += 1;
            }
            // Expired: cut off, its session closed by the test kit, and kept away long
            // enough for the others to settle and take its items, then let back.
            1 => {
                let m = &members[members.len() / 2];
                let old = session_of(&m.client);
                cut_off(&m.proxy, &m.client).await;
                expire_session(&shared(), &m.client).await;
                tokio::time::sleep(SETTLE * 4).await;
                let_back_renewed(&m.proxy, &m.client, old).await;
            }
            // A newcomer, while the party may still be settling.
            _ => {
                members.push(join(&path, format!("w{next}"), &items, &checker).await);
                next += 1;
            }
        }
        tokio::time::sleep(SETTLE / 2).await;
    }
    covered().await;
    let checker = checker.lock().unwrap();
    println!(
        "{} ownership intervals over {} items, {} members at the end",
        checker.intervals(),
        items.len(),
        members.len()
    );
    assert!(checker.overlaps.is_empty(), "{:#?}", checker.overlaps);
    for (item, spans) in &checker.closed {
        let mut spans = spans.clone();
        spans.sort_by_key(|s| s.1);
        for w in spans.windows(2) {
            assert!(
                w[0].2 <= w[1].1,
                "{item}: {} until after {} began",
                w[0].0,
                w[1].0
            );
        }
    }
    assert!(checker.intervals() > items.len(), "the churn moved items");
}

#[test]
fn the_checker_flags_two_owners_at_once() {
    let mut c = Checker::default();
    let items = set(2);
    c.start("a", &items);
    c.start("b", &items[1..]);
    assert_eq!(c.overlaps.len(), 1, "{:?}", c.overlaps);
    assert!(c.overlaps[0].starts_with("shard-01: b acquired it while a held it"));
    c.end("a");
    assert_eq!(c.owned(), BTreeSet::from(["shard-01".to_owned()]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_sharing_an_identifier_still_cover_the_set() {
    // kazoo gives both the first index of the identifier: one slice would go unowned.
    let path = unique("partition-dup");
    let items = set(6);
    let mut members = Vec::new();
    for id in ["same", "same", "other"] {
        let c = client(&shared()).await;
        members.push((member(&c, &path, id, &items).await, c));
    }
    let mut all = Vec::new();
    for (p, _) in &members {
        all.extend(acquired(p).await);
    }
    all.sort();
    assert_eq!(all, items, "each item exactly once");
    for (p, _) in members {
        p.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_lost_while_allocating_does_not_leave_it_stuck() {
    // kazoo #392: a partitioner stuck in ALLOCATING after the connection wavered.
    let path = unique("partition-waver");
    let items = set(3);
    let (proxy, c) = proxied().await;
    let p = SetPartitioner::builder(c.clone(), &path)
        .items(items.clone())
        .identifier("w")
        .time_boundary(Duration::from_millis(800))
        .start()
        .await
        .unwrap();
    cut_and_reconnect(&proxy, &c).await;
    assert_eq!(acquired(&p).await, items);
    // And once acquired: a lost connection means Release, then the items again.
    let mut status = p.status();
    cut_and_reconnect(&proxy, &c).await;
    let now = soon(
        "release after the cut",
        status.wait_for(|s| !s.is_acquired()),
    )
    .await
    .unwrap();
    assert!(matches!(now, PartitionStatus::Release), "{now:?}");
    p.release_set().await.unwrap();
    assert_eq!(acquired(&p).await, items);
    p.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_end_is_a_failure_and_a_bad_item_is_refused() {
    let path = unique("partition-end");
    let c = client(&shared()).await;
    let bad = SetPartitioner::builder(c.clone(), &path)
        .items(["a/b"])
        .start()
        .await;
    assert!(
        matches!(bad, Err(RecipeError::InvalidArgument(_))),
        "{bad:?}"
    );
    let p = member(&c, &path, "m", &set(2)).await;
    acquired(&p).await;
    c.close().await.unwrap();
    let end = soon("the end", p.status().wait_for(|s| s.has_ended()))
        .await
        .unwrap();
    assert!(
        matches!(end, PartitionStatus::Failed(RecipeError::Lost(_))),
        "{end:?}"
    );
    assert!(p.items().is_empty());
}
