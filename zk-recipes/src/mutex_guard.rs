//! [`InterProcessMutexGuard`] (its documentation is on the type).

// This file holds the guard. Beside it: the holding its re-entrant guards share, their
// count, and the monitor that ends the holding's trust.
mod holding;
mod holds;
pub(crate) mod monitor;

use std::sync::Arc;

use zk_session::{Op, OpResult};

use self::holds::LastHold;
pub(crate) use self::{
    holding::{holding_views, Holding},
    holds::Holds,
};
use crate::LostReason;
use crate::Result;

/// The guard of a held [`InterProcessMutex`](crate::mutex::InterProcessMutex): whether the lock can still be
/// trusted, a future that says when it cannot, a fencing token and fenced writes.
///
/// Curator's and kazoo's mutexes never watch the connection, so a holder is not told when a
/// GC pause or a partition has cost it the lock while someone else took it (CURATOR-206,
/// kazoo #2). Here each held lock has a monitor task that watches the session and keeps a data
/// watch on the lock node; the first of these ends the guard's trust:
///
/// - the connection is suspended, or the only server left is read-only (unless the mutex was
///   built with [`SuspendPolicy::WaitForLost`](crate::SuspendPolicy); Curator's default policy
///   treats it as lost too);
/// - no connection for the session timeout ([`LostReason::SessionLost`]), or the session
///   expired, was closed, or failed authentication;
/// - the lock node was deleted (by an administrator, or by the server with the session).
///
/// Trust never comes back: a guard that has lost the lock stays lost until released. That
/// holds across session expiry too: the client carries on with a new session, but the lock
/// node went with the old one, so the guard stays lost (its fenced writes are refused), and
/// the lock is had again only by a new acquire, on the new session.
///
/// Even a prompt signal comes too late for a write already on its way. Writes that must not
/// happen after the lock is gone go through [`InterProcessMutexGuard::fenced_multi`]: one transaction whose
/// first op checks that the lock node still exists, so the server refuses them once it is
/// gone; and [`InterProcessMutexGuard::fencing_token`] gives other systems a number that grows with every
/// new holder.
///
/// Proof of holding an [`InterProcessMutex`](crate::mutex::InterProcessMutex): one count of its re-entrant hold.
///
/// Release it with [`release`](Self::release) to learn the outcome; dropping it releases too,
/// deleting the node in the background when it was the last count.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::InterProcessMutex;
/// use zk_session::{Op, Version};
///
/// let mutex = InterProcessMutex::new(client, "/locks/report");
/// let guard = mutex.acquire().await?;
/// tokio::select! {
///     reason = guard.lost() => eprintln!("lost the lock: {reason}"),
///     _ = async {
///         // Refused by the server if the lock is gone by the time it arrives.
///         guard
///             .fenced_multi([Op::set_data("/report", b"done", Version::Any)])
///             .await?;
///         Ok::<_, zk_recipes::RecipeError>(())
///     } => {}
/// }
/// println!("fencing token {}", guard.fencing_token());
/// guard.release().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping the guard releases the lock"]
pub struct InterProcessMutexGuard {
    holds: Arc<Holds>,
    holding: Arc<Holding>,
    id: u64,
    released: bool,
}

impl InterProcessMutexGuard {
    /// The lock node's full path.
    ///
    /// See the example on [`lost_reason`](Self::lost_reason).
    pub fn path(&self) -> &str {
        self.holding.path()
    }

    /// True while this hold stands and nothing has cast doubt on the lock.
    ///
    /// See the example on [`lost_reason`](Self::lost_reason).
    pub fn is_held(&self) -> bool {
        self.holding.lost_reason().is_none() && self.holds.contains(self.id)
    }

    /// Why the lock can no longer be trusted, if it cannot.
    ///
    /// The same example serves for [`path`](Self::path) and [`is_held`](Self::is_held).
    ///
    /// ```no_run
    /// # fn example(guard: zk_recipes::InterProcessMutexGuard) {
    /// use zk_recipes::LostReason;
    ///
    /// if guard.is_held() {
    ///     println!("still holding {}", guard.path());
    /// } else if guard.lost_reason() == Some(LostReason::Suspended) {
    ///     println!("connection suspended: stop; trust does not come back, so release and retry");
    /// }
    /// # }
    /// ```
    pub fn lost_reason(&self) -> Option<LostReason> {
        match self.holding.lost_reason() {
            Some(r) => Some(r),
            None if !self.holds.contains(self.id) => Some(LostReason::Released),
            None => None,
        }
    }

