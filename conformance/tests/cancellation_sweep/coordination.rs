//! The sweep over the coordination recipes and service building blocks: the semaphore, the
//! read/write lock, the counters, the double barrier, PersistentNode and GroupMember. Each
//! operation is dropped at every k; after each drop the session owns no node under the
//! test's path but those promised, and holds no watch there.

use std::{future::Future, time::Duration};

use conformance::sweep::{assert_swept, poll_then_drop, sweep, Pause, SweepPlan};
use zk_recipes::{
    DistributedAtomicLong, DoubleBarrier, GroupMember, InterProcessSemaphoreV2, PersistentNode,
    ReadWriteLock, RecipeError, SharedCount,
};

use super::{Env, SETTLE};

/// What the session may own under the path after a drop: these nodes, watches on these
/// paths.
pub(super) type Promised<'a> = (&'a [String], &'a [String]);

/// Sweeps `op`, made afresh for each k. After a drop: nothing of the session's under the
/// path but what is `promised`. A completed `op` (a timeout too) ends the sweep; what it
/// returns is dropped (a lease or guard gives itself back).
pub(super) async fn sweep_op<T, F, Fut>(
    env: &Env,
    what: &str,
    must_complete: bool,
    promised: Promised<'_>,
    op: F,
) where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, RecipeError>>,
{
    let op = &op;
    let plan = SweepPlan {
        finish_within: must_complete.then_some(SETTLE),
        ..env.plan.clone()
    };
    let report = sweep(&plan, |k| async move {
        match poll_then_drop(op(), k, env.plan.pause).await {
            Some(Ok(_) | Err(RecipeError::Timeout)) => Ok(true),
            Some(Err(e)) => Err(e.to_string()),
            None => env.clean(promised.0, promised.1).await.map(|()| false),
        }
    })
    .await;
    assert_swept(what, &report, must_complete);
}

/// Nothing promised.
pub(super) const NOTHING: Promised<'static> = (&[], &[]);

/// A short deadline, for the operations that end on their own on a busy path.
pub(super) const SHORT: Duration = Duration::from_millis(30);

pub(super) async fn semaphore_acquire_and_release(pause: Pause) {
    let env = Env::new("semaphore", pause).await;
    let env = &env;
    let ours = InterProcessSemaphoreV2::new(env.c.clone(), &env.path, 1);
    sweep_op(env, "semaphore acquire (free)", true, NOTHING, || {
        ours.acquire()
    })
    .await;
    let theirs = InterProcessSemaphoreV2::new(env.observer.clone(), &env.path, 1);
    let held = theirs.acquire().await.unwrap();
    sweep_op(env, "semaphore acquire (full)", false, NOTHING, || {
        ours.acquire()
    })
    .await;
    let timed = pause != Pause::Yield;
    sweep_op(
        env,
        "semaphore acquire_many_timeout (full)",
        timed,
        NOTHING,
        || ours.acquire_many_timeout(1, SHORT),
    )
    .await;
    held.release().await.unwrap();
    // A held lease's fenced write: its node, and its monitor's watch on it.
    let lease = ours.acquire().await.unwrap();
    let data = format!("{}/data", env.path);
    env.observer
        .create(&data, b"", zk_session::CreateOptions::persistent())
        .await
        .unwrap();
    let promised = [lease.path().to_owned()];
    sweep_op(
        env,
        "lease fenced_multi",
        true,
        (&promised, &promised),
        || {
            lease.fenced_multi([zk_session::Op::set_data(
                &data,
                b"x",
                zk_session::Version::Any,
            )])
        },
    )
    .await;
    lease.release().await.unwrap();
    let (ours, theirs) = (&ours, &theirs);
    let report = sweep(&env.plan, |k| async move {
        let lease = ours.acquire().await.map_err(|e| format!("ours: {e}"))?;
        let done = poll_then_drop(lease.release(), k, env.plan.pause).await;
        env.clean(&[], &[]).await?;
        // The lease is back: the other side takes it at once.
        let l = theirs.acquire_timeout(Duration::from_secs(10)).await;
        l.map_err(|e| e.to_string())?
            .release()
            .await
            .map_err(|e| e.to_string())?;
        Ok(done.is_some())
    })
    .await;
    assert_swept("lease release", &report, true);
}

pub(super) async fn rw_lock_acquires(pause: Pause) {
    let env = Env::new("rwlock", pause).await;
    let env = &env;
    let ours = ReadWriteLock::new(env.c.clone(), &env.path);
    let theirs = ReadWriteLock::new(env.observer.clone(), &env.path);
    sweep_op(env, "read acquire (free)", true, NOTHING, || {
        ours.read_lock().acquire()
    })
    .await;
    let w = theirs.write_lock().acquire().await.unwrap();
    sweep_op(env, "read acquire (write held)", false, NOTHING, || {
        ours.read_lock().acquire()
    })
    .await;
    drop(w);
    let r = theirs.read_lock().acquire().await.unwrap();
    sweep_op(env, "write acquire (read held)", false, NOTHING, || {
        ours.write_lock().acquire()
    })
    .await;
    drop(r);
    let w = ours.write_lock().acquire().await.unwrap();
    let promised = [w.path().to_owned()];
    // The held write lock: its node, and its guard's watch on it.
    sweep_op(
        env,
        "read_while_writing",
        true,
        (&promised, &promised),
        || ours.read_while_writing(&w),
    )
    .await;
}

