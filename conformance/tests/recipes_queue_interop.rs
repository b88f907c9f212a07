//! zk-recipes' DistributedQueue beside Curator 5.4's (Java 17, Debian's
//! libcurator-recipes-java) on the same znodes of a real server: items put by either side
//! are taken by either side, each exactly once with lock-safe consumers of both, and
//! Curator's priorities are honoured by our consumer.
//!
//! The peer is conformance/java/CuratorQueue.java. Nothing is skipped: when javac or the
//! Curator jars are missing, the tests fail and say what to install.

mod recipes_support;

use std::{collections::BTreeSet, sync::OnceLock, time::Duration};

use conformance::peers::{self, JavaProgram};
use recipes_support::{client, compile_curator_peer, peer::Peer, shared, unique, SOON};
use zk_recipes::{DistributedQueue, QueueOrder};

fn curator() -> &'static JavaProgram {
    static PROGRAM: OnceLock<JavaProgram> = OnceLock::new();
    PROGRAM.get_or_init(|| compile_curator_peer("CuratorQueue.java", "zk-recipes-queue"))
}

/// Runs a Curator producer to its end and returns what it printed.
async fn curator_produces(args: Vec<String>) -> String {
    tokio::task::spawn_blocking(move || {
        let mut cmd = curator().command();
        cmd.args(&args);
        peers::run_child(&mut cmd, Duration::from_secs(120))
    })
    .await
    .unwrap()
    .unwrap_or_else(|e| panic!("the Curator producer: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curator_and_we_produce_and_consume_one_queue_each_item_once() {
    const EACH: usize = 40;
    let path = unique("queue-interop");
    let locks = format!("{path}-locks");
    let ours = DistributedQueue::builder(client(&shared()).await, &path)
        .lock_safe(&locks)
        .start()
        .await
        .unwrap();
    let out = curator_produces(vec![
        "produce".into(),
        shared(),
        path.clone(),
        "curator".into(),
        EACH.to_string(),
    ])
    .await;
    assert!(out.contains(&format!("PUT {EACH}")), "{out}");
    for i in 0..EACH {
        ours.put(format!("rust-{i}").as_bytes()).await.unwrap();
    }

    // Curator's lock-safe consumer and ours take from the same queue at once.
    let mut cmd = curator().command();
    cmd.args(["consume", &shared(), &path, &locks]);
    let consumer = Peer::start("Curator", cmd).await;
    let mut mine = Vec::new();
    let deadline = tokio::time::Instant::now() + SOON;
    let theirs = loop {
        if let Some(item) = ours.take_timeout(Duration::from_millis(200)).await.unwrap() {
            mine.push(String::from_utf8_lossy(&item.items()[0]).into_owned());
            item.done().await.unwrap();
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
    drop(consumer);
    let all: Vec<&String> = mine.iter().chain(&theirs).collect();
    let distinct: BTreeSet<&String> = all.iter().copied().collect();
    assert_eq!(
        all.len(),
        distinct.len(),
        "an item taken twice: ours {mine:?}, Curator's {theirs:?}"
    );
    let want: BTreeSet<String> = (0..EACH)
        .flat_map(|i| [format!("curator-{i}"), format!("rust-{i}")])
        .collect();
    let got: BTreeSet<String> = distinct.into_iter().cloned().collect();
    assert_eq!(
        got,
        want,
        "ours took {}, Curator's {}",
        mine.len(),
        theirs.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curators_priorities_are_ours() {
    let path = unique("queue-interop-prio");
    let out = curator_produces(vec![
        "produce-prio".into(),
        shared(),
        path.clone(),
        "7:seven".into(),
        "-2:minus-two".into(),
        "0:zero".into(),
        "2147483647:max".into(),
        "-2147483648:min".into(),
    ])
    .await;
    assert!(out.contains("PUT 5"), "{out}");
    let q = DistributedQueue::builder(client(&shared()).await, &path)
        .order(QueueOrder::Priority)
        .start()
        .await
        .unwrap();
    let mut got = Vec::new();
    while let Some(item) = q.try_take().await.unwrap() {
        got.push(String::from_utf8_lossy(&item.items()[0]).into_owned());
    }
    assert_eq!(got, ["min", "minus-two", "zero", "seven", "max"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curators_id_queue_and_ours_share_names_order_and_remove() {
    let path = unique("queue-interop-id");
    let out = curator_produces(vec![
        "produce-id".into(),
        shared(),
        path.clone(),
        "a:one".into(),
        "b:two".into(),
        "a:three".into(),
        "x/y:four".into(),
    ])
    .await;
    assert!(out.contains("PUT 4"), "{out}");
    let c = client(&shared()).await;
    let mut names = c.get_children(&path).await.unwrap();
    names.sort_by_key(|n| n[n.len() - 10..].to_owned());
    let heads: Vec<&str> = names.iter().map(|n| &n[..n.len() - 10]).collect();
    assert_eq!(
        heads,
        ["queue-|a|", "queue-|b|", "queue-|a|", "queue-|x_y|"]
    );

    let q = DistributedQueue::builder(c, &path)
        .order(QueueOrder::Id)
        .start()
        .await
        .unwrap();
    assert_eq!(
        q.remove("a").await.unwrap(),
        2,
        "Curator's items by their id"
    );
    let mut got = Vec::new();
    while let Some(item) = q.try_take().await.unwrap() {
        got.push(String::from_utf8_lossy(&item.items()[0]).into_owned());
    }
    assert_eq!(got, ["two", "four"]);

    // Ours, removed by Curator's DistributedIdQueue.
    q.put_with_id(b"r1", "k").await.unwrap();
    q.put_with_id(b"r2", "j").await.unwrap();
    q.put_with_id(b"r3", "k").await.unwrap();
    let out = curator_produces(vec!["remove-id".into(), shared(), path.clone(), "k".into()]).await;
    assert!(out.contains("REMOVED 2"), "{out}");
    let item = q.try_take().await.unwrap().expect("r2 left");
    assert_eq!(&item.items()[0][..], b"r2");
    assert!(q.try_take().await.unwrap().is_none());
}
