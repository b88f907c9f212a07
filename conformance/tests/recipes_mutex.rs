//! zk-recipes' InterProcessMutex against a real ZooKeeper 3.8 server: edge cases 1, 2, 3, 6, 8, 11 and 13
//! of ../shared/notes/recipes.md, fencing, and the unfair mode. The cases that need faults
//! (4, 5, 7, 9, 10) are in recipes_mutex_faults.rs.

mod recipes_support;

use conformance::ephemeral_owner;
use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex as StdMutex,
    },
    time::Duration,
};

use conformance::shared_standalone;
use recipes_support::*;
use zk_recipes::{new_protected_id, InterProcessMutex, LostReason, RecipeError};
use zk_session::{Acl, CreateOptions, ErrorCode, Op, Version};

/// Edge case 1: N clients × M tasks, each task with its own handle. An in-memory flag and a
/// counter in ZooKeeper (written with fenced, versioned writes) both show that no two tasks
/// were ever inside at once, and fencing tokens only grow.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn n_clients_m_tasks_never_overlap() {
    const CLIENTS: usize = 3;
    const TASKS: usize = 3;
    const ROUNDS: usize = 5;
    let admin = client(&shared()).await;
    let path = unique("overlap");
    let counter = format!("{path}-counter");
    admin
        .create(&counter, b"0", CreateOptions::persistent())
        .await
        .unwrap();
    let inside = Arc::new(AtomicUsize::new(0));
    let tokens = Arc::new(StdMutex::new(Vec::<u64>::new()));
    let mut tasks = Vec::new();
    let mut sessions = Vec::new();
    for _ in 0..CLIENTS {
        let c = client(&shared()).await;
        sessions.push(ephemeral_owner(&c));
        for _ in 0..TASKS {
            let (c, path, counter) = (c.clone(), path.clone(), counter.clone());
            let (inside, tokens) = (inside.clone(), tokens.clone());
            tasks.push(tokio::spawn(async move {
                let mutex = InterProcessMutex::new(c.clone(), &path);
                for _ in 0..ROUNDS {
                    let guard = mutex.acquire().await.expect("acquire");
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                    {
                        let mut t = tokens.lock().unwrap();
                        if let Some(last) = t.last() {
                            assert!(guard.fencing_token() > *last, "token did not grow");
                        }
                        t.push(guard.fencing_token());
                    }
                    let (data, stat) = c.get_data(&counter).await.unwrap();
                    let n: u64 = std::str::from_utf8(&data).unwrap().parse().unwrap();
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    guard
                        .fenced_multi([Op::set_data(
                            &counter,
                            (n + 1).to_string().as_bytes(),
                            Version::Exact(stat.version),
                        )])
                        .await
                        .expect("a fenced write by the only holder");
                    assert!(guard.is_held());
                    inside.fetch_sub(1, Ordering::SeqCst);
                    guard.release().await.unwrap();
                }
            }));
        }
    }
    for t in tasks {
        soon("every task finishes", t).await.unwrap();
    }
    let (data, _) = admin.get_data(&counter).await.unwrap();
    assert_eq!(data, (CLIENTS * TASKS * ROUNDS).to_string().as_bytes());
    assert_eq!(tokens.lock().unwrap().len(), CLIENTS * TASKS * ROUNDS);
    assert!(children(&admin, &path).await.is_empty());
}

