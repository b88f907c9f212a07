//! The sweep over the queues: DistributedQueue's put, take (plain and lock-safe) and a lock-safe
//! item's done and release; SimpleDistributedQueue's offer and take; KazooQueue's put and
//! get; KazooLockingQueue's put, get, consume and release. Each is dropped at every k; after
//! each drop the session owns no znode under the test's path (no marker, no lock or `taken`
//! node left) and holds no watch there but its consumer's children watch on the queue, and
//! the queue holds what it must: a dropped take or release leaves the item in the queue,
//! once; a dropped put or done leaves it in once or not at all.
//!
//! Each step starts from an empty queue (the observer deletes what is left) and puts what
//! the operation needs through a producer of its own.

use std::future::Future;

use conformance::sweep::{assert_swept, poll_then_drop, settle, sweep, Pause, SweepPlan};
use zk_recipes::{
    DistributedQueue, KazooLockingQueue, KazooQueue, RecipeError, SimpleDistributedQueue,
};
use zk_session::Version;

use super::{Env, SETTLE};

/// A queue's znodes under the test's path: its items (named `prefix…`) in `dir`, its locks
/// in `locks`.
struct Layout<'a> {
    env: &'a Env,
    dir: String,
    prefix: &'static str,
    locks: Option<String>,
}

impl Layout<'_> {
    async fn names(&self, dir: &str) -> Result<Vec<String>, String> {
        match self.env.observer.get_children(dir).await {
            Ok(names) => Ok(names),
            Err(e) if e.code() == Some(zk_session::ErrorCode::NoNode) => Ok(vec![]),
            Err(e) => Err(format!("listing {dir}: {e}")),
        }
    }

    async fn items(&self) -> Result<Vec<String>, String> {
        let mut names = self.names(&self.dir).await?;
        names.retain(|n| n.starts_with(self.prefix));
        Ok(names)
    }

    async fn locks(&self) -> Result<Vec<String>, String> {
        match &self.locks {
            Some(locks) => self.names(locks).await,
            None => Ok(vec![]),
        }
    }

    /// Empties the queue (items and locks), as the observer.
    async fn reset(&self) {
        for (dir, names) in [
            (self.dir.clone(), self.items().await.unwrap()),
            (
                self.locks.clone().unwrap_or_default(),
                self.locks().await.unwrap(),
            ),
        ] {
            for n in names {
                let _ = self
                    .env
                    .observer
                    .delete(&format!("{dir}/{n}"), Version::Any)
                    .await;
            }
        }
    }

    /// Nothing of the session's left but the consumer's children watch, no lock, and (once
    /// background work has settled) a number of items in `want`.
    async fn check(&self, want: &[usize]) -> Result<(), String> {
        self.env.clean(&[], std::slice::from_ref(&self.dir)).await?;
        settle("the queue's items and locks", SETTLE, || async {
            let (items, locks) = (self.items().await?, self.locks().await?);
            if want.contains(&items.len()) && locks.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "items {items:?} (want {want:?} of them), locks {locks:?}"
                ))
            }
        })
        .await
    }
}

/// Sweeps `op`, given what `setup` made (after an empty queue) at each k: after a drop the
/// queue holds one of `dropped` items, after completion `completed`; nothing else is left.
async fn sweep_queue<V, T, S, SF, O, OF>(
    layout: &Layout<'_>,
    what: &str,
    setup: S,
    op: O,
    dropped: &[usize],
    completed: usize,
) where
    S: Fn() -> SF,
    SF: Future<Output = V>,
    O: Fn(V) -> OF,
    OF: Future<Output = Result<T, RecipeError>>,
{
    let (setup, op) = (&setup, &op);
    let plan = SweepPlan {
        finish_within: Some(SETTLE),
        ..layout.env.plan.clone()
    };
    let report = sweep(&plan, |k| async move {
        layout.reset().await;
        let input = setup().await;
        let done = match poll_then_drop(op(input), k, layout.env.plan.pause).await {
            Some(Ok(out)) => {
                // A held item given back by its drop, in the background.
                drop(out);
                true
            }
            Some(Err(e)) => return Err(format!("{what}: {e}")),
            None => false,
        };
        let want = if done { &[completed][..] } else { dropped };
        layout.check(want).await?;
        Ok(done)
    })
    .await;
    assert_swept(what, &report, true);
}

