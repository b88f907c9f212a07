//! The cancellation sweep over every public async operation of the recipes, and the session
//! operations that set watches or change the server list, against a real ZooKeeper 3.8 server
//! (issue 14).
//!
//! Each operation is polled k times on the real runtime, then dropped, for every k until it
//! completes, twice: with a 1 ms sleep between polls (which lets replies arrive between
//! polls; k = 0..=24, then every 6th k up to 120) and with a yield (which stops the future
//! at many more points of its own work; k = 0..=24, then every 16th k up to 800). Dense for
//! small k and strided after, to keep the run short; an operation that must complete and
//! has not by then is polled to the end once (on a loaded machine a round trip can outlast
//! 800 yields). After each drop: the session owns no znode under the test's path
//! that the API did not promise (`ephemeralOwner`, seen from a second client), the server
//! holds no watch of the session there that nobody holds (`wchc`), the next operation on
//! the same handle works, and, for the lock recipes, another contender can take the lock.
//! Cleanup of a dropped future runs in the background, so each check settles for up to 10 s.

mod recipes_support;
// The coordination recipes' sweeps, beside this file's.
#[path = "cancellation_sweep/coordination.rs"]
mod coordination;
#[path = "cancellation_sweep/discovery.rs"]
mod discovery;
#[path = "cancellation_sweep/holds.rs"]
mod holds;
#[path = "cancellation_sweep/queues.rs"]
mod queues;

use conformance::ephemeral_owner;
use std::{any::Any, cell::RefCell, net::SocketAddr, time::Duration};

use conformance::{
    shared_standalone,
    sweep::{
        assert_swept, child_watches, expect_clean, poll_then_drop, sweep, watches_of, Pause,
        SweepPlan,
    },
};
use coordination::{barrier_and_nodes, counters, rw_lock_acquires, semaphore_acquire_and_release};
use discovery::{
    discovery_register_update_unregister, discovery_start_and_close, service_cache_and_provider,
};
use holds::{
    distributed_barrier_operations, multi_lock_acquire_and_release,
    semaphore_tries_and_semaphore_mutex,
};
use queues::{
    distributed_queue_operations, kazoo_locking_queue_operations, kazoo_queue_operations,
    simple_queue_operations,
};
use recipes_support::{client, shared, unique};
use zk_recipes::Cache;
use zk_recipes::{CloseMode, InterProcessMutex, LeaderLatch, LeaderSelector, ProtectedCreate};
use zk_session::{AddWatchMode, Client, CreateOptions, SessionState, Version};

const SETTLE: Duration = Duration::from_secs(10);

/// The client under test, an observer, the server and a path of the test's own.
struct Env {
    c: Client,
    observer: Client,
    server: SocketAddr,
    path: String,
    plan: SweepPlan,
}

impl Env {
    async fn new(tag: &str, pause: Pause) -> Env {
        Env {
            c: client(&shared()).await,
            observer: client(&shared()).await,
            server: shared_standalone().client_addr(),
            path: unique(&format!("sweep-{tag}")),
            plan: match pause {
                // Many more polls before I/O moves on: a longer, sparser sweep.
                Pause::Yield => SweepPlan {
                    pause,
                    stride: 16,
                    max: 800,
                    ..SweepPlan::default()
                },
                _ => SweepPlan {
                    pause,
                    ..SweepPlan::default()
                },
            },
        }
    }

    /// Nothing of the session's under the path but `nodes` and watches on `watches`, and
    /// the handle still works.
    async fn clean(&self, nodes: &[String], watches: &[String]) -> Result<(), String> {
        let session = ephemeral_owner(&self.c);
        expect_clean(
            &self.observer,
            self.server,
            session,
            &self.path,
            nodes,
            watches,
            SETTLE,
        )
        .await?;
        // wchc lists data watches only: ask the server about child watches directly.
        let mut probes = vec![self.path.clone()];
        probes.extend(["there", "missing"].map(|n| format!("{}/{n}", self.path)));
        probes.retain(|p| !watches.contains(p));
        let left = child_watches(&self.c, &probes)
            .await
            .map_err(|e| format!("checkWatches: {e}"))?;
        if !left.is_empty() {
            return Err(format!("child watches left on {left:?}"));
        }
        self.c
            .exists("/")
            .await
            .map(|_| ())
            .map_err(|e| format!("the next request on the handle failed: {e}"))
    }

