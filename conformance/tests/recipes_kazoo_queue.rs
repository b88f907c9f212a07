//! KazooQueue and KazooLockingQueue beside kazoo 2.11's `Queue` and `LockingQueue` (in the
//! project's venv; conformance/python/kazoo_queue.py) on the same znodes of a real server:
//! entries put by either side are taken by the other, bytes and priority order equal; a
//! kazoo consumer and ours on one LockingQueue take every entry exactly once; a kazoo
//! consumer SIGKILLed while it holds an entry leaves it, with its session, to ours. Also
//! the layout (names, the lock's data) and why Curator's and the `qn-` queues cannot share
//! a path with kazoo's.

mod recipes_support;

use std::{collections::BTreeMap, path::Path, sync::OnceLock, time::Duration};

use conformance::peers::KazooProgram;
use recipes_support::{children, client, peer::Peer, shared, soon, unique, SOON};
use zk_recipes::{
    DistributedQueue, KazooLockingQueue, KazooQueue, RecipeError, SimpleDistributedQueue,
};
use zk_session::Client;

fn kazoo() -> &'static KazooProgram {
    static PROGRAM: OnceLock<Result<KazooProgram, String>> = OnceLock::new();
    let program = PROGRAM.get_or_init(|| {
        KazooProgram::prepare(Path::new(env!("CARGO_MANIFEST_DIR")).join("python/kazoo_queue.py"))
    });
    match program {
        Ok(p) => p,
        Err(e) => panic!("kazoo interop cannot run: {e}"),
    }
}

async fn kazoo_peer(label: &str, args: &[String]) -> Peer {
    let mut cmd = kazoo().command();
    cmd.args(&args[..1]).arg(shared()).args(&args[1..]);
    Peer::start(label, cmd).await
}

