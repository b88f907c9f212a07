//! Several locks taken as one, on Curator's protocol (InterProcessMultiLock): all or none,
//! in the order given, released in reverse order. Each lock is an
//! [`InterProcessMutex`], so a Curator process holding an InterProcessMultiLock (or a plain
//! InterProcessMutex) on any of the paths excludes ours.
//!
//! As in Curator the paths are not sorted: processes that name the same locks in different
//! orders can deadlock, so name them in one order everywhere. Where we differ: a timed
//! acquire has one deadline for all the locks (Curator gives each lock the whole wait, so
//! its `acquire(t)` may take n times t), and an acquire that fails stops at once and gives
//! back what it took (Curator goes on taking the rest first).

use std::time::Duration;

use tokio::time::Instant;
use zk_session::Client;

use crate::{InterProcessMutex, InterProcessMutexGuard, LostReason, RecipeError, Result};

/// Several locks held together; see the crate documentation for the hold contract.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use std::time::Duration;
/// use zk_recipes::InterProcessMultiLock;
///
/// let both = InterProcessMultiLock::new(client, ["/locks/accounts", "/locks/ledger"]);
/// let guard = both.acquire_timeout(Duration::from_secs(10)).await?; // both, or neither
/// // ... the critical section, watching guard.lost() ...
/// guard.release().await?; // the ledger's lock first, then the accounts'
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct InterProcessMultiLock {
    locks: Vec<InterProcessMutex>,
}

impl InterProcessMultiLock {
    /// The locks at `paths` (each an [`InterProcessMutex`]), taken in this order.
    ///
    /// See the example on [`InterProcessMultiLock`].
    pub fn new<P: Into<String>>(
        client: Client,
        paths: impl IntoIterator<Item = P>,
    ) -> InterProcessMultiLock {
        let locks = paths
            .into_iter()
            .map(|p| InterProcessMutex::new(client.clone(), p))
            .collect();
        InterProcessMultiLock { locks }
    }

    /// The given locks, taken in this order (built with their own options).
    ///
    /// ```no_run
    /// # fn f(client: zk_session::Client) {
    /// use zk_recipes::{InterProcessMultiLock, InterProcessMutex, SuspendPolicy};
    ///
    /// let patient = |path| {
    ///     InterProcessMutex::builder(client.clone(), path)
    ///         .suspend_policy(SuspendPolicy::WaitForLost)
    ///         .build()
    /// };
    /// let both = InterProcessMultiLock::from_locks([patient("/locks/a"), patient("/locks/b")]);
    /// # }
    /// ```
    pub fn from_locks(locks: impl IntoIterator<Item = InterProcessMutex>) -> InterProcessMultiLock {
        InterProcessMultiLock {
            locks: locks.into_iter().collect(),
        }
    }

    /// The lock paths, in the order they are taken.
    ///
    /// See the example on [`InterProcessMultiLock`].
    pub fn paths(&self) -> Vec<&str> {
        self.locks.iter().map(InterProcessMutex::path).collect()
    }

    /// Waits until every lock is held, taking them in order. When one fails (its session
    /// lost, say) those already taken are released, in reverse order, and the error is
    /// returned. Cancel-safe: a dropped acquire releases what it took (in the background).
    ///
    /// See the example on [`InterProcessMultiLock`].
    pub async fn acquire(&self) -> Result<MultiLockGuard> {
        self.take(Take::Wait(None))
            .await?
            .ok_or(RecipeError::Timeout)
    }

    /// Like [`acquire`](Self::acquire), giving up with [`RecipeError::Timeout`] once `wait`
    /// has passed, for all the locks together; nothing is left held.
    ///
    /// See the example on [`InterProcessMultiLock`].
    pub async fn acquire_timeout(&self, wait: Duration) -> Result<MultiLockGuard> {
        self.take(Take::Wait(Some(Instant::now() + wait)))
            .await?
            .ok_or(RecipeError::Timeout)
    }