pub(super) async fn distributed_queue_operations(pause: Pause) {
    let env = Env::new("queue", pause).await;
    let env = &env;
    let (dir, locks) = (format!("{}/q", env.path), format!("{}/l", env.path));
    let producer = DistributedQueue::builder(env.observer.clone(), &dir)
        .start()
        .await
        .unwrap();
    let layout = Layout {
        env,
        dir: dir.clone(),
        prefix: "queue-",
        locks: Some(locks.clone()),
    };
    let plain = DistributedQueue::builder(env.c.clone(), &dir)
        .start()
        .await
        .unwrap();
    let locked = DistributedQueue::builder(env.c.clone(), &dir)
        .lock_safe(&locks)
        .start()
        .await
        .unwrap();
    let one = || async { producer.put(b"x").await.unwrap() };
    sweep_queue(
        &layout,
        "DistributedQueue put",
        || async {},
        |()| plain.put(b"x"),
        &[0, 1],
        1,
    )
    .await;
    sweep_queue(
        &layout,
        "DistributedQueue take (plain)",
        one,
        |()| plain.take(),
        &[1],
        0,
    )
    .await;
    sweep_queue(
        &layout,
        "DistributedQueue take (lock-safe)",
        one,
        |()| locked.take(),
        &[1],
        1,
    )
    .await;
    let held = || async {
        producer.put(b"x").await.unwrap();
        locked.take().await.unwrap()
    };
    sweep_queue(
        &layout,
        "QueueItem done",
        held,
        |item| item.done(),
        &[0, 1],
        0,
    )
    .await;
    sweep_queue(
        &layout,
        "QueueItem release",
        held,
        |item| item.release(),
        &[1],
        1,
    )
    .await;
}

pub(super) async fn simple_queue_operations(pause: Pause) {
    let env = Env::new("simple-queue", pause).await;
    let env = &env;
    let dir = format!("{}/q", env.path);
    let producer = SimpleDistributedQueue::builder(env.observer.clone(), &dir)
        .start()
        .await
        .unwrap();
    let layout = Layout {
        env,
        dir: dir.clone(),
        prefix: "qn-",
        locks: None,
    };
    let ours = SimpleDistributedQueue::builder(env.c.clone(), &dir)
        .start()
        .await
        .unwrap();
    let one = || async { producer.offer(b"x").await.unwrap() };
    sweep_queue(
        &layout,
        "SimpleDistributedQueue offer",
        || async {},
        |()| ours.offer(b"x"),
        &[0, 1],
        1,
    )
    .await;
    sweep_queue(
        &layout,
        "SimpleDistributedQueue take",
        one,
        |()| ours.take(),
        &[1],
        0,
    )
    .await;
}

pub(super) async fn kazoo_queue_operations(pause: Pause) {
    let env = Env::new("kazoo-queue", pause).await;
    let env = &env;
    let dir = format!("{}/q", env.path);
    let producer = KazooQueue::builder(env.observer.clone(), &dir)
        .start()
        .await
        .unwrap();
    let layout = Layout {
        env,
        dir: dir.clone(),
        prefix: "entry-",
        locks: None,
    };
    let ours = KazooQueue::builder(env.c.clone(), &dir)
        .start()
        .await
        .unwrap();
    let one = || async { producer.put(b"x").await.unwrap() };
    sweep_queue(
        &layout,
        "KazooQueue put",
        || async {},
        |()| ours.put_with_priority(b"x", 3),
        &[0, 1],
        1,
    )
    .await;
    sweep_queue(&layout, "KazooQueue get", one, |()| ours.get(), &[1], 0).await;
    sweep_queue(&layout, "KazooQueue take", one, |()| ours.take(), &[1], 0).await;
}

pub(super) async fn kazoo_locking_queue_operations(pause: Pause) {
    let env = Env::new("kazoo-locking", pause).await;
    let env = &env;
    let root = format!("{}/k", env.path);
    let producer = KazooLockingQueue::builder(env.observer.clone(), &root)
        .start()
        .await
        .unwrap();
    let layout = Layout {
        env,
        dir: format!("{root}/entries"),
        prefix: "entry-",
        locks: Some(format!("{root}/taken")),
    };
    let ours = KazooLockingQueue::builder(env.c.clone(), &root)
        .start()
        .await
        .unwrap();
    let one = || async { producer.put(b"x").await.unwrap() };
    sweep_queue(
        &layout,
        "KazooLockingQueue put_all",
        || async {},
        |()| ours.put_all([b"x"], 3),
        &[0, 1],
        1,
    )
    .await;
    sweep_queue(
        &layout,
        "KazooLockingQueue get",
        one,
        |()| ours.get(),
        &[1],
        1,
    )
    .await;
    let held = || async {
        producer.put(b"x").await.unwrap();
        ours.get().await.unwrap()
    };
    sweep_queue(
        &layout,
        "KazooLockedEntry consume",
        held,
        |e| e.consume(),
        &[0, 1],
        0,
    )
    .await;
    sweep_queue(
        &layout,
        "KazooLockedEntry release",
        held,
        |e| e.release(),
        &[1],
        1,
    )
    .await;
}