pub(super) async fn counters(pause: Pause) {
    let env = Env::new("counters", pause).await;
    let env = &env;
    let count_path = format!("{}/count", env.path);
    sweep_op(env, "SharedCount::start", true, NOTHING, || {
        SharedCount::builder(env.c.clone(), &count_path)
            .seed(3)
            .start()
    })
    .await;
    let count = SharedCount::builder(env.c.clone(), &count_path)
        .seed(3)
        .start()
        .await
        .unwrap();
    let watched = [count_path.clone()];
    sweep_op(env, "SharedCount::try_set", true, (&[], &watched), || {
        count.try_set(count.versioned(), 4)
    })
    .await;
    sweep_op(env, "SharedCount::set", true, (&[], &watched), || {
        count.set(5)
    })
    .await;
    let n = DistributedAtomicLong::builder(env.c.clone(), format!("{}/long", env.path))
        .promote_to_lock(
            format!("{}/long-lock", env.path),
            Duration::from_secs(5),
            zk_session::RetryPolicy::none(),
        )
        .build();
    sweep_op(
        env,
        "DistributedAtomicLong::increment",
        true,
        (&[], &watched),
        || n.increment(),
    )
    .await;
    sweep_op(
        env,
        "DistributedAtomicLong::compare_and_set",
        true,
        (&[], &watched),
        || n.compare_and_set(0, 1),
    )
    .await;
}

pub(super) async fn barrier_and_nodes(pause: Pause) {
    let env = Env::new("barrier", pause).await;
    let env = &env;
    let lonely = DoubleBarrier::new(env.c.clone(), &env.path, 2);
    sweep_op(
        env,
        "barrier enter (alone of 2)",
        false,
        NOTHING,
        || async { lonely.acquire().await.map(drop) },
    )
    .await;
    let single = DoubleBarrier::new(env.c.clone(), format!("{}/one", env.path), 1);
    let report = sweep(&env.plan, |k| {
        let single = &single;
        async move {
            let member = single.acquire().await.map_err(|e| e.to_string())?;
            // Even a leave never polled takes the member's node away: it owns the member.
            let done = poll_then_drop(member.release(), k, env.plan.pause).await;
            env.clean(&[], &[]).await?;
            Ok(done.is_some())
        }
    })
    .await;
    assert_swept("barrier leave", &report, true);
    // A member dropped after (or while) entering, never leaving: its node goes with it.
    let dropped = format!("{}/dropped", env.path);
    let report = sweep(&env.plan, |k| {
        let dropped = &dropped;
        async move {
            let barrier = DoubleBarrier::new(env.c.clone(), dropped, 1);
            let done = poll_then_drop(barrier.acquire(), k, env.plan.pause)
                .await
                .map(|entered| entered.map(drop));
            drop(barrier);
            env.clean(&[], &[]).await?;
            match done {
                Some(Err(e)) => Err(e.to_string()),
                done => Ok(done.is_some()),
            }
        }
    })
    .await;
    assert_swept("barrier member dropped after enter", &report, true);
    let node_path = format!("{}/node", env.path);
    sweep_op(env, "PersistentNode start", true, NOTHING, || {
        PersistentNode::builder(env.c.clone(), &node_path)
            .data(b"x")
            .start()
    })
    .await;
    let group = format!("{}/group", env.path);
    sweep_op(env, "GroupMember start", true, NOTHING, || {
        GroupMember::builder(env.c.clone(), &group).id("me").start()
    })
    .await;
    let report = sweep(&env.plan, |k| {
        let node_path = &node_path;
        async move {
            let node = PersistentNode::builder(env.c.clone(), node_path)
                .data(b"x")
                .start()
                .await
                .map_err(|e| e.to_string())?;
            let done = poll_then_drop(node.close(), k, env.plan.pause).await;
            env.clean(&[], &[]).await?;
            Ok(done.is_some())
        }
    })
    .await;
    assert_swept("PersistentNode close", &report, true);
    let report = sweep(&env.plan, |k| {
        let group = &group;
        async move {
            let me = GroupMember::builder(env.c.clone(), group)
                .id("me")
                .payload(b"x")
                .start()
                .await
                .map_err(|e| e.to_string())?;
            let done = poll_then_drop(me.close(), k, env.plan.pause).await;
            env.clean(&[], &[]).await?;
            Ok(done.is_some())
        }
    })
    .await;
    assert_swept("GroupMember close", &report, true);
}