/// Edge case 2: re-entrant through the holder's guard; another handle (and another acquire
/// through the same handle) is excluded until the last release; releasing what is not held
/// is an error.
#[tokio::test]
async fn reentrant_acquire_and_release() {
    let (c1, c2) = (client(&shared()).await, client(&shared()).await);
    let path = unique("reentrant");
    let m1 = Arc::new(InterProcessMutex::new(c1.clone(), &path));
    let m2 = InterProcessMutex::new(c2.clone(), &path);

    let g1 = m1.acquire().await.unwrap();
    let g2 = g1.reenter().unwrap();
    assert_eq!(g1.path(), g2.path());
    assert_eq!(g1.fencing_token(), g2.fencing_token());
    assert_eq!(m1.hold_count(), 2);
    assert_eq!(children(&c1, &path).await, vec![name_of(g1.path())]);
    assert!(m2.try_acquire().await.unwrap().is_none());
    assert!(m1.try_acquire().await.unwrap().is_none(), "not re-entrance");
    g1.release().await.unwrap();
    assert!(g2.is_held() && m1.is_held());
    assert!(m2.try_acquire().await.unwrap().is_none());
    let g3 = g2.reenter().unwrap();
    g2.release().await.unwrap();
    assert!(m1.is_held(), "g3 still holds");
    g3.release().await.unwrap();
    assert!(!m1.is_held());
    assert!(children(&c1, &path).await.is_empty());

    // The other handle gets it now, and this one is excluded.
    let g = m2.try_acquire().await.unwrap().expect("free");
    assert!(m1.try_acquire().await.unwrap().is_none());
    g.release().await.unwrap();

    // Concurrent acquires of one handle take turns, on one node at a time.
    let (a, b) = tokio::join!(
        async {
            let g = m1.acquire().await.unwrap();
            let n = children(&c1, &path).await.len();
            g.release().await.unwrap();
            n
        },
        async {
            let g = m1.acquire().await.unwrap();
            let n = children(&c1, &path).await.len();
            g.release().await.unwrap();
            n
        }
    );
    assert_eq!((a, b), (1, 1));

    // A released guard is inert; dropping the last guard releases too (in the background).
    let live = m1.acquire().await.unwrap();
    let inert = live.reenter().unwrap();
    let inert_probe = inert.reenter().unwrap();
    inert.release().await.unwrap();
    assert!(inert_probe.is_held());
    drop(inert_probe);
    assert_eq!(m1.hold_count(), 1);
    assert!(m2.try_acquire().await.unwrap().is_none());
    drop(live);
    eventually("the dropped guard's node is deleted", || async {
        children(&c1, &path).await.is_empty()
    })
    .await;
    assert_eq!(m1.hold_count(), 0);
}

/// Edge case 3: a timed-out acquire returns Timeout and leaves no node; so does a failed
/// try_acquire.
#[tokio::test]
async fn timed_out_acquire_leaves_no_node() {
    let (c1, c2) = (client(&shared()).await, client(&shared()).await);
    let path = unique("timeout");
    let holder = InterProcessMutex::new(c1.clone(), &path);
    let g = holder.acquire().await.unwrap();
    let only_holder = vec![name_of(g.path())];
    let m = InterProcessMutex::new(c2.clone(), &path);
    for wait in [0, 50, 300] {
        let r = m.acquire_timeout(Duration::from_millis(wait)).await;
        assert!(matches!(r, Err(RecipeError::Timeout)), "{r:?}");
        assert_eq!(children(&c1, &path).await, only_holder);
    }
    assert!(m.try_acquire().await.unwrap().is_none());
    assert_eq!(children(&c1, &path).await, only_holder);
    assert!(!m.is_held());
    g.release().await.unwrap();
    let g = m
        .acquire_timeout(Duration::from_secs(30))
        .await
        .expect("free now");
    g.release().await.unwrap();
    assert!(watches_under(shared_standalone(), &path).is_empty());
}

/// The builder's data and ACL land on the lock node.
#[tokio::test]
async fn builder_data_and_acl_are_the_lock_nodes() {
    let c = client(&shared()).await;
    let path = unique("builder");
    let m = InterProcessMutex::builder(c.clone(), &path)
        .data(b"host-17")
        .acl(Acl::read_unsafe())
        .build();
    let g = m.acquire().await.unwrap();
    assert_eq!(c.get_data(g.path()).await.unwrap().0, &b"host-17"[..]);
    assert_eq!(c.get_acl(g.path()).await.unwrap().0, Acl::read_unsafe());
    g.release().await.unwrap();
    assert!(children(&c, &path).await.is_empty());
}

