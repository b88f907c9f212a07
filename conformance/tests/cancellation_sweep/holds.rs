//! The sweep over the holds added with the one hold contract: the semaphore's try, the
//! semaphore mutex, the multi-lock, and the distributed barrier's set, remove and wait.
//! Each operation is dropped at every k; after each drop the session owns no node under the
//! test's path and holds no watch there.

use conformance::sweep::{assert_swept, poll_then_drop, sweep, Pause};
use zk_recipes::{
    DistributedBarrier, InterProcessMultiLock, InterProcessMutex, InterProcessSemaphoreMutex,
    InterProcessSemaphoreV2,
};

use super::{
    coordination::{sweep_op, NOTHING, SHORT},
    Env,
};

/// Sweeps the three acquires of `$hold` (a recipe with the hold contract) while another
/// holds it: none may leave a node or a watch behind; the timed and the try complete.
macro_rules! sweep_busy {
    ($env:expr, $what:literal, $hold:expr, $timed:expr) => {
        sweep_op($env, concat!($what, ": acquire"), false, NOTHING, || {
            $hold.acquire()
        })
        .await;
        sweep_op(
            $env,
            concat!($what, ": acquire_timeout"),
            $timed,
            NOTHING,
            || $hold.acquire_timeout(SHORT),
        )
        .await;
        sweep_op($env, concat!($what, ": try_acquire"), true, NOTHING, || {
            $hold.try_acquire()
        })
        .await;
    };
}

pub(super) async fn semaphore_tries_and_semaphore_mutex(pause: Pause) {
    let env = Env::new("semmutex", pause).await;
    let env = &env;
    let timed = pause != Pause::Yield;
    let ours = InterProcessSemaphoreMutex::new(env.c.clone(), &env.path);
    sweep_op(
        env,
        "semaphore mutex try_acquire (free)",
        true,
        NOTHING,
        || ours.try_acquire(),
    )
    .await;
    sweep_op(env, "semaphore mutex acquire (free)", true, NOTHING, || {
        ours.acquire()
    })
    .await;
    let theirs = InterProcessSemaphoreMutex::new(env.observer.clone(), &env.path);
    let held = theirs.acquire().await.unwrap();
    sweep_busy!(env, "semaphore mutex (held)", ours, timed);
    held.release().await.unwrap();
    // The semaphore's try on a full semaphore of two: its lease node goes again.
    let two = InterProcessSemaphoreV2::new(env.c.clone(), format!("{}/two", env.path), 2);
    let full = InterProcessSemaphoreV2::new(env.observer.clone(), two.path(), 2)
        .acquire_many(2)
        .await
        .unwrap();
    sweep_op(env, "semaphore try_acquire (full)", true, NOTHING, || {
        two.try_acquire()
    })
    .await;
    drop(full);
}

pub(super) async fn multi_lock_acquire_and_release(pause: Pause) {
    let env = Env::new("multilock", pause).await;
    let env = &env;
    let timed = pause != Pause::Yield;
    let paths = [format!("{}/a", env.path), format!("{}/b", env.path)];
    let ours = InterProcessMultiLock::new(env.c.clone(), paths.clone());
    sweep_op(env, "multi-lock acquire (free)", true, NOTHING, || {
        ours.acquire()
    })
    .await;
    // The second lock held elsewhere: the first, taken, must be given back on every drop.
    let held = InterProcessMutex::new(env.observer.clone(), &paths[1])
        .acquire()
        .await
        .unwrap();
    sweep_busy!(env, "multi-lock (second held)", ours, timed);
    held.release().await.unwrap();
    let ours = &ours;
    let report = sweep(&env.plan, |k| async move {
        let guard = ours.acquire().await.map_err(|e| format!("ours: {e}"))?;
        let done = poll_then_drop(guard.release(), k, env.plan.pause).await;
        env.clean(&[], &[]).await?;
        Ok(done.is_some())
    })
    .await;
    assert_swept("multi-lock release", &report, true);
}

pub(super) async fn distributed_barrier_operations(pause: Pause) {
    let env = Env::new("dbarrier", pause).await;
    let env = &env;
    let gate = DistributedBarrier::new(env.c.clone(), format!("{}/gate", env.path));
    sweep_op(env, "distributed barrier set", true, NOTHING, || gate.set()).await;
    sweep_op(
        env,
        "distributed barrier wait (set)",
        false,
        NOTHING,
        || gate.wait(),
    )
    .await;
    sweep_op(env, "distributed barrier remove", true, NOTHING, || {
        gate.remove()
    })
    .await;
    sweep_op(
        env,
        "distributed barrier wait (open)",
        true,
        NOTHING,
        || gate.wait(),
    )
    .await;
}
