//! SimpleDistributedQueue (ZooKeeper's `qn-` recipe) against a real ZooKeeper 3.8 server:
//! names and raw bytes, FIFO order, peek/poll/take/take_timeout, the queue's container made
//! again when reaped, an offer or take whose reply is lost (neither doubled nor lost),
//! listings per batch, every await point of a take swept for cancellation, and Curator 5.4's
//! SimpleDistributedQueue (conformance/java/CuratorSimpleQueue.java) on the same znodes.

mod recipes_support;

use std::{collections::BTreeSet, sync::OnceLock, time::Duration};

use conformance::{
    peers::{self, JavaProgram},
    sweep::{poll_then_drop, settle, sweep, SweepPlan},
};
use recipes_support::{
    children, client, compile_curator_peer, expire_and_renew, proxied, shared, soon, unique,
};
use zk_recipes::{QueueStatus, RecipeError, SimpleDistributedQueue};
use zk_session::{Client, OpCode, Version};

async fn queue(c: &Client, path: &str) -> SimpleDistributedQueue {
    SimpleDistributedQueue::builder(c.clone(), path)
        .start()
        .await
        .unwrap()
}

/// The queue's item znodes (`qn-` names only), sorted.
async fn items_in(c: &Client, path: &str) -> Vec<String> {
    let mut names: Vec<String> = children(c, path)
        .await
        .into_iter()
        .filter(|n| n.starts_with("qn-"))
        .collect();
    names.sort();
    names
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qn_items_of_raw_bytes_taken_in_order_then_closed() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = format!("{}/jobs", unique("squeue-fifo"));
    let q = queue(&c, &path).await;
    assert_eq!(q.status().get(), QueueStatus::Running);
    assert!(q.peek().await.unwrap().is_none(), "no queue yet: empty");
    assert!(q.poll().await.unwrap().is_none());
    for i in 0..5 {
        q.offer(format!("job-{i}").as_bytes()).await.unwrap();
    }
    q.offer(b"").await.unwrap();
    let names = items_in(&admin, &path).await;
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(
        names.iter().all(|n| n.len() == "qn-".len() + 10),
        "{names:?}"
    );
    let (data, stat) = admin
        .get_data(&format!("{path}/{}", names[0]))
        .await
        .unwrap();
    assert_eq!(&data[..], b"job-0", "raw bytes, no envelope");
    assert_eq!(stat.ephemeral_owner, 0, "PERSISTENT_SEQUENTIAL");

    assert_eq!(text(&q.peek().await.unwrap().unwrap()), "job-0");
    assert_eq!(text(&q.poll().await.unwrap().unwrap()), "job-0");
    assert_eq!(text(&q.peek().await.unwrap().unwrap()), "job-1");
    for i in 1..5 {
        let item = soon("an item", q.take()).await.unwrap();
        assert_eq!(text(&item), format!("job-{i}"));
    }
    assert_eq!(
        q.take_timeout(Duration::from_secs(5))
            .await
            .unwrap()
            .unwrap()
            .len(),
        0
    );
    assert!(q
        .take_timeout(Duration::from_millis(300))
        .await
        .unwrap()
        .is_none());
    assert!(items_in(&admin, &path).await.is_empty());

    // A take waiting on an empty queue gets the next offer (of another client).
    let other = queue(&admin, &path).await;
    let (taken, ()) = tokio::join!(soon("a waiting take", q.take()), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        other.offer(b"late").await.unwrap();
    });
    assert_eq!(text(&taken.unwrap()), "late");

    let status = q.status();
    q.close().await.unwrap();
    assert_eq!(status.get(), QueueStatus::Closed);
    assert!(
        other.poll().await.unwrap().is_none(),
        "the other queue still serves"
    );
    other.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_queue_znode_is_made_again_as_a_container() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = format!("{}/jobs", unique("squeue-reaped"));
    let q = queue(&c, &path).await;
    q.offer(b"one").await.unwrap();
    assert_eq!(text(&q.take().await.unwrap()), "one");
    // As the server reaps an empty container, with a take waiting on it.
    let waiting = tokio::spawn({
        let c = c.clone();
        let path = path.clone();
        async move { queue(&c, &path).await.take().await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    admin.delete(&path, Version::Any).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    q.offer(b"two").await.unwrap();
    let got = soon("the waiting take", waiting).await.unwrap().unwrap();
    assert_eq!(text(&got), "two");
    // Made again by whoever came first; an offer to a missing queue makes it too.
    admin.delete(&path, Version::Any).await.unwrap();
    q.offer(b"three").await.unwrap();
    assert_eq!(text(&q.poll().await.unwrap().unwrap()), "three");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offer_or_take_whose_reply_is_lost_is_neither_doubled_nor_lost() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("squeue-lost-reply");
    let q = queue(&c, &path).await;
    proxy.cut_reply(OpCode::Multi, "");
    q.offer(b"once").await.unwrap();
    assert_eq!(items_in(&admin, &path).await.len(), 1, "not doubled");
    q.offer(b"twice").await.unwrap();

    proxy.cut_reply(OpCode::Multi, "");
    assert_eq!(
        text(&soon("take", q.take()).await.unwrap()),
        "once",
        "not lost"
    );
    assert_eq!(items_in(&admin, &path).await.len(), 1);
    assert_eq!(text(&q.poll().await.unwrap().unwrap()), "twice");
    assert!(q.poll().await.unwrap().is_none());
    assert!(children(&admin, &path).await.is_empty(), "no marker left");
}

/// A take waiting across a session expiry (its watch gone with the old session) goes on with
/// the new session and gets the next item; an offer after the expiry works too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_take_waits_on_across_a_session_expiry() {
    let (proxy, c) = proxied().await;
    let producer = client(&shared()).await;
    let path = unique("squeue-expiry");
    let q = std::sync::Arc::new(queue(&c, &path).await);
    let waiting = tokio::spawn({
        let q = q.clone();
        async move { q.take().await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (old, new) = expire_and_renew(&proxy, &c).await;
    assert_ne!(old, new);
    queue(&producer, &path).await.offer(b"after").await.unwrap();
    let got = soon("the take after the expiry", waiting).await.unwrap();
    assert_eq!(text(&got.unwrap()), "after");
    q.offer(b"mine").await.unwrap();
    assert_eq!(text(&q.poll().await.unwrap().unwrap()), "mine");
    assert_eq!(q.status().get(), QueueStatus::Running);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_lists_once_per_batch_not_once_per_item() {
    let (proxy, c) = proxied().await;
    let producer = client(&shared()).await;
    let path = unique("squeue-bounded");
    let pq = queue(&producer, &path).await;
    const N: usize = 300;
    for i in 0..N {
        pq.offer(i.to_string().as_bytes()).await.unwrap();
    }
    let q = queue(&c, &path).await;
    let before = proxy.count(OpCode::GetChildren) + proxy.count(OpCode::GetChildren2);
    let mut seen = Vec::new();
    for i in 0..N {
        if i % 50 == 0 {
            pq.offer(b"more").await.unwrap(); // the queue keeps changing
        }
        seen.push(text(&q.take().await.unwrap()));
    }
    let lists = proxy.count(OpCode::GetChildren) + proxy.count(OpCode::GetChildren2) - before;
    assert!(lists <= 3, "{lists} listings for {N} takes");
    let firsts: Vec<usize> = seen.iter().filter_map(|s| s.parse().ok()).collect();
    assert_eq!(firsts, (0..N).collect::<Vec<_>>(), "in order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_take_leaves_the_item_in_the_queue_at_every_await_point() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("squeue-sweep");
    let q = queue(&c, &path).await;
    q.offer(b"precious").await.unwrap();
    let plan = SweepPlan::default();
    let pause = plan.pause;
    let report = sweep(&plan, |k| {
        let (q, admin, path) = (&q, admin.clone(), path.clone());
        async move {
            if let Some(item) = poll_then_drop(q.take(), k, pause).await {
                let item = item.map_err(|e| e.to_string())?;
                assert_eq!(&item[..], b"precious");
                q.offer(&item).await.map_err(|e| e.to_string())?;
                return Ok(true);
            }
            settle("the item is back", Duration::from_secs(10), || {
                let (admin, path) = (admin.clone(), path.clone());
                async move {
                    let items = items_in(&admin, &path).await;
                    (items.len() == 1)
                        .then_some(())
                        .ok_or(format!("items {items:?}"))
                }
            })
            .await?;
            Ok(false)
        }
    })
    .await;
    conformance::sweep::assert_swept("SimpleDistributedQueue::take", &report, true);
    assert_eq!(&q.poll().await.unwrap().unwrap()[..], b"precious");
}

/// A take waiting when the client ends says why; a queue cannot start on an ended client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_take_ends_with_the_client() {
    let c = client(&shared()).await;
    let path = unique("squeue-ended");
    let q = std::sync::Arc::new(queue(&c, &path).await);
    let waiting = tokio::spawn({
        let q = q.clone();
        async move { q.take().await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.close().await.unwrap();
    match soon("the take's end", waiting).await.unwrap() {
        Err(RecipeError::Lost(_)) => {}
        other => panic!("{other:?}"),
    }
    assert!(q.status().get().has_ended());
    match SimpleDistributedQueue::builder(c, path).start().await {
        Err(RecipeError::Lost(_)) => {}
        other => panic!("{other:?}"),
    }
}

fn curator() -> &'static JavaProgram {
    static PROGRAM: OnceLock<JavaProgram> = OnceLock::new();
    PROGRAM.get_or_init(|| compile_curator_peer("CuratorSimpleQueue.java", "zk-recipes-squeue"))
}

/// Runs the Curator peer to its end and returns what it printed.
async fn curator_runs(args: Vec<String>) -> String {
    tokio::task::spawn_blocking(move || {
        let mut cmd = curator().command();
        cmd.args(&args);
        peers::run_child(&mut cmd, Duration::from_secs(120))
    })
    .await
    .unwrap()
    .unwrap_or_else(|e| panic!("the Curator peer: {e}"))
}

/// Curator offers, we take; we offer, Curator takes; both take from one queue at once:
/// every item exactly once, each side's in its order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curator_and_we_share_one_queue_each_item_once() {
    const EACH: usize = 30;
    let path = unique("squeue-interop");
    let ours = queue(&client(&shared()).await, &path).await;
    let out = curator_runs(vec![
        "offer".into(),
        shared(),
        path.clone(),
        "curator".into(),
        EACH.to_string(),
    ])
    .await;
    assert!(out.contains(&format!("PUT {EACH}")), "{out}");
    for i in 0..EACH {
        let item = soon("Curator's item", ours.take()).await.unwrap();
        assert_eq!(text(&item), format!("curator-{i}"));
    }

    for i in 0..EACH {
        ours.offer(format!("rust-{i}").as_bytes()).await.unwrap();
    }
    let out = curator_runs(vec![
        "take".into(),
        shared(),
        path.clone(),
        EACH.to_string(),
    ])
    .await;
    let took: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("TOOK "))
        .collect();
    let want: Vec<String> = (0..EACH).map(|i| format!("rust-{i}")).collect();
    assert_eq!(took, want, "{out}");

    // Both consume one queue at once.
    for i in 0..EACH {
        ours.offer(format!("both-{i}").as_bytes()).await.unwrap();
    }
    let half = EACH / 2;
    let theirs = tokio::spawn(curator_runs(vec![
        "take".into(),
        shared(),
        path.clone(),
        half.to_string(),
    ]));
    let mut mine = Vec::new();
    while mine.len() < EACH - half {
        mine.push(text(&soon("an item", ours.take()).await.unwrap()));
    }
    let out = theirs.await.unwrap();
    let theirs: Vec<String> = out
        .lines()
        .filter_map(|l| l.strip_prefix("TOOK ").map(str::to_owned))
        .collect();
    assert_eq!(theirs.len(), half, "{out}");
    let all: BTreeSet<String> = mine.iter().chain(&theirs).cloned().collect();
    assert_eq!(all.len(), EACH, "nothing twice: {mine:?} {theirs:?}");
    assert_eq!(all, (0..EACH).map(|i| format!("both-{i}")).collect());
    assert!(ours.poll().await.unwrap().is_none());
}
