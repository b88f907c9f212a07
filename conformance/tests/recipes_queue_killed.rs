//! A lock-safe DistributedQueue consumer killed mid-item, in a process of its own (ours:
//! the `queue_consumer` program; Curator 5.4's, conformance/java/CuratorQueue.java): the item
//! stays in the queue while its lock stands, and once the killed consumer's session goes,
//! a surviving consumer of ours takes it, exactly once more, and nothing is lost.
//! (A session expiry mid-item, in one process, is in recipes_queue.rs.)

mod recipes_support;

use std::{process::Command, sync::OnceLock, time::Duration};

use conformance::peers::JavaProgram;
use recipes_support::{children, client, compile_curator_peer, peer::Peer, shared, soon, unique};
use zk_recipes::DistributedQueue;
use zk_session::Client;

fn curator() -> &'static JavaProgram {
    static PROGRAM: OnceLock<JavaProgram> = OnceLock::new();
    PROGRAM.get_or_init(|| compile_curator_peer("CuratorQueue.java", "zk-recipes-queue-killed"))
}

/// The queue's item znodes (Curator's `queue-` names) and its locks.
async fn layout(admin: &Client, path: &str, locks: &str) -> (Vec<String>, Vec<String>) {
    let items = children(admin, path)
        .await
        .into_iter()
        .filter(|n| n.starts_with("queue-"))
        .collect();
    (items, children(admin, locks).await)
}

async fn text_of(item: &zk_recipes::QueueItem) -> String {
    String::from_utf8_lossy(&item.items()[0]).into_owned()
}

/// Puts `first` and `second`, starts the consumer `cmd` (which takes `first` and is killed
/// holding it), and checks that the survivor gets `second` at once and `first` once the
/// killed consumer's session is gone: each exactly once, nothing left.
async fn killed_mid_item(label: &str, cmd: Command, path: &str, locks: &str) {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let survivor = DistributedQueue::builder(c, path)
        .lock_safe(locks)
        .start()
        .await
        .unwrap();
    survivor.put(b"first").await.unwrap();
    survivor.put(b"second").await.unwrap();
    let mut victim = Peer::start(label, cmd).await;
    assert_eq!(victim.answer("HELD").await, "first");
    let (items, held) = layout(&admin, path, locks).await;
    assert_eq!(
        (items.len(), held.len()),
        (2, 1),
        "taken, still in the queue, locked"
    );

    let second = survivor.take().await.unwrap();
    assert_eq!(
        text_of(&second).await,
        "second",
        "the locked item is skipped"
    );
    second.done().await.unwrap();
    assert!(
        survivor.try_take().await.unwrap().is_none(),
        "the killed consumer's item is locked while its session lives"
    );

    victim.kill9();
    let again = soon("the killed consumer's item", survivor.take())
        .await
        .unwrap();
    assert_eq!(text_of(&again).await, "first");
    assert!(again.is_held());
    again.done().await.unwrap();
    // Exactly once more: nothing else comes, and nothing is left.
    assert!(survivor
        .take_timeout(Duration::from_millis(300))
        .await
        .unwrap()
        .is_none());
    assert_eq!(layout(&admin, path, locks).await, (vec![], vec![]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_consumer_killed_mid_item_leaves_it_to_a_survivor_once() {
    let path = unique("queue-killed-ours");
    let locks = format!("{path}-locks");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_queue_consumer"));
    cmd.args([&shared(), &path, &locks, "2000"]);
    killed_mid_item("queue_consumer", cmd, &path, &locks).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_curator_consumer_killed_mid_item_leaves_it_to_ours_once() {
    let path = unique("queue-killed-curator");
    let locks = format!("{path}-locks");
    let mut cmd = curator().command();
    cmd.args(["hold", &shared(), &path, &locks]);
    killed_mid_item("Curator", cmd, &path, &locks).await;
}