/// The guard notices its node being deleted, and the server refuses fenced writes after.
#[tokio::test]
async fn deleted_lock_node_is_lost_and_fenced() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let path = unique("deleted");
    let target = format!("{path}-data");
    admin
        .create(&target, b"", CreateOptions::persistent())
        .await
        .unwrap();
    let m = InterProcessMutex::new(c.clone(), &path);
    let g = m.acquire().await.unwrap();
    g.fenced_multi([Op::set_data(&target, b"1", Version::Any)])
        .await
        .unwrap();
    // A failing op of the caller's is reported with the caller's index.
    let e = g
        .fenced_multi([
            Op::set_data(&target, b"2", Version::Any),
            Op::set_data(format!("{path}-missing"), b"", Version::Any),
        ])
        .await
        .unwrap_err();
    match e {
        RecipeError::Session(zk_session::Error::Multi { index, code, .. }) => {
            assert_eq!((index, code), (1, ErrorCode::NoNode));
        }
        other => panic!("{other:?}"),
    }
    admin.delete(g.path(), Version::Any).await.unwrap();
    assert_eq!(soon("lost", g.lost()).await, LostReason::NodeDeleted);
    assert!(!g.is_held());
    assert!(matches!(
        g.fenced_multi([Op::set_data(&target, b"3", Version::Any)])
            .await,
        Err(RecipeError::Lost(_))
    ));
    assert_eq!(&admin.get_data(&target).await.unwrap().0[..], b"1");
    g.release().await.unwrap();
}

/// Edge case 6: the waiter's node is deleted by someone else; it creates a new one and keeps
/// waiting, and gets the lock when the holder releases.
#[tokio::test]
async fn own_node_deleted_while_waiting() {
    let (h, w, admin) = (
        client(&shared()).await,
        client(&shared()).await,
        client(&shared()).await,
    );
    let path = unique("own-deleted");
    let hg = InterProcessMutex::new(h.clone(), &path)
        .acquire()
        .await
        .unwrap();
    let mw = Arc::new(InterProcessMutex::new(w.clone(), &path));
    let waiter = spawn_acquire(&mw);
    let kids = until_children(&admin, &path, 2).await;
    let first = kids.into_iter().find(|k| *k != name_of(hg.path())).unwrap();
    admin
        .delete(&format!("{path}/{first}"), Version::Any)
        .await
        .unwrap();
    let hname = name_of(hg.path());
    let second = until_some("the waiter re-creates its node", || async {
        let kids = children(&admin, &path).await;
        let new = kids.iter().find(|k| **k != hname && **k != first).cloned();
        new.filter(|_| kids.len() == 2)
    })
    .await;
    assert!(!waiter.is_finished(), "must keep waiting behind the holder");
    hg.release().await.unwrap();
    let g = soon("the waiter acquires", waiter).await.unwrap().unwrap();
    assert_eq!(name_of(g.path()), second);
    g.release().await.unwrap();
    assert!(children(&admin, &path).await.is_empty());
}

/// Edge case 8: dropped and cancelled acquires leave no node, whenever they are dropped:
/// before the create's reply, while queued, or as an aborted task.
#[tokio::test]
async fn dropped_waiters_leave_no_node() {
    let (h, w) = (client(&shared()).await, client(&shared()).await);
    let path = unique("dropped");
    let hg = InterProcessMutex::new(h.clone(), &path)
        .acquire()
        .await
        .unwrap();
    let only_holder = vec![name_of(hg.path())];
    for i in 0..12u64 {
        let m = InterProcessMutex::new(w.clone(), &path);
        // Dropped after 0..=55 ms: some before the create is answered, most while queued.
        let r = tokio::time::timeout(Duration::from_millis(i * 5), m.acquire()).await;
        assert!(r.is_err(), "cannot have acquired");
    }
    let m = Arc::new(InterProcessMutex::new(w.clone(), &path));
    let task = spawn_acquire(&m);
    until_children(&h, &path, 2).await;
    task.abort();
    eventually("every dropped waiter's node is deleted", || async {
        children(&h, &path).await == only_holder
    })
    .await;
    eventually("and its watches", || async {
        watches_of(shared_standalone(), ephemeral_owner(&w)).is_empty()
    })
    .await;
    hg.release().await.unwrap();
}