    /// Another contender (the observer) can take the lock at the path, and give it back.
    async fn another_takes_the_lock(&self) -> Result<(), String> {
        let other = InterProcessMutex::new(self.observer.clone(), &self.path);
        let g = other
            .acquire_timeout(SETTLE)
            .await
            .map_err(|e| format!("another contender could not take the lock: {e}"))?;
        g.release().await.map_err(|e| format!("release: {e}"))
    }
}

async fn mutex_acquire_on_a_free_lock(pause: Pause) {
    let env = Env::new("acquire-free", pause).await;
    let env = &env;
    let m = &InterProcessMutex::new(env.c.clone(), &env.path);
    let report = sweep(&env.plan, |k| async move {
        if let Some(r) = poll_then_drop(m.acquire(), k, env.plan.pause).await {
            r.map_err(|e| e.to_string())?
                .release()
                .await
                .map_err(|e| e.to_string())?;
            return Ok(true);
        }
        env.clean(&[], &[]).await?;
        let g = m
            .try_acquire()
            .await
            .map_err(|e| e.to_string())?
            .ok_or("the same handle cannot take the free lock")?;
        g.release().await.map_err(|e| e.to_string())?;
        env.another_takes_the_lock().await?;
        Ok(false)
    })
    .await;
    assert_swept("acquire (free)", &report, true);
}

/// The waiting acquire (never completes while the lock is held), fair and unfair, and
/// acquire_timeout and try_acquire, which end on their own.
async fn mutex_acquires_on_a_held_lock(pause: Pause) {
    let env = Env::new("acquire-held", pause).await;
    let env = &env;
    let holder_client = client(&shared()).await;
    let holder = &InterProcessMutex::new(holder_client.clone(), &env.path);
    let fair = InterProcessMutex::new(env.c.clone(), &env.path);
    let unfair = InterProcessMutex::builder(env.c.clone(), &env.path)
        .unfair()
        .build();
    for (what, m) in [("fair", &fair), ("unfair", &unfair)] {
        for op in ["acquire", "acquire_timeout", "try_acquire"] {
            let held = RefCell::new(Some(holder.acquire().await.unwrap()));
            // acquire waits for as long as the lock is held; the others end on their own.
            let must_complete = op != "acquire";
            let plan = SweepPlan {
                finish_within: must_complete.then_some(SETTLE),
                ..env.plan.clone()
            };
            let report = sweep(&plan, |k| {
                let (holder, held) = (holder, &held);
                async move {
                    let fut = async {
                        match op {
                            "acquire" => m.acquire().await.map(Some),
                            "acquire_timeout" => {
                                m.acquire_timeout(Duration::from_millis(30)).await.map(Some)
                            }
                            _ => m.try_acquire().await,
                        }
                    };
                    let done = poll_then_drop(fut, k, env.plan.pause).await;
                    let checked = match &done {
                        Some(Ok(Some(_))) => Err("acquired a held lock".to_owned()),
                        _ => env.clean(&[], &[]).await,
                    };
                    // The next operation on the same handle works, and once the holder lets
                    // go, another contender takes the lock.
                    let next = match m.try_acquire().await {
                        Ok(None) => Ok(()),
                        other => Err(format!("try_acquire on the held lock: {other:?}")),
                    };
                    let g = held.borrow_mut().take();
                    drop(g);
                    let other = env.another_takes_the_lock().await;
                    let g = holder.acquire().await.map_err(|e| e.to_string())?;
                    *held.borrow_mut() = Some(g);
                    checked.and(next).and(other)?;
                    Ok(done.is_some())
                }
            })
            .await;
            assert_swept(&format!("{what} {op} (held)"), &report, must_complete);
            drop(held);
        }
    }
}

