//! DistributedQueue as Curator's DistributedIdQueue against a real ZooKeeper 3.8 server:
//! `queue-|<id>|<seq>` names (`/` and `|` in an id as `_`), FIFO order across ids, and
//! `remove(id)` deleting every waiting item of that id, but not one a lock-safe consumer holds;
//! a dropped take or remove, at every await point, leaves every item with its id.

mod recipes_support;

use std::time::Duration;

use conformance::sweep::{assert_swept, poll_then_drop, settle, sweep, SweepPlan};
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

/// The queue's items by id (`-` for none), sorted.
async fn ids_in(c: &Client, path: &str) -> Vec<String> {
    let mut ids: Vec<String> = children(c, path)
        .await
        .iter()
        .map(|n| n.split('|').nth(1).unwrap_or("-").to_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_take_gives_the_item_back_with_its_id() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("queue-id-sweep-take");
    let q = id_queue(&c, &path, false).await;
    q.put_with_id(b"precious", "p").await.unwrap();
    let plan = SweepPlan::default();
    let pause = plan.pause;
    let report = sweep(&plan, |k| {
        let (q, admin, path) = (&q, admin.clone(), path.clone());
        async move {
            if let Some(item) = poll_then_drop(q.take(), k, pause).await {
                let item = item.map_err(|e| e.to_string())?;
                assert_eq!(&item.items()[0][..], b"precious");
                return Ok(true);
            }
            settle(
                "the item is back, with its id",
                Duration::from_secs(10),
                || {
                    let (admin, path) = (admin.clone(), path.clone());
                    async move {
                        let ids = ids_in(&admin, &path).await;
                        (ids == ["p"]).then_some(()).ok_or(format!("ids {ids:?}"))
                    }
                },
            )
            .await?;
            Ok(false)
        }
    })
    .await;
    assert_swept("DistributedQueue::take (id)", &report, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_remove_leaves_other_ids_and_no_lock_at_every_await_point() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    for lock_safe in [false, true] {
        let plan = SweepPlan::default();
        let pause = plan.pause;
        let report = sweep(&plan, |k| {
            // A queue of its own per step: a previous step's item, given back late, is not here.
            let (c, admin) = (c.clone(), admin.clone());
            let path = unique("queue-id-sweep-remove");
            let locks = format!("{path}-locks");
            async move {
                let q = id_queue(&c, &path, lock_safe).await;
                for id in ["x", "y", "x"] {
                    q.put_with_id(id.as_bytes(), id)
                        .await
                        .map_err(|e| e.to_string())?;
                }
                let done = poll_then_drop(q.remove("x"), k, pause).await;
                drop(q);
                if let Some(removed) = done {
                    assert_eq!(removed.map_err(|e| e.to_string())?, 2);
                    assert_eq!(ids_in(&admin, &path).await, ["y"]);
                    return Ok(true);
                }
                settle(
                    "y untouched, x kept its id, no lock",
                    Duration::from_secs(10),
                    || {
                        let (admin, path, locks) = (admin.clone(), path.clone(), locks.clone());
                        async move {
                            let ids = ids_in(&admin, &path).await;
                            let held = if lock_safe {
                                children(&admin, &locks).await
                            } else {
                                vec![]
                            };
                            let xs = ids.iter().filter(|i| *i == "x").count();
                            let ok = held.is_empty()
                                && ids.iter().filter(|i| *i == "y").count() == 1
                                && ids.len() == xs + 1;
                            ok.then_some(())
                                .ok_or(format!("ids {ids:?}, locks {held:?}"))
                        }
                    },
                )
                .await?;
                Ok(false)
            }
        })
        .await;
        assert_swept("DistributedQueue::remove", &report, true);
    }
}