/// Edge case 11: children that are not contenders never block the lock; other clients'
/// contender names (kazoo, Curator, ZooKeeper's recipe, read locks) are waited for in order.
#[tokio::test]
async fn foreign_children_and_other_clients_names() {
    let (c, other) = (client(&shared()).await, client(&shared()).await);
    let path = unique("foreign");
    zk_recipes::create_parents(&other, &path).await.unwrap();
    let persistent = CreateOptions::persistent();
    for name in ["config", "leases", "locks", "zzz", "0000000000"] {
        other
            .create(&format!("{path}/{name}"), b"", persistent.clone())
            .await
            .unwrap();
    }
    other
        .create(
            &format!("{path}/readme-"),
            b"",
            CreateOptions::persistent_sequential(),
        )
        .await
        .unwrap();
    let m = Arc::new(InterProcessMutex::new(c.clone(), &path));
    let g = m
        .try_acquire()
        .await
        .unwrap()
        .expect("foreign children do not block");
    g.release().await.unwrap();

    let sid = ephemeral_owner(&other);
    for prefix in [
        format!("{}__lock__", "0123456789abcdef0123456789abcdef"),
        format!("{}__rlock__", "fedcba9876543210fedcba9876543210"),
        format!("_c_{}-lock-", new_protected_id()),
        format!("x-{sid}-"),
    ] {
        let foreign = ephemeral_sequential(&other, &format!("{path}/{prefix}")).await;
        assert!(m.try_acquire().await.unwrap().is_none(), "{foreign} holds");
        let waiter = spawn_acquire(&m);
        eventually("the waiter queues", || async {
            watches_of(shared_standalone(), ephemeral_owner(&c)).contains(&foreign)
        })
        .await;
        assert!(!waiter.is_finished());
        other.delete(&foreign, Version::Any).await.unwrap();
        let g = soon("acquires after the foreign holder", waiter)
            .await
            .unwrap()
            .unwrap();
        g.release().await.unwrap();
    }
    // The foreign children are untouched.
    assert_eq!(children(&c, &path).await.len(), 6);
}

/// The unfair mode excludes just as well and serves every contender.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfair_mode_excludes() {
    let path = unique("unfair");
    let inside = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let c = client(&shared()).await;
        for _ in 0..3 {
            let (c, path, inside) = (c.clone(), path.clone(), inside.clone());
            tasks.push(tokio::spawn(async move {
                let m = InterProcessMutex::builder(c, &path).unfair().build();
                for _ in 0..4 {
                    let g = m.acquire().await.unwrap();
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                    tokio::time::sleep(Duration::from_millis(3)).await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                    g.release().await.unwrap();
                }
            }));
        }
    }
    for t in tasks {
        soon("every unfair task finishes", t).await.unwrap();
    }
    let admin = client(&shared()).await;
    assert!(children(&admin, &path).await.is_empty());
}

/// Edge case 13: after a workload of every kind (handoffs, re-entrancy, timeouts, failed
/// tries, dropped waiters, unfair waiters), no node and no watch is left on the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_nodes_or_watches_leak() {
    let (a, b) = (client(&shared()).await, client(&shared()).await);
    let path = unique("leak");
    let ma = Arc::new(InterProcessMutex::new(a.clone(), &path));
    let mb = Arc::new(InterProcessMutex::new(b.clone(), &path));
    let mu = Arc::new(
        InterProcessMutex::builder(b.clone(), &path)
            .unfair()
            .build(),
    );
    for _ in 0..3 {
        let g1 = ma.acquire().await.unwrap();
        let g2 = g1.reenter().unwrap();
        assert!(mb.try_acquire().await.unwrap().is_none());
        assert!(matches!(
            mb.acquire_timeout(Duration::from_millis(100)).await,
            Err(RecipeError::Timeout)
        ));
        let _ = tokio::time::timeout(Duration::from_millis(20), mb.acquire()).await;
        let wb = tokio::spawn({
            let mb = mb.clone();
            async move { mb.acquire().await.unwrap().release().await.unwrap() }
        });
        let wu = tokio::spawn({
            let mu = mu.clone();
            async move { mu.acquire().await.unwrap().release().await.unwrap() }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        g1.release().await.unwrap();
        drop(g2);
        soon("fair waiter", wb).await.unwrap();
        soon("unfair waiter", wu).await.unwrap();
    }
    eventually("no node left", || async {
        children(&a, &path).await.is_empty()
    })
    .await;
    eventually("no watch left", || async {
        let s = shared_standalone();
        watches_under(s, &path).is_empty()
            && watches_of(s, ephemeral_owner(&a)).is_empty()
            && watches_of(s, ephemeral_owner(&b)).is_empty()
    })
    .await;
}