/// release() and dropping the guard.
async fn mutex_release_and_guard_drop(pause: Pause) {
    let env = Env::new("release", pause).await;
    let env = &env;
    let m = &InterProcessMutex::new(env.c.clone(), &env.path);
    drop(m.acquire().await.unwrap());
    env.clean(&[], &[]).await.unwrap();
    env.another_takes_the_lock().await.unwrap();
    let report = sweep(&env.plan, |k| async move {
        let g = m.acquire().await.map_err(|e| e.to_string())?;
        let reentered = g.reenter().map_err(|e| e.to_string())?;
        drop(reentered);
        let done = poll_then_drop(g.release(), k, env.plan.pause).await;
        if let Some(r) = &done {
            r.as_ref().map_err(|e| e.to_string())?;
        }
        env.clean(&[], &[]).await?;
        env.another_takes_the_lock().await?;
        Ok(done.is_some())
    })
    .await;
    assert_swept("release", &report, true);
}

async fn selector_close_queued_and_leading(pause: Pause) {
    let env = Env::new("selector", pause).await;
    let env = &env;
    let holder_client = client(&shared()).await;
    let holder = &InterProcessMutex::new(holder_client.clone(), &env.path);
    for leading in [false, true] {
        let report = sweep(&env.plan, |k| async move {
            let hg = if leading {
                None
            } else {
                Some(holder.acquire().await.map_err(|e| e.to_string())?)
            };
            let selector = LeaderSelector::builder(env.c.clone(), &env.path)
                .task(|lead| async move {
                    lead.lost().await;
                })
                .start()
                .await
                .map_err(|e| e.to_string())?;
            if leading {
                let mut w = selector.status();
                tokio::time::timeout(SETTLE, w.wait_for(|s| s.is_leader()))
                    .await
                    .map_err(|_| "never led")?
                    .map_err(|e| e.to_string())?;
            } else {
                recipes_support::until_children(&env.observer, &env.path, 2).await;
            }
            // A close not yet sent leaves the selector in line: dropping it (with the
            // close's future) leaves too.
            let done = poll_then_drop(selector.close(), k, env.plan.pause).await;
            let checked = env.clean(&[], &[]).await;
            drop(hg);
            checked?;
            env.another_takes_the_lock().await?;
            Ok(done.is_some())
        })
        .await;
        assert_swept(
            &format!("selector close (leading: {leading})"),
            &report,
            true,
        );
    }
}

/// interrupt_leadership (relinquish) and requeue are not async: one check each.
#[tokio::test]
async fn selector_relinquish_and_requeue() {
    let env = Env::new("relinquish", Pause::Yield).await;
    let env = &env;
    let selector = LeaderSelector::builder(env.c.clone(), &env.path)
        .task(|lead| async move {
            lead.lost().await;
        })
        .start()
        .await
        .expect("the selector starts");
    let mut w = selector.status();
    tokio::time::timeout(SETTLE, w.wait_for(|s| s.is_leader()))
        .await
        .unwrap()
        .unwrap();
    selector.interrupt_leadership();
    tokio::time::timeout(SETTLE, w.wait_for(|s| !s.is_leader()))
        .await
        .unwrap()
        .unwrap();
    env.clean(&[], &[]).await.unwrap();
    env.another_takes_the_lock().await.unwrap();
    assert!(selector.requeue());
    tokio::time::timeout(SETTLE, w.wait_for(|s| s.is_leader()))
        .await
        .unwrap()
        .unwrap();
    selector.close().await.unwrap();
    env.clean(&[], &[]).await.unwrap();
}

