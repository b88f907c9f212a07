//! DistributedQueue against a real ZooKeeper 3.8 server: Curator's names and envelope, the
//! three orders, lock-safe takes (an item stays, locked, until done; a consumer cut off or
//! expired mid-item leaves it to the next), a put or take whose reply is lost (neither
//! doubled nor lost), listings bounded per batch rather than per item, and every await point
//! of a take swept for cancellation.

mod recipes_support;

use std::time::{Duration, SystemTime};

use conformance::sweep::{poll_then_drop, settle, sweep, SweepPlan};
use recipes_support::{children, client, expire_and_renew, proxied, shared, soon, unique};
use zk_recipes::{DistributedQueue, LostReason, QueueOrder, RecipeError};
use zk_session::{Client, OpCode};

async fn queue(c: &Client, path: &str) -> DistributedQueue {
    DistributedQueue::builder(c.clone(), path)
        .start()
        .await
        .unwrap()
}

async fn locked_queue(c: &Client, path: &str) -> DistributedQueue {
    DistributedQueue::builder(c.clone(), path)
        .lock_safe(format!("{path}-locks"))
        .start()
        .await
        .unwrap()
}

async fn take_text(q: &DistributedQueue) -> String {
    let item = soon("an item", q.take()).await.unwrap();
    let text = item
        .items()
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect::<Vec<_>>()
        .join("+");
    item.done().await.unwrap();
    text
}

