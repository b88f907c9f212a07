//! DistributedQueue as Curator's DistributedIdQueue against a real ZooKeeper 3.8 server:
//! `queue-|<id>|<seq>` names (`/` and `|` in an id as `_`), FIFO order across ids, and
//! `remove(id)` deleting every waiting item of that id, but not one a lock-safe consumer holds.

mod recipes_support;

use recipes_support::{children, client, shared, soon, unique};
use zk_recipes::{DistributedQueue, QueueOrder};
use zk_session::Client;

async fn id_queue(c: &Client, path: &str, lock_safe: bool) -> DistributedQueue {
    let builder = DistributedQueue::builder(c.clone(), path).order(QueueOrder::Id);
    let builder = if lock_safe {
        builder.lock_safe(format!("{path}-locks"))
    } else {
        builder
    };
    builder.start().await.unwrap()
}

async fn take_text(q: &DistributedQueue) -> String {
    let item = soon("an item", q.take()).await.unwrap();
    let text = String::from_utf8_lossy(&item.items()[0]).into_owned();
    item.done().await.unwrap();
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn items_named_by_id_taken_in_order_and_removed_by_id() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("queue-id");
    let q = id_queue(&c, &path, false).await;
    q.put_with_id(b"one", "zeta").await.unwrap();
    q.put_with_id(b"two", "a/b|c").await.unwrap();
    q.put(b"three").await.unwrap();
    q.put_with_id(b"four", "zeta").await.unwrap();
    q.put_with_id(b"five", "alpha").await.unwrap();
    q.put_with_id(b"six", "zeta").await.unwrap();

    let mut names = children(&admin, &path).await;
    names.sort_by_key(|n| n[n.len() - 10..].to_owned());
    let heads: Vec<&str> = names.iter().map(|n| &n[..n.len() - 10]).collect();
    assert_eq!(
        heads,
        [
            "queue-|zeta|",
            "queue-|a_b_c|",
            "queue-",
            "queue-|zeta|",
            "queue-|alpha|",
            "queue-|zeta|"
        ]
    );

    assert_eq!(q.remove("zeta").await.unwrap(), 3);
    assert_eq!(q.remove("zeta").await.unwrap(), 0, "nothing left of it");
    assert_eq!(q.remove("nobody").await.unwrap(), 0);
    // Not lexical ("queue-|a_b_c|" < "queue-|alpha|" < "queue-0…"): by sequence.
    assert_eq!(take_text(&q).await, "two");
    assert_eq!(take_text(&q).await, "three");
    q.put_with_id(b"seven", "a/b|c").await.unwrap();
    assert_eq!(q.remove("a/b|c").await.unwrap(), 1, "found as written");
    assert_eq!(take_text(&q).await, "five");
    assert!(q.try_take().await.unwrap().is_none());
    assert!(children(&admin, &path).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_leaves_an_item_a_lock_safe_consumer_holds() {
    let (c, other) = (client(&shared()).await, client(&shared()).await);
    let path = unique("queue-id-locked");
    let producer = id_queue(&c, &path, true).await;
    let consumer = id_queue(&other, &path, true).await;
    for text in ["held", "waiting-1", "waiting-2"] {
        producer.put_with_id(text.as_bytes(), "job").await.unwrap();
    }
    let held = soon("an item", consumer.take()).await.unwrap();
    assert_eq!(&held.items()[0][..], b"held");
    assert_eq!(producer.remove("job").await.unwrap(), 2);
    assert!(producer.try_take().await.unwrap().is_none());
    held.done().await.unwrap();
    assert!(children(&c, &path).await.is_empty());
    assert!(children(&c, &format!("{path}-locks")).await.is_empty());
}