/// Runs a kazoo producer to its end.
async fn kazoo_puts(args: &[String]) {
    let mut peer = kazoo_peer("kazoo producer", args).await;
    peer.expect("PUT").await;
    peer.finish().await;
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// What kazoo's and our priorities give, lowest first, then oldest: the order both sides
/// must take `items` (priority, text) in.
fn kazoo_order(items: &[(u16, &str)]) -> Vec<String> {
    let mut sorted: Vec<(u16, usize, &str)> = items
        .iter()
        .enumerate()
        .map(|(i, (p, t))| (*p, i, *t))
        .collect();
    sorted.sort();
    sorted.into_iter().map(|(_, _, t)| t.to_owned()).collect()
}

// Not ASCII, an empty entry, a space: bytes arrive as they were put.
const ITEMS: [(u16, &str); 6] = [
    (100, "default-1"),
    (7, "seven ünïcödé"),
    (999, "last"),
    (0, "first"),
    (100, ""),
    (7, "seven-b"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kazoo_puts_we_get_in_its_order() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("kazoo-queue-in");
    let mut args = strings(&["put", &path]);
    args.extend(ITEMS.iter().map(|(p, t)| format!("{p}:{t}")));
    kazoo_puts(&args).await;
    // kazoo's layout: entry-PPP-<seq10>, raw bytes.
    let names = children(&admin, &path).await;
    assert_eq!(names.len(), ITEMS.len());
    for n in &names {
        assert!(
            n.starts_with("entry-") && n.len() == "entry-100-".len() + 10,
            "{n}"
        );
    }
    let q = KazooQueue::builder(c, &path).start().await.unwrap();
    let mut got = Vec::new();
    while let Some(data) = q.get().await.unwrap() {
        got.push(String::from_utf8(data.to_vec()).unwrap());
    }
    assert_eq!(got, kazoo_order(&ITEMS));
    assert!(children(&admin, &path).await.is_empty(), "nothing left");
    q.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn we_put_kazoo_gets_in_our_order() {
    let c = client(&shared()).await;
    let path = unique("kazoo-queue-out");
    let q = KazooQueue::builder(c, &path).start().await.unwrap();
    for (p, t) in ITEMS {
        if p == 100 {
            q.put(t.as_bytes()).await.unwrap();
        } else {
            q.put_with_priority(t.as_bytes(), p).await.unwrap();
        }
    }
    assert!(matches!(
        q.put_with_priority(b"x", 1000).await,
        Err(RecipeError::InvalidArgument(_))
    ));
    let mut peer = kazoo_peer("kazoo getter", &strings(&["get", &path])).await;
    peer.expect("EMPTY").await;
    let got: Vec<String> = peer
        .stdout
        .snapshot()
        .iter()
        .filter_map(|l| l.strip_prefix("GOT ").or((l == "GOT").then_some("")))
        .map(str::to_owned)
        .collect();
    peer.finish().await;
    assert_eq!(got, kazoo_order(&ITEMS));
    assert!(q.get().await.unwrap().is_none());
}

/// The entries under a LockingQueue's `entries` and its `taken` locks.
async fn locking_layout(admin: &Client, path: &str) -> (Vec<String>, Vec<String>) {
    (
        children(admin, &format!("{path}/entries")).await,
        children(admin, &format!("{path}/taken")).await,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kazoo_consumer_and_ours_take_every_entry_exactly_once() {
    const EACH: usize = 40;
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("kazoo-locking");
    let ours = KazooLockingQueue::builder(c, &path).start().await.unwrap();
    // kazoo puts half in one transaction, we put the other half in one.
    let mut args = strings(&["lput", &path, "100"]);
    args.extend((0..EACH).map(|i| format!("kazoo-{i}")));
    kazoo_puts(&args).await;
    let ours_items: Vec<String> = (0..EACH).map(|i| format!("rust-{i}")).collect();
    ours.put_all(&ours_items, 100).await.unwrap();
    assert_eq!(locking_layout(&admin, &path).await.0.len(), 2 * EACH);

    let mut consumer = kazoo_peer("kazoo consumer", &strings(&["lconsume", &path])).await;
    let mut mine = Vec::new();
    let deadline = tokio::time::Instant::now() + SOON;
    let theirs = loop {
        if let Some(entry) = ours.get_timeout(Duration::from_millis(200)).await.unwrap() {
            assert!(entry.holds_lock().await.unwrap());
            // kazoo's layout: the lock holds our 32-hex id.
            let (data, stat) = admin
                .get_data(&format!("{path}/taken/{}", entry.name()))
                .await
                .unwrap();
            assert_eq!(&data[..], ours.id().as_bytes());
            assert_eq!(data.len(), 32);
            assert_ne!(stat.ephemeral_owner, 0);
            mine.push(String::from_utf8(entry.data().to_vec()).unwrap());
            entry.consume().await.unwrap();
        }
        let theirs: Vec<String> = consumer
            .stdout
            .snapshot()
            .iter()
            .filter_map(|l| l.strip_prefix("TOOK ").map(str::to_owned))
            .collect();
        if mine.len() + theirs.len() >= 2 * EACH || tokio::time::Instant::now() > deadline {
            break theirs;
        }
    };
    consumer.send("stop").await;
    consumer.expect("STOPPED").await;
    consumer.finish().await;
    let mut count: BTreeMap<&String, usize> = BTreeMap::new();
    for item in mine.iter().chain(&theirs) {
        *count.entry(item).or_default() += 1;
    }
    let twice: Vec<_> = count.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "delivered twice: {twice:?}");
    assert_eq!(
        count.len(),
        2 * EACH,
        "lost: ours {mine:?}, kazoo's {theirs:?}"
    );
    assert!(
        !mine.is_empty() && !theirs.is_empty(),
        "both consumers took part: ours {}, kazoo's {}",
        mine.len(),
        theirs.len()
    );
    assert_eq!(
        locking_layout(&admin, &path).await,
        (vec![], vec![]),
        "nothing left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_kazoo_consumer_leaves_its_entry_to_ours() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("kazoo-killed");
    let ours = KazooLockingQueue::builder(c, &path).start().await.unwrap();
    ours.put_with_priority(b"precious", 3).await.unwrap();
    ours.put(b"later").await.unwrap();
    let mut holder = kazoo_peer("kazoo holder", &strings(&["lhold", &path, "2"])).await;
    let held = holder.answer("HELD").await;
    let (text, kazoo_id) = held.split_once(' ').unwrap();
    assert_eq!(text, "precious", "kazoo takes the lowest priority first");
    let taken = children(&admin, &format!("{path}/taken")).await;
    assert_eq!(taken.len(), 1);
    let lock = format!("{path}/taken/{}", taken[0]);
    assert_eq!(
        &admin.get_data(&lock).await.unwrap().0[..],
        kazoo_id.as_bytes()
    );
    // Ours skips the entry kazoo holds.
    let first = ours.get().await.unwrap();
    assert_eq!(&first.data()[..], b"later");
    assert_eq!(first.priority(), 100);
    first.consume().await.unwrap();
    assert!(ours.try_get().await.unwrap().is_none(), "locked by kazoo");

    holder.kill9();
    // The lock goes with kazoo's session; the waiting get takes the entry then.
    let entry = soon("the killed consumer's entry", ours.get())
        .await
        .unwrap();
    assert_eq!(&entry.data()[..], b"precious");
    assert_eq!(entry.priority(), 3);
    // A repeated get returns the entry held, as kazoo's does.
    let again = ours.get().await.unwrap();
    assert_eq!(again.name(), entry.name());
    entry.consume().await.unwrap();
    assert!(!again.is_held(), "consumed through the other handle");
    assert!(matches!(again.consume().await, Err(RecipeError::NotHeld)));
    assert_eq!(locking_layout(&admin, &path).await, (vec![], vec![]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kazoo_consumer_waits_while_ours_holds_and_takes_after_release() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("kazoo-release");
    let ours = KazooLockingQueue::builder(c, &path).start().await.unwrap();
    ours.put(b"shared").await.unwrap();
    let entry = ours.get().await.unwrap();
    let mut consumer = kazoo_peer("kazoo consumer", &strings(&["lconsume", &path])).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!consumer.has_said("TOOK"), "kazoo took an entry we hold");
    entry.release().await.unwrap();
    assert_eq!(consumer.answer("TOOK").await, "shared");
    consumer.send("stop").await;
    consumer.expect("STOPPED").await;
    consumer.finish().await;
    assert_eq!(locking_layout(&admin, &path).await, (vec![], vec![]));
}

/// Why the Curator and `qn-` queues cannot share a path with kazoo's Queue: each side's
/// consumer skips the other's names (so nothing is delivered across), and kazoo's Queue
/// would take theirs as its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curators_and_the_qn_queue_do_not_mix_with_kazoos() {
    let c = client(&shared()).await;
    let path = unique("kazoo-mix");
    let kq = KazooQueue::builder(c.clone(), &path).start().await.unwrap();
    let dq = DistributedQueue::builder(c.clone(), &path)
        .start()
        .await
        .unwrap();
    let sq = SimpleDistributedQueue::builder(c.clone(), &path)
        .start()
        .await
        .unwrap();
    kq.put(b"kazoo").await.unwrap();
    dq.put(b"curator").await.unwrap();
    sq.offer(b"qn").await.unwrap();
    assert_eq!(
        &dq.try_take().await.unwrap().unwrap().items()[0][..],
        b"curator"
    );
    assert!(
        dq.try_take().await.unwrap().is_none(),
        "Curator's skips the rest"
    );
    assert_eq!(&sq.poll().await.unwrap().unwrap()[..], b"qn");
    assert!(
        sq.poll().await.unwrap().is_none(),
        "the qn- queue skips entry-"
    );
    // kazoo's own Queue takes every child as an entry: a qn- item put beside its entries.
    sq.offer(b"qn-2").await.unwrap();
    let mut peer = kazoo_peer("kazoo getter", &strings(&["get", &path])).await;
    peer.expect("EMPTY").await;
    let got = peer.stdout.snapshot();
    peer.finish().await;
    assert!(got.contains(&"GOT kazoo".to_owned()), "{got:?}");
    assert!(
        got.contains(&"GOT qn-2".to_owned()),
        "kazoo took the qn- item: {got:?}"
    );
    assert!(kq.get().await.unwrap().is_none());
}