    /// Takes every lock if each is free now; `None`, with nothing left held, when one is
    /// not.
    ///
    /// ```no_run
    /// # async fn f(both: zk_recipes::InterProcessMultiLock) -> zk_recipes::Result<()> {
    /// match both.try_acquire().await? {
    ///     Some(guard) => guard.release().await?,
    ///     None => println!("one of them is busy"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn try_acquire(&self) -> Result<Option<MultiLockGuard>> {
        self.take(Take::Try).await
    }

    async fn take(&self, how: Take) -> Result<Option<MultiLockGuard>> {
        // Built up as the locks are taken, so that dropping this future, or failing,
        // releases what was taken in reverse order.
        let mut held = MultiLockGuard {
            guards: Vec::with_capacity(self.locks.len()),
        };
        for lock in &self.locks {
            let guard = match how {
                Take::Try => lock.try_acquire().await,
                Take::Wait(None) => lock.acquire().await.map(Some),
                Take::Wait(Some(deadline)) => lock
                    .acquire_timeout(deadline.saturating_duration_since(Instant::now()))
                    .await
                    .map(Some),
            };
            match guard {
                Ok(Some(g)) => held.guards.push(g),
                Ok(None) => {
                    let _ = held.release().await;
                    return Ok(None);
                }
                Err(e) => {
                    let _ = held.release().await;
                    return Err(e);
                }
            }
        }
        Ok(Some(held))
    }
}

/// How an acquire of the locks waits.
#[derive(Debug, Clone, Copy)]
enum Take {
    /// Not at all.
    Try,
    /// Until the deadline, if any.
    Wait(Option<Instant>),
}

/// Every lock of an [`InterProcessMultiLock`], held: the guards of its mutexes in the order
/// they were taken. Release it with [`release`](Self::release) to learn the outcome;
/// dropping it releases too (in reverse order, deleting the nodes in the background).
///
/// ```no_run
/// # async fn work() {}
/// # async fn f(both: zk_recipes::InterProcessMultiLock) -> zk_recipes::Result<()> {
/// let guard = both.acquire().await?;
/// tokio::select! {
///     _ = work() => {}
///     reason = guard.lost() => eprintln!("stopped: one of the locks {reason}"),
/// }
/// guard.release().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping the guard releases the locks"]
pub struct MultiLockGuard {
    guards: Vec<InterProcessMutexGuard>,
}

impl MultiLockGuard {
    /// The guards of the locks, in the order they were taken (for their paths, fencing
    /// tokens and fenced writes).
    ///
    /// ```no_run
    /// # fn f(guard: zk_recipes::MultiLockGuard) {
    /// for lock in guard.guards() {
    ///     println!("{} with fencing token {}", lock.path(), lock.fencing_token());
    /// }
    /// # }
    /// ```
    pub fn guards(&self) -> &[InterProcessMutexGuard] {
        &self.guards
    }

    /// True while every lock is held and nothing has cast doubt on any of them.
    ///
    /// See the example on [`lost_reason`](Self::lost_reason).
    pub fn is_held(&self) -> bool {
        self.guards.iter().all(InterProcessMutexGuard::is_held)
    }

    /// Why one of the locks can no longer be trusted (the first, in the order taken), if
    /// one cannot.
    ///
    /// ```no_run
    /// # fn f(guard: zk_recipes::MultiLockGuard) {
    /// if !guard.is_held() {
    ///     println!("one of the locks is lost: {:?}", guard.lost_reason());
    /// }
    /// # }
    /// ```
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.guards
            .iter()
            .find_map(InterProcessMutexGuard::lost_reason)
    }

    /// Completes when any of the locks can no longer be trusted (at once if one already
    /// cannot). Cancel-safe; may be awaited from several places.
    ///
    /// See the example on [`MultiLockGuard`].
    pub async fn lost(&self) -> LostReason {
        if self.guards.is_empty() {
            return LostReason::Released;
        }
        let each = self.guards.iter().map(|g| Box::pin(g.lost()));
        futures_select_first(each.collect()).await
    }

    /// Releases every lock in reverse order, going on past failures; the first failure is
    /// returned.
    ///
    /// See the example on [`InterProcessMultiLock`].
    pub async fn release(mut self) -> Result<()> {
        let mut first = Ok(());
        while let Some(guard) = self.guards.pop() {
            let released = guard.release().await;
            if first.is_ok() {
                first = released;
            }
        }
        first
    }
}

impl Drop for MultiLockGuard {
    fn drop(&mut self) {
        // Reverse order, as a release: each guard's drop hands its deletion to a task.
        while let Some(guard) = self.guards.pop() {
            drop(guard);
        }
    }
}

/// The output of whichever of `futures` completes first.
async fn futures_select_first<F>(mut futures: Vec<std::pin::Pin<Box<F>>>) -> F::Output
where
    F: std::future::Future,
{
    std::future::poll_fn(|cx| {
        for f in futures.iter_mut() {
            if let std::task::Poll::Ready(out) = f.as_mut().poll(cx) {
                return std::task::Poll::Ready(out);
            }
        }
        std::task::Poll::Pending
    })
    .await
}
