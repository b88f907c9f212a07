//! KazooQueue and KazooLockingQueue when the connection or the session fails, against a
//! real ZooKeeper 3.8 server: a put or get whose reply is lost is neither doubled nor lost
//! (kazoo's may do either), the marker that says so is never left where kazoo's `Queue`
//! would take it, and a consumer whose session expires while it holds an entry is told
//! (`lost()`, `is_held()`), cannot consume it, and leaves it to the next consumer.

mod recipes_support;

use recipes_support::{children, client, expire_and_renew, proxied, shared, soon, unique};
use zk_recipes::{KazooLockingQueue, KazooQueue, LostReason, RecipeError};
use zk_session::OpCode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_or_get_whose_reply_is_lost_is_neither_doubled_nor_lost() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let parent = unique("kazoo-queue-lost-reply");
    let path = format!("{parent}/q");
    let q = KazooQueue::builder(c, &path).start().await.unwrap();
    proxy.cut_reply(OpCode::Multi, "");
    q.put(b"once").await.unwrap();
    assert_eq!(
        children(&admin, &path).await.len(),
        1,
        "the put is not doubled"
    );
    q.put_with_priority(b"first", 1).await.unwrap();

    proxy.cut_reply(OpCode::Multi, "");
    assert_eq!(
        q.get().await.unwrap().as_deref(),
        Some(&b"first"[..]),
        "not lost"
    );
    assert_eq!(children(&admin, &path).await.len(), 1);
    assert_eq!(q.get().await.unwrap().as_deref(), Some(&b"once"[..]));
    assert!(q.get().await.unwrap().is_none());
    // Only ever entries in the queue's znode (kazoo would take anything there), and no
    // marker left beside it.
    assert!(children(&admin, &path).await.is_empty());
    assert_eq!(children(&admin, &parent).await, ["q"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locking_put_all_whose_reply_is_lost_is_put_once() {
    let (proxy, c) = proxied().await;
    let admin = client(&shared()).await;
    let path = unique("kazoo-locking-lost-reply");
    let q = KazooLockingQueue::builder(c, &path).start().await.unwrap();
    proxy.cut_reply(OpCode::Multi, "");
    q.put_all([&b"a"[..], b"b", b"c"], 10).await.unwrap();
    assert_eq!(children(&admin, &format!("{path}/entries")).await.len(), 3);
    assert_eq!(
        children(&admin, &path).await,
        ["entries", "taken"],
        "no marker left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_whose_session_expires_holding_an_entry_leaves_it_to_the_next() {
    let (proxy, victim) = proxied().await;
    let (other, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("kazoo-locking-expiry");
    let qv = KazooLockingQueue::builder(victim.clone(), &path)
        .start()
        .await
        .unwrap();
    let qo = KazooLockingQueue::builder(other, &path)
        .start()
        .await
        .unwrap();
    qo.put(b"work").await.unwrap();
    let held = qv.get().await.unwrap();
    assert!(held.is_held() && held.holds_lock().await.unwrap());
    assert!(
        qo.try_get().await.unwrap().is_none(),
        "locked by the victim"
    );

    expire_and_renew(&proxy, &victim).await;
    let why = soon("the victim's entry lost", held.lost()).await;
    assert!(
        matches!(why, LostReason::Expired | LostReason::SessionLost),
        "{why:?}"
    );
    assert!(!held.is_held());
    assert!(!held.holds_lock().await.unwrap());
    // The lock went with the session: the entry is the other consumer's now.
    let entry = soon("the entry after the expiry", qo.get()).await.unwrap();
    assert_eq!(entry.name(), held.name());
    // The victim's late consume removes nothing of what is the other's now.
    assert!(matches!(
        held.consume().await,
        Err(RecipeError::Lost(LostReason::Expired))
    ));
    assert_eq!(children(&admin, &format!("{path}/entries")).await.len(), 1);
    entry.consume().await.unwrap();
    assert!(children(&admin, &format!("{path}/entries"))
        .await
        .is_empty());
    assert!(children(&admin, &format!("{path}/taken")).await.is_empty());
    // The victim's queue serves on, with its new session.
    assert!(qv.try_get().await.unwrap().is_none());
}