async fn latch_start_and_close(pause: Pause) {
    let env = Env::new("latch", pause).await;
    let env = &env;
    let report = sweep(&env.plan, |k| async move {
        let start = LeaderLatch::builder(env.c.clone(), &env.path).start();
        let done = poll_then_drop(start, k, env.plan.pause).await;
        if let Some(latch) = done {
            latch
                .map_err(|e| e.to_string())?
                .close()
                .await
                .map_err(|e| e.to_string())?;
            env.clean(&[], &[]).await?;
            return Ok(true);
        }
        env.clean(&[], &[]).await?;
        Ok(false)
    })
    .await;
    assert_swept("latch start", &report, true);
    for mode in [CloseMode::Silent, CloseMode::NotifyLeader] {
        let report = sweep(&env.plan, |k| async move {
            let latch = LeaderLatch::builder(env.c.clone(), &env.path)
                .start()
                .await
                .map_err(|e| e.to_string())?;
            let done = poll_then_drop(latch.close_with(mode), k, env.plan.pause).await;
            env.clean(&[], &[]).await?;
            Ok(done.is_some())
        })
        .await;
        assert_swept(&format!("latch close ({mode:?})"), &report, true);
    }
}

async fn protected_create(pause: Pause) {
    let env = Env::new("protected", pause).await;
    let env = &env;
    for list in [false, true] {
        let create = &ProtectedCreate::new(env.path.clone(), "n-");
        let report = sweep(&env.plan, |k| async move {
            let fut = async {
                if list {
                    create.create_and_list(&env.c).await.map(|(n, _)| n)
                } else {
                    create.create(&env.c).await
                }
            };
            match poll_then_drop(fut, k, env.plan.pause).await {
                Some(node) => {
                    let node = node.map_err(|e| e.to_string())?;
                    env.clean(std::slice::from_ref(&node.path), &[]).await?;
                    env.c
                        .delete(&node.path, Version::Any)
                        .await
                        .map_err(|e| e.to_string())?;
                    Ok(true)
                }
                None => env.clean(&[], &[]).await.map(|_| false),
            }
        })
        .await;
        assert_swept(&format!("protected create (list: {list})"), &report, true);
    }
}

/// The session operations that set watches: a dropped call leaves no watch on the server;
/// a completed one leaves exactly its watch, gone once the watch is dropped.
async fn session_watch_operations(pause: Pause) {
    let env = Env::new("watches", pause).await;
    let env = &env;
    env.observer
        .create(&env.path, b"", CreateOptions::persistent())
        .await
        .unwrap();
    let there = format!("{}/there", env.path);
    let missing = format!("{}/missing", env.path);
    env.observer
        .create(&there, b"", CreateOptions::persistent())
        .await
        .unwrap();
    let ops = [
        "get_data_watch",
        "exists_watch (there)",
        "exists_watch (missing)",
        "get_children_watch",
        "add_watch (persistent)",
        "add_watch (recursive)",
    ];
    for op in ops {
        let report = sweep(&env.plan, |k| {
            let (c, there, missing) = (&env.c, &there, &missing);
            async move {
                let fut = async {
                    match op {
                        "get_data_watch" => c
                            .get_data_watch(there)
                            .await
                            .map(|r| (Box::new(r.2) as Box<dyn Any + Send>, there.clone())),
                        "exists_watch (there)" => c
                            .exists_watch(there)
                            .await
                            .map(|r| (Box::new(r.1) as Box<dyn Any + Send>, there.clone())),
                        "exists_watch (missing)" => c
                            .exists_watch(missing)
                            .await
                            .map(|r| (Box::new(r.1) as Box<dyn Any + Send>, missing.clone())),
                        "get_children_watch" => c
                            .get_children_watch(there)
                            .await
                            .map(|r| (Box::new(r.2) as Box<dyn Any + Send>, there.clone())),
                        "add_watch (persistent)" => c
                            .add_watch(there, AddWatchMode::Persistent)
                            .await
                            .map(|w| (Box::new(w) as Box<dyn Any + Send>, there.clone())),
                        _ => c
                            .add_watch(there, AddWatchMode::PersistentRecursive)
                            .await
                            .map(|w| (Box::new(w) as Box<dyn Any + Send>, there.clone())),
                    }
                };
                match poll_then_drop(fut, k, env.plan.pause).await {
                    Some(r) => {
                        let (watch, path) = r.map_err(|e| e.to_string())?;
                        env.clean(&[], std::slice::from_ref(&path)).await?;
                        let mut found = watches_of(env.server, ephemeral_owner(c), &env.path)
                            .map_err(|e| e.to_string())?;
                        found.extend(
                            child_watches(c, std::slice::from_ref(&path))
                                .await
                                .map_err(|e| e.to_string())?,
                        );
                        if !found.contains(&path) {
                            return Err(format!("{op} completed, server holds {found:?}"));
                        }
                        drop(watch);
                        env.clean(&[], &[]).await?;
                        Ok(true)
                    }
                    None => env.clean(&[], &[]).await.map(|_| false),
                }
            }
        })
        .await;
        assert_swept(op, &report, true);
    }
}