    /// Completes when the lock can no longer be trusted (at once if it already cannot).
    /// Cancel-safe; may be awaited from several places.
    ///
    /// ```no_run
    /// # async fn work() {}
    /// # async fn f(guard: zk_recipes::InterProcessMutexGuard) {
    /// tokio::select! {
    ///     _ = work() => {}
    ///     reason = guard.lost() => eprintln!("stopped: lock {reason}"),
    /// }
    /// # }
    /// ```
    pub async fn lost(&self) -> LostReason {
        let mut lost = self.holding.subscribe_lost();
        let mut holds = self.holds.subscribe_changes();
        loop {
            if let Some(r) = *lost.borrow_and_update() {
                return r;
            }
            holds.borrow_and_update();
            if !self.holds.contains(self.id) {
                return LostReason::Released;
            }
            // Neither sender can close while this guard keeps the holding and the holds.
            tokio::select! {
                _ = lost.changed() => {}
                _ = holds.changed() => {}
            }
        }
    }

    /// A number that grows with every new holder of the lock: the zxid that created the lock
    /// node. A node created later always has a larger one, and the holder after us created its
    /// node after ours. Hand it to systems that can reject writes from an older holder.
    ///
    /// ```no_run
    /// # async fn f(guard: zk_recipes::InterProcessMutexGuard, storage_accepts: impl Fn(u64) -> bool) {
    /// // The storage remembers the highest token it has seen and refuses lower ones.
    /// assert!(storage_accepts(guard.fencing_token()));
    /// # }
    /// ```
    pub fn fencing_token(&self) -> u64 {
        self.holding.fencing_token()
    }

    /// Runs `ops` as one transaction behind a check that the lock node still exists, and
    /// returns their results. Once the node is gone (session expired, node deleted) the server
    /// refuses the whole transaction: that is [`RecipeError::Lost`](crate::RecipeError::Lost). It also fails at once,
    /// without sending, when this guard already knows the lock is lost. A failing op of the
    /// caller's is [`zk_session::Error::Multi`] with `index` counting the caller's ops only.
    ///
    /// ```no_run
    /// # async fn f(guard: zk_recipes::InterProcessMutexGuard) -> zk_recipes::Result<()> {
    /// use zk_session::{Op, Version};
    ///
    /// guard
    ///     .fenced_multi([
    ///         Op::set_data("/jobs/42/state", b"done", Version::Any),
    ///         Op::delete("/jobs/42/claim", Version::Any),
    ///     ])
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn fenced_multi(&self, ops: impl IntoIterator<Item = Op>) -> Result<Vec<OpResult>> {
        if let Some(r) = self.lost_reason() {
            return Err(holding::refusal(r));
        }
        self.holding.fenced_multi(ops).await
    }

    /// Re-enters the lock: another guard of the same hold, counting up at once without a
    /// request. Only a holder can do this, since only it has a guard; the node is deleted
    /// when the last of the guards is released. [`RecipeError::NotHeld`](crate::RecipeError::NotHeld) if this guard's hold
    /// was already given up, [`RecipeError::Lost`](crate::RecipeError::Lost) when the lock can no longer be trusted.
    ///
    /// ```no_run
    /// # async fn example(mutex: zk_recipes::InterProcessMutex) -> zk_recipes::Result<()> {
    /// let outer = mutex.acquire().await?;
    /// let inner = outer.reenter()?;
    /// assert_eq!((inner.path(), mutex.hold_count()), (outer.path(), 2));
    /// inner.release().await?; // the node stays: `outer` still holds
    /// outer.release().await?; // the last hold: the node is deleted
    /// # Ok(()) }
    /// ```
    pub fn reenter(&self) -> Result<InterProcessMutexGuard> {
        self.holds.reenter(self.id)
    }

    /// Gives up this hold; when it is the mutex's last, deletes the lock node. Local state
    /// is updated first, so a release during a connection loss cannot leave it inconsistent
    /// (CURATOR-678): if the delete cannot be done now, a background task keeps trying until
    /// the node or the session is gone. Cancel-safe: the deletion is owned by that task from
    /// the first poll, so dropping this future half-way leaves no node behind.
    ///
    /// ```no_run
    /// # async fn example(mutex: zk_recipes::InterProcessMutex) -> zk_recipes::Result<()> {
    /// let guard = mutex.acquire().await?;
    /// // ... the critical section ...
    /// // Unlike dropping the guard, this waits for the lock node's deletion when connected, and
    /// // reports a refusal.
    /// guard.release().await?;
    /// # Ok(()) }
    /// ```
    pub async fn release(mut self) -> Result<()> {
        self.released = true;
        match self.holds.drop_hold(self.id)? {
            Some(LastHold { holding, permit }) => holding.finish(permit).await,
            None => Ok(()),
        }
    }
}

impl Drop for InterProcessMutexGuard {
    fn drop(&mut self) {
        if !self.released {
            if let Ok(Some(last)) = self.holds.drop_hold(self.id) {
                last.holding.finish_in_background();
            }
        }
    }
}
