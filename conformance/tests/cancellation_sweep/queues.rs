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
    /// The queue type, naming the sweeps.
    name: &'static str,
    dir: String,
    prefix: &'static str,
    locks: Option<String>,
}

impl<'a> Layout<'a> {
    fn new(
        env: &'a Env,
        name: &'static str,
        dir: String,
        prefix: &'static str,
        locks: Option<String>,
    ) -> Self {
        Layout {
            env,
            name,
            dir,
            prefix,
            locks,
        }
    }

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

    /// Sweeps `op`, given what `setup` made (after an empty queue) at each k: the queue holds
    /// what `outcome` says; nothing else is left.
    async fn sweep<V, T, S, SF, O, OF>(&self, what: &str, setup: S, op: O, outcome: Outcome)
    where
        S: Fn() -> SF,
        SF: Future<Output = V>,
        O: Fn(V) -> OF,
        OF: Future<Output = Result<T, RecipeError>>,
    {
        let (setup, op) = (&setup, &op);
        let plan = SweepPlan {
            finish_within: Some(SETTLE),
            ..self.env.plan.clone()
        };
        let report = sweep(&plan, |k| async move {
            self.reset().await;
            let input = setup().await;
            let done = match poll_then_drop(op(input), k, self.env.plan.pause).await {
                Some(Ok(out)) => {
                    // A held item given back by its drop, in the background.
                    drop(out);
                    true
                }
                Some(Err(e)) => return Err(format!("{what}: {e}")),
                None => false,
            };
            let want = if done {
                &[outcome.completed][..]
            } else {
                outcome.dropped
            };
            self.check(want).await?;
            Ok(done)
        })
        .await;
        assert_swept(&format!("{} {what}", self.name), &report, true);
    }
}

/// How many items an operation leaves in the queue (of one there, or to be put).
#[derive(Clone, Copy)]
struct Outcome {
    dropped: &'static [usize],
    completed: usize,
}

/// A put or a done: the item once or not at all when dropped.
const PUT: Outcome = Outcome {
    dropped: &[0, 1],
    completed: 1,
};
const DONE: Outcome = Outcome {
    dropped: &[0, 1],
    completed: 0,
};
/// A take that removes the item: it stays, once, when dropped.
const TAKE: Outcome = Outcome {
    dropped: &[1],
    completed: 0,
};
/// A lock-safe take, or a release: the item stays either way.
const STAYS: Outcome = Outcome {
    dropped: &[1],
    completed: 1,
};

/// A queue of type `$queue` at `$path` on `$client`, started.
macro_rules! start {
    ($queue:ident, $client:expr, $path:expr) => {
        $queue::builder($client.clone(), &$path)
            .start()
            .await
            .unwrap()
    };
}

/// Nothing to set up.
async fn nothing() {}

pub(super) async fn distributed_queue_operations(pause: Pause) {
    let env = Env::new("queue", pause).await;
    let env = &env;
    let (dir, locks) = (format!("{}/q", env.path), format!("{}/l", env.path));
    let producer = start!(DistributedQueue, env.observer, dir);
    let l = Layout::new(
        env,
        "DistributedQueue",
        dir.clone(),
        "queue-",
        Some(locks.clone()),
    );
    let plain = start!(DistributedQueue, env.c, dir);
    let locked = DistributedQueue::builder(env.c.clone(), &dir)
        .lock_safe(&locks)
        .start()
        .await
        .unwrap();
    let one = || async { producer.put(b"x").await.unwrap() };
    l.sweep("put", nothing, |()| plain.put(b"x"), PUT).await;
    l.sweep("take (plain)", one, |()| plain.take(), TAKE).await;
    l.sweep("take (lock-safe)", one, |()| locked.take(), STAYS)
        .await;
    let held = || async {
        producer.put(b"x").await.unwrap();
        locked.take().await.unwrap()
    };
    l.sweep("item done", held, |item| item.done(), DONE).await;
    l.sweep("item release", held, |item| item.release(), STAYS)
        .await;
}

pub(super) async fn simple_queue_operations(pause: Pause) {
    let env = Env::new("simple-queue", pause).await;
    let env = &env;
    let dir = format!("{}/q", env.path);
    let producer = start!(SimpleDistributedQueue, env.observer, dir);
    let l = Layout::new(env, "SimpleDistributedQueue", dir.clone(), "qn-", None);
    let ours = start!(SimpleDistributedQueue, env.c, dir);
    let one = || async { producer.offer(b"x").await.unwrap() };
    l.sweep("offer", nothing, |()| ours.offer(b"x"), PUT).await;
    l.sweep("take", one, |()| ours.take(), TAKE).await;
}

pub(super) async fn kazoo_queue_operations(pause: Pause) {
    let env = Env::new("kazoo-queue", pause).await;
    let env = &env;
    let dir = format!("{}/q", env.path);
    let producer = start!(KazooQueue, env.observer, dir);
    let l = Layout::new(env, "KazooQueue", dir.clone(), "entry-", None);
    let ours = start!(KazooQueue, env.c, dir);
    let one = || async { producer.put(b"x").await.unwrap() };
    l.sweep("put", nothing, |()| ours.put_with_priority(b"x", 3), PUT)
        .await;
    l.sweep("get", one, |()| ours.get(), TAKE).await;
    l.sweep("take", one, |()| ours.take(), TAKE).await;
}

pub(super) async fn kazoo_locking_queue_operations(pause: Pause) {
    let env = Env::new("kazoo-locking", pause).await;
    let env = &env;
    let root = format!("{}/k", env.path);
    let producer = start!(KazooLockingQueue, env.observer, root);
    let l = Layout::new(
        env,
        "KazooLockingQueue",
        format!("{root}/entries"),
        "entry-",
        Some(format!("{root}/taken")),
    );
    let ours = start!(KazooLockingQueue, env.c, root);
    let one = || async { producer.put(b"x").await.unwrap() };
    l.sweep("put_all", nothing, |()| ours.put_all([b"x"], 3), PUT)
        .await;
    l.sweep("get", one, |()| ours.get(), STAYS).await;
    let held = || async {
        producer.put(b"x").await.unwrap();
        ours.get().await.unwrap()
    };
    l.sweep("entry consume", held, |e| e.consume(), DONE).await;
    l.sweep("entry release", held, |e| e.release(), STAYS).await;
}