/// The cache's start (which adds its persistent watch) and its wait for the initial load,
/// dropped at every point; and the cache itself dropped after each: no watch is left.
async fn cache_start_and_close(pause: Pause) {
    let env = Env::new("cache", pause).await;
    let env = &env;
    for p in [env.path.clone(), format!("{}/there", env.path)] {
        env.observer
            .create(&p, b"x", CreateOptions::persistent())
            .await
            .unwrap();
    }
    let report = sweep(&env.plan, |k| async move {
        let start = Cache::builder(env.c.clone(), &env.path).start();
        let done = poll_then_drop(start, k, env.plan.pause).await;
        let completed = match done {
            Some(cache) => {
                let cache = cache.map_err(|e| e.to_string())?;
                drop(cache);
                true
            }
            None => false,
        };
        env.clean(&[], &[]).await?;
        Ok(completed)
    })
    .await;
    assert_swept("cache start", &report, true);
    let report = sweep(&env.plan, |k| async move {
        let cache = Cache::builder(env.c.clone(), &env.path)
            .start()
            .await
            .map_err(|e| e.to_string())?;
        // Loaded when started.
        if cache.len() != 2 {
            return Err(format!("loaded {} of 2 znodes", cache.len()));
        }
        let done = poll_then_drop(cache.close(), k, env.plan.pause).await;
        let completed = done.is_some();
        if let Some(r) = done {
            r.map_err(|e| e.to_string())?;
        }
        env.clean(&[], &[]).await?;
        Ok(completed)
    })
    .await;
    assert_swept("cache close", &report, true);
}

/// The sweep's checks can fail: a future that leaks a node or a watch is caught.
#[tokio::test]
async fn the_sweep_catches_leaks() {
    let env = &Env::new("leaky", Pause::Sleep(Duration::from_millis(1))).await;
    env.observer
        .create(&env.path, b"", CreateOptions::persistent())
        .await
        .unwrap();
    let plan = SweepPlan {
        dense: 12,
        max: 12,
        finish_within: None,
        ..env.plan.clone()
    };
    let leaky = |node: bool| {
        let c = env.c.clone();
        let target = format!("{}/leak", env.path);
        async move {
            if node {
                let _ = c.create(&target, b"", CreateOptions::ephemeral()).await;
            } else if let Ok((_, w)) = c.exists_watch(&target).await {
                // Kept alive past the drop of this future: a watch nobody can use.
                std::mem::forget(w);
            }
            std::future::pending::<()>().await
        }
    };
    for node in [true, false] {
        let report = sweep(&plan, |k| async move {
            let _ = poll_then_drop(leaky(node), k, plan.pause).await;
            let session = ephemeral_owner(&env.c);
            let found = expect_clean(
                &env.observer,
                env.server,
                session,
                &env.path,
                &[],
                &[],
                Duration::from_millis(300),
            )
            .await;
            let _ = env
                .c
                .delete(&format!("{}/leak", env.path), Version::Any)
                .await;
            found.map(|_| false)
        })
        .await;
        assert!(
            !report.violations.is_empty(),
            "the leak (node: {node}) went unseen: {report:?}"
        );
    }
}