/// The queue's item znodes (Curator's `queue-` names only).
async fn items_in(c: &Client, path: &str) -> Vec<String> {
    let mut names: Vec<String> = children(c, path)
        .await
        .into_iter()
        .filter(|n| n.starts_with("queue-"))
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_in_curators_names_and_envelope_then_closed() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = format!("{}/jobs", unique("queue-fifo"));
    let q = queue(&c, &path).await;
    let mut status = q.status();
    assert_eq!(status.get(), zk_recipes::QueueStatus::Running);
    for i in 0..5 {
        q.put(format!("job-{i}").as_bytes()).await.unwrap();
    }
    q.put_all([&b"a"[..], b"b"]).await.unwrap();
    let names = items_in(&admin, &path).await;
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(
        names.iter().all(|n| n.len() == "queue-".len() + 10),
        "{names:?}"
    );
    let (data, _) = admin
        .get_data(&format!("{path}/{}", names[0]))
        .await
        .unwrap();
    assert_eq!(&data[..], b"\x00\x01\x00\x01\x01\x00\x00\x00\x05job-0\x02");
    for i in 0..5 {
        assert_eq!(take_text(&q).await, format!("job-{i}"));
    }
    assert_eq!(take_text(&q).await, "a+b", "a put_all is one item");
    assert!(q.try_take().await.unwrap().is_none());
    assert!(items_in(&admin, &path).await.is_empty());
    // The markers of outcome-safe puts and takes are gone too.
    assert!(children(&admin, &path).await.is_empty());

    let waiting = {
        let c = c.clone();
        let path = path.clone();
        tokio::spawn(async move {
            let q = DistributedQueue::builder(c, &path).start().await.unwrap();
            let item = q.take().await.unwrap();
            item.items()[0].clone()
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let producer = queue(&admin, &path).await;
    producer.put(b"late").await.unwrap();
    assert_eq!(
        &soon("the waiting take", waiting).await.unwrap()[..],
        b"late"
    );

    q.close().await.unwrap();
    status.wait_for(|s| s.has_ended()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn priority_and_delay_orders() {
    let c = client(&shared()).await;
    let path = unique("queue-prio");
    let q = DistributedQueue::builder(c.clone(), &path)
        .order(QueueOrder::Priority)
        .start()
        .await
        .unwrap();
    for (text, p) in [
        ("p5", 5),
        ("p-3", -3),
        ("p0", 0),
        ("pmax", i32::MAX),
        ("pmin", i32::MIN),
    ] {
        q.put_with_priority(text.as_bytes(), p).await.unwrap();
    }
    let mut got = Vec::new();
    for _ in 0..5 {
        got.push(take_text(&q).await);
    }
    assert_eq!(got, ["pmin", "p-3", "p0", "p5", "pmax"]);

    let path = unique("queue-delay");
    let q = DistributedQueue::builder(c.clone(), &path)
        .order(QueueOrder::Delay)
        .start()
        .await
        .unwrap();
    let later = SystemTime::now() + Duration::from_millis(1500);
    q.put_with_delay(b"later", later).await.unwrap();
    q.put_with_delay(b"now", SystemTime::now()).await.unwrap();
    assert_eq!(take_text(&q).await, "now");
    assert!(q.try_take().await.unwrap().is_none(), "not due yet");
    assert_eq!(take_text(&q).await, "later");
    assert!(SystemTime::now() >= later, "taken before it was due");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_safe_items_stay_until_done_and_keep_their_place_when_released() {
    let (a, b, admin) = (
        client(&shared()).await,
        client(&shared()).await,
        client(&shared()).await,
    );
    let path = unique("queue-locked");
    let (qa, qb) = (locked_queue(&a, &path).await, locked_queue(&b, &path).await);
    qa.put(b"one").await.unwrap();
    qa.put(b"two").await.unwrap();
    let first = qa.take().await.unwrap();
    assert_eq!(&first.items()[0][..], b"one");
    assert_eq!(items_in(&admin, &path).await.len(), 2, "still in the queue");
    assert_eq!(
        children(&admin, &format!("{path}-locks")).await,
        [first.name().to_owned()]
    );
    // The other consumer skips the locked item.
    let second = qb.take().await.unwrap();
    assert_eq!(&second.items()[0][..], b"two");
    assert!(qb.try_take().await.unwrap().is_none());
    // Released, the first item is taken again, in its place and under its name.
    let name = first.name().to_owned();
    first.release().await.unwrap();
    let again = soon("the released item", qb.take()).await.unwrap();
    assert_eq!(again.name(), name);
    again.done().await.unwrap();
    // A dropped item is unlocked the same way.
    drop(second);
    let dropped = soon("the dropped item", qa.take()).await.unwrap();
    assert_eq!(&dropped.items()[0][..], b"two");
    dropped.done().await.unwrap();
    assert!(items_in(&admin, &path).await.is_empty());
    recipes_support::eventually("no lock left", || async {
        children(&admin, &format!("{path}-locks")).await.is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_whose_session_expires_mid_item_leaves_it_to_the_next() {
    let (proxy, victim) = proxied().await;
    let (other, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("queue-expiry");
    let qv = locked_queue(&victim, &path).await;
    let qo = locked_queue(&other, &path).await;
    qo.put(b"work").await.unwrap();
    let held = qv.take().await.unwrap();
    assert!(
        qo.try_take().await.unwrap().is_none(),
        "locked by the victim"
    );
    assert!(held.is_held());
    expire_and_renew(&proxy, &victim).await;
    // The victim's item says its lock went with the session.
    let why = soon("the victim's item lost", held.lost()).await;
    assert!(
        matches!(why, LostReason::Expired | LostReason::SessionLost),
        "{why:?}"
    );
    assert!(!held.is_held());
    // The victim's lock went with its session: the item is the other consumer's now.
    let item = soon("the item after the expiry", qo.take()).await.unwrap();
    assert_eq!(&item.items()[0][..], b"work");
    assert_eq!(item.name(), held.name());
    // The victim's late done removes nothing of what is the other's now.
    assert!(matches!(
        held.done().await,
        Err(RecipeError::Lost(LostReason::Expired))
    ));
    assert_eq!(items_in(&admin, &path).await.len(), 1, "still the other's");
    item.done().await.unwrap();
    assert!(items_in(&admin, &path).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_or_take_whose_reply_is_lost_is_neither_doubled_nor_lost() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("queue-lost-reply");
    let q = queue(&c, &path).await;
    proxy.cut_reply(OpCode::Multi, "");
    q.put(b"once").await.unwrap();
    assert_eq!(
        items_in(&admin, &path).await.len(),
        1,
        "the put is not doubled"
    );
    q.put(b"twice").await.unwrap();

    proxy.cut_reply(OpCode::Multi, "");
    assert_eq!(take_text(&q).await, "once", "the take is not lost");
    assert_eq!(items_in(&admin, &path).await.len(), 1);
    assert_eq!(take_text(&q).await, "twice");
    assert!(q.try_take().await.unwrap().is_none());
    assert!(children(&admin, &path).await.is_empty(), "no marker left");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_lists_once_per_batch_not_once_per_item() {
    let (proxy, c) = proxied().await;
    let producer = client(&shared()).await;
    let path = unique("queue-bounded");
    let pq = queue(&producer, &path).await;
    const N: usize = 500;
    for i in 0..N {
        pq.put(i.to_string().as_bytes()).await.unwrap();
    }
    let q = queue(&c, &path).await;
    let before = proxy.count(OpCode::GetChildren) + proxy.count(OpCode::GetChildren2);
    let mut seen = Vec::new();
    for i in 0..N {
        if i % 50 == 0 {
            pq.put(b"more").await.unwrap(); // the queue keeps changing
        }
        let item = q.take().await.unwrap();
        seen.push(String::from_utf8_lossy(&item.items()[0]).into_owned());
    }
    let lists = proxy.count(OpCode::GetChildren) + proxy.count(OpCode::GetChildren2) - before;
    assert!(lists <= 3, "{lists} listings for {N} takes");
    let firsts: Vec<usize> = seen.iter().filter_map(|s| s.parse().ok()).collect();
    let mut sorted = firsts.clone();
    sorted.sort_unstable();
    assert_eq!(firsts.len(), N);
    assert_eq!(sorted, (0..N).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_take_leaves_the_queue_as_it_was_at_every_await_point() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    for lock_safe in [false, true] {
        let path = unique(if lock_safe {
            "queue-sweep-locked"
        } else {
            "queue-sweep"
        });
        let locks = format!("{path}-locks");
        let q = if lock_safe {
            locked_queue(&c, &path).await
        } else {
            queue(&c, &path).await
        };
        q.put(b"precious").await.unwrap();
        let plan = SweepPlan::default();
        let pause = plan.pause;
        let report = sweep(&plan, |k| {
            let (q, admin, path, locks) = (&q, admin.clone(), path.clone(), locks.clone());
            async move {
                if let Some(item) = poll_then_drop(q.take(), k, pause).await {
                    let item = item.map_err(|e| e.to_string())?;
                    assert_eq!(&item.items()[0][..], b"precious");
                    item.release().await.map_err(|e| e.to_string())?;
                    if !lock_safe {
                        // Released in plain mode: it was removed; put it back for the end check.
                        q.put(b"precious").await.map_err(|e| e.to_string())?;
                    }
                    return Ok(true);
                }
                settle(
                    "the item is back and unlocked",
                    Duration::from_secs(10),
                    || {
                        let (admin, path, locks) = (admin.clone(), path.clone(), locks.clone());
                        async move {
                            let items = items_in(&admin, &path).await;
                            let held = if lock_safe {
                                children(&admin, &locks).await
                            } else {
                                vec![]
                            };
                            (items.len() == 1 && held.is_empty())
                                .then_some(())
                                .ok_or(format!("items {items:?}, locks {held:?}"))
                        }
                    },
                )
                .await?;
                Ok(false)
            }
        })
        .await;
        conformance::sweep::assert_swept("DistributedQueue::take", &report, true);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_queue_says_so_and_start_outside_a_runtime_is_an_error() {
    let c = client(&shared()).await;
    let path = unique("queue-closed");
    let q = queue(&c, &path).await;
    let handle = {
        let path = path.clone();
        let c = c.clone();
        std::thread::spawn(move || {
            let fut = DistributedQueue::builder(c, path).start();
            // Polled by a bare executor, outside any tokio runtime.
            let waker = std::task::Waker::noop();
            let mut cx = std::task::Context::from_waker(waker);
            let mut fut = std::pin::pin!(fut);
            std::future::Future::poll(fut.as_mut(), &mut cx)
        })
    };
    match handle.join().unwrap() {
        std::task::Poll::Ready(Err(RecipeError::NoRuntime)) => {}
        other => panic!("{other:?}"),
    }
    q.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_consumer_wakes_when_any_lock_goes_not_only_the_first() {
    let (a, b, c) = (
        client(&shared()).await,
        client(&shared()).await,
        client(&shared()).await,
    );
    let path = unique("queue-any-lock");
    let (qa, qb) = (locked_queue(&a, &path).await, locked_queue(&b, &path).await);
    let qc = locked_queue(&c, &path).await;
    qa.put(b"first").await.unwrap();
    qa.put(b"second").await.unwrap();
    let first = qa.take().await.unwrap();
    let second = qb.take().await.unwrap();
    assert_eq!(&second.items()[0][..], b"second");
    // Both items locked: the third consumer waits, then the second lock (not the first it
    // skipped) goes, which changes no child of the queue.
    let waiting = tokio::spawn(async move { take_text(&qc).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "took a locked item");
    second.release().await.unwrap();
    assert_eq!(soon("the released item", waiting).await.unwrap(), "second");
    first.done().await.unwrap();
}