/// update_server_list and get_config_watch dropped at every point: the list is the old or
/// the new one (the same server here, so the session stays where it is either way), the
/// handle works on, and no watch on the config znode is left that nobody holds.
async fn server_list_and_config_watch(pause: Pause) {
    const CONFIG: &str = "/zookeeper/config";
    let env = Env::new("server-list", pause).await;
    let env = &env;
    let server = env.server.to_string();
    let report = sweep(&env.plan, |k| {
        let server = &server;
        async move {
            let done = poll_then_drop(env.c.update_server_list(server), k, env.plan.pause).await;
            if let Some(r) = &done {
                r.as_ref().map_err(|e| format!("update_server_list: {e}"))?;
            }
            env.clean(&[], &[]).await?;
            match env.c.state() {
                SessionState::Connected => Ok(done.is_some()),
                other => Err(format!("the session moved: {other:?}")),
            }
        }
    })
    .await;
    assert_swept("update_server_list", &report, true);
    let config_watches = || async {
        let session = ephemeral_owner(&env.c);
        watches_of(env.server, session, CONFIG).map_err(|e| e.to_string())
    };
    let none_left = || {
        conformance::sweep::settle("no config watch", SETTLE, || async {
            let held = config_watches().await?;
            held.is_empty().then_some(()).ok_or(format!("{held:?}"))
        })
    };
    let report = sweep(&env.plan, |k| async move {
        match poll_then_drop(env.c.get_config_watch(), k, env.plan.pause).await {
            Some(r) => {
                let (_, _, watch) = r.map_err(|e| format!("get_config_watch: {e}"))?;
                let held = config_watches().await?;
                if held != [CONFIG] {
                    return Err(format!("get_config_watch completed, server holds {held:?}"));
                }
                drop(watch);
                none_left().await?;
                Ok(true)
            }
            None => {
                none_left().await?;
                env.clean(&[], &[]).await.map(|()| false)
            }
        }
    })
    .await;
    assert_swept("get_config_watch", &report, true);
}

/// Each sweep twice: with a yield between polls, and with a 1 ms sleep.
macro_rules! with_both_pauses {
    ($($name:ident),* $(,)?) => {
        mod yielding {
            $(#[tokio::test]
            async fn $name() {
                super::$name(conformance::sweep::Pause::Yield).await
            })*
        }
        mod sleeping {
            $(#[tokio::test]
            async fn $name() {
                super::$name(conformance::sweep::Pause::Sleep(std::time::Duration::from_millis(1))).await
            })*
        }
    };
}

with_both_pauses!(
    mutex_acquire_on_a_free_lock,
    mutex_acquires_on_a_held_lock,
    mutex_release_and_guard_drop,
    selector_close_queued_and_leading,
    latch_start_and_close,
    protected_create,
    session_watch_operations,
    cache_start_and_close,
    semaphore_acquire_and_release,
    rw_lock_acquires,
    counters,
    barrier_and_nodes,
    semaphore_tries_and_semaphore_mutex,
    multi_lock_acquire_and_release,
    distributed_barrier_operations,
    server_list_and_config_watch,
    distributed_queue_operations,
    simple_queue_operations,
    kazoo_queue_operations,
    kazoo_locking_queue_operations,
    discovery_start_and_close,
    discovery_register_update_unregister,
    service_cache_and_provider
);
