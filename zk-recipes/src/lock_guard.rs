//! The guard of a held [`Mutex`](crate::mutex::Mutex): whether the lock can still be
//! trusted, a future that says when it cannot, a fencing token and fenced writes.
//!
//! Curator's and kazoo's mutexes never watch the connection, so a holder is not told when a
//! GC pause or a partition has cost it the lock while someone else took it (CURATOR-206,
//! kazoo #2). Here each held lock has a monitor task that watches the session and keeps a data
//! watch on the lock node; the first of these ends the guard's trust:
//!
//! - the connection is suspended, or the only server left is read-only (unless the mutex was
//!   built with `suspended_is_lost(false)`; Curator's default policy treats it as lost too);
//! - no connection for the session timeout ([`LostReason::SessionLost`]), or the session
//!   expired, was closed, or failed authentication;
//! - the lock node was deleted (by an administrator, or by the server with the session).
//!
//! Trust never comes back: a guard that has lost the lock stays lost until released. That
//! holds across session expiry too: the client carries on with a new session, but the lock
//! node went with the old one, so the guard stays lost (its fenced writes are refused), and
//! the lock is had again only by a new acquire, on the new session.
//!
//! Even a prompt signal comes too late for a write already on its way. Writes that must not
//! happen after the lock is gone go through [`LockGuard::fenced_multi`]: one transaction whose
//! first op checks that the lock node still exists, so the server refuses them once it is
//! gone; and [`LockGuard::fencing_token`] gives other systems a number that grows with every
//! new holder.

use std::{
    fmt,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex as StdMutex, MutexGuard as StdMutexGuard,
    },
    time::Duration,
};

use tokio::{
    runtime::Handle,
    sync::{watch, OwnedMutexGuard},
    task::{AbortHandle, JoinHandle},
};
use zk_session::{
    Client, Error, ErrorCode, EventType, OneshotWatch, Op, OpResult, SessionEvent, SessionEvents,
    SessionState, Version,
};

use crate::{
    cleanup::{spawn_removal, Target},
    pending::data_watch,
    protected::{retry_delay, ProtectedNode},
    RecipeError, Result,
};

/// How long a release waits, after deleting the node, for the monitor to see the deletion
/// through its watch (normally at once: the event comes before the delete's reply).
const MONITOR_WIND_DOWN: Duration = Duration::from_millis(100);

/// Why a lock (or a guard's hold on it) can no longer be trusted.
///
/// ```rust
/// use zk_recipes::LostReason;
///
/// assert_eq!(LostReason::Expired.as_str(), "session expired");
/// assert_eq!(LostReason::NodeDeleted.to_string(), "lock node deleted");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LostReason {
    /// The connection was lost (or only a read-only server is reachable); the session may
    /// still live. Only with the default policy, see
    /// [`MutexBuilder::suspended_is_lost`](crate::mutex::MutexBuilder::suspended_is_lost).
    Suspended,
    /// No connection for the whole session timeout: the session is presumed expired.
    SessionLost,
    /// The ensemble expired the session; the lock node went with it.
    Expired,
    /// The client was closed.
    Closed,
    /// Authentication failed; the server closed the session.
    AuthFailed,
    /// The lock node was deleted.
    NodeDeleted,
    /// This hold was released.
    Released,
}

impl LostReason {
    /// A short description, as used in [`RecipeError::Lost`].
    ///
    /// See the example on [`LostReason`].
    pub fn as_str(self) -> &'static str {
        match self {
            LostReason::Suspended => "connection suspended",
            LostReason::SessionLost => "session lost",
            LostReason::Expired => "session expired",
            LostReason::Closed => "client closed",
            LostReason::AuthFailed => "authentication failed",
            LostReason::NodeDeleted => "lock node deleted",
            LostReason::Released => "released",
        }
    }
}

impl fmt::Display for LostReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One acquisition of the lock node, shared by the re-entrant guards of one mutex handle.
#[derive(Debug)]
pub(crate) struct Holding {
    client: Client,
    parent: String,
    node: ProtectedNode,
    lost: Arc<watch::Sender<Option<LostReason>>>,
    monitor: AbortHandle,
    /// The monitor task, for a release to let it end on its own.
    monitor_task: StdMutex<Option<JoinHandle<()>>>,
    /// True while the monitor holds a data watch on the node.
    watching: Arc<AtomicBool>,
    handle: Handle,
}

impl Holding {
    /// Starts watching the session and the node. `own_watch` is a data watch on the node
    /// already set while waiting, if any. Must be called inside a tokio runtime.
    pub(crate) fn start(
        client: Client,
        parent: String,
        node: ProtectedNode,
        own_watch: Option<OneshotWatch>,
        suspended_is_lost: bool,
    ) -> Arc<Holding> {
        let handle = Handle::current();
        let lost = Arc::new(watch::channel(None).0);
        // Subscribed before the monitor looks at the current state, so no change in between
        // goes unseen.
        let events = client.session_events();
        let watching = Arc::new(AtomicBool::new(own_watch.is_some()));
        let task = {
            let (client, path, lost) = (client.clone(), node.path.clone(), lost.clone());
            let watching = watching.clone();
            let owner = node.stat.ephemeral_owner;
            handle.spawn(async move {
                let reason = tokio::select! {
                    r = own_node_gone(&client, &path, own_watch, &watching) => r,
                    r = session_gone(&client, owner, events, suspended_is_lost) => r,
                };
                mark(&lost, reason);
            })
        };
        Arc::new(Holding {
            client,
            parent,
            node,
            lost,
            monitor: task.abort_handle(),
            monitor_task: StdMutex::new(Some(task)),
            watching,
            handle,
        })
    }

    pub(crate) fn lost_reason(&self) -> Option<LostReason> {
        *self.lost.borrow()
    }

    pub(crate) fn path(&self) -> &str {
        &self.node.path
    }

    /// Deletes the node, lets the handle's `permit` go and stops the monitor. The deletion is handed to a background task
    /// before the first await, which retries until the node or the session is gone, so
    /// dropping this future half-way leaves nothing behind; when connected, this waits for
    /// the task's first answer (up to the session timeout) to report a refusal.
    ///
    /// A monitor that holds a data watch on the node is left to see the deletion and end on
    /// its own: stopping it first would drop the watch before it delivered its event, which
    /// costs a removeWatches request besides the delete. It cannot report the deletion
    /// as a loss: `Released` is marked first, and the first reason wins. A monitor without a
    /// watch yet is stopped before the delete, so that it does not set one.
    pub(crate) async fn finish(&self, permit: Option<OwnedMutexGuard<()>>) -> Result<()> {
        mark(&self.lost, LostReason::Released);
        let watching = self.watching.load(Ordering::Acquire);
        if !watching {
            self.monitor.abort();
        }
        let removal = self.spawn_removal();
        // The deletion is owned by its task now: another task of this handle may go ahead.
        drop(permit);
        if !self.client.state().is_connected() {
            self.monitor.abort();
            return Ok(());
        }
        let deleted = removal.wait(self.client.negotiated_timeout()).await;
        if watching && deleted.is_ok() {
            self.wind_down().await;
        }
        self.monitor.abort();
        deleted.map_err(RecipeError::from)
    }

    fn spawn_removal(&self) -> crate::cleanup::Removal {
        spawn_removal(
            Some(&self.handle),
            self.client.clone(),
            self.parent.clone(),
            Target {
                id: None,
                path: Some(self.node.path.clone()),
                session: Some(self.node.stat.ephemeral_owner).filter(|s| *s != 0),
            },
        )
    }

    /// Waits a little for the monitor to end on its own, once the node is gone.
    async fn wind_down(&self) {
        let task = self
            .monitor_task
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(MONITOR_WIND_DOWN, task).await;
        }
    }

    /// [`finish`](Self::finish) without waiting, for `Drop`.
    pub(crate) fn finish_in_background(&self) {
        self.monitor.abort();
        mark(&self.lost, LostReason::Released);
        let _ = self.spawn_removal();
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        self.monitor.abort();
    }
}

/// The first reason wins; later ones do not overwrite it.
fn mark(lost: &watch::Sender<Option<LostReason>>, reason: LostReason) {
    lost.send_if_modified(|v| {
        if v.is_none() {
            *v = Some(reason);
            true
        } else {
            false
        }
    });
}

/// Resolves when the node is deleted, keeping a data watch on it (re-armed after data
/// changes; re-registered by the client after reconnects).
async fn own_node_gone(
    client: &Client,
    path: &str,
    first: Option<OneshotWatch>,
    watching: &AtomicBool,
) -> LostReason {
    let mut watch = first;
    let mut retry = 0;
    loop {
        let w = match watch.take() {
            Some(w) => w,
            None => match data_watch(client, path).await {
                Ok((_, _, w)) => {
                    watching.store(true, Ordering::Release);
                    w
                }
                Err(Error::Code(ErrorCode::NoNode)) => return LostReason::NodeDeleted,
                Err(e) if e.is_retryable() => {
                    tokio::time::sleep(retry_delay(retry)).await;
                    retry += 1;
                    continue;
                }
                Err(e) => return reason_for_error(client, &e),
            },
        };
        match w.await {
            Ok(ev) if ev.event_type == EventType::NodeDeleted => return LostReason::NodeDeleted,
            Ok(_) => {}
            Err(e) => return reason_for_error(client, &e),
        }
    }
}

/// Resolves when the session state says the lock cannot be trusted. The session of the
/// node (`owner`) being replaced by a new one counts as its expiry: the client carries on
/// after an expiry, but the lock stays lost (the node went with the old session).
async fn session_gone(
    client: &Client,
    owner: i64,
    mut events: SessionEvents,
    suspended_is_lost: bool,
) -> LostReason {
    if let Some(r) = reason_for_state(client.state(), suspended_is_lost) {
        return r;
    }
    loop {
        // Also after a lagging event stream skipped the expiry itself.
        if owner != 0 && crate::session_scope::session_gone(client, owner) {
            return LostReason::Expired;
        }
        let reason = match events.next().await {
            None => Some(LostReason::Closed),
            Some(SessionEvent::Suspended | SessionEvent::ConnectedReadOnly) => {
                suspended_is_lost.then_some(LostReason::Suspended)
            }
            Some(SessionEvent::Lost) => Some(LostReason::SessionLost),
            Some(SessionEvent::Expired) => Some(LostReason::Expired),
            Some(SessionEvent::Closed) => Some(LostReason::Closed),
            Some(SessionEvent::AuthFailed) => Some(LostReason::AuthFailed),
            Some(_) => None,
        };
        if let Some(r) = reason {
            return r;
        }
    }
}

fn reason_for_state(state: SessionState, suspended_is_lost: bool) -> Option<LostReason> {
    match state {
        SessionState::Connected | SessionState::Connecting => None,
        SessionState::Lost => Some(LostReason::SessionLost),
        SessionState::Expired => Some(LostReason::Expired),
        SessionState::Closed => Some(LostReason::Closed),
        SessionState::AuthFailed => Some(LostReason::AuthFailed),
        // Suspended, read-only, and anything this crate does not know yet.
        _ => suspended_is_lost.then_some(LostReason::Suspended),
    }
}

fn reason_for_error(client: &Client, e: &Error) -> LostReason {
    match e {
        Error::Code(ErrorCode::SessionExpired) => LostReason::Expired,
        Error::Code(ErrorCode::AuthFailed) => LostReason::AuthFailed,
        _ => reason_for_state(client.state(), true).unwrap_or(LostReason::Closed),
    }
}

/// The re-entrant holds of one mutex handle: the current holding, and one id per guard.
#[derive(Debug, Default)]
pub(crate) struct Holds {
    inner: StdMutex<HoldsInner>,
    /// Bumped whenever a hold is taken or given up, for [`LockGuard::lost`].
    changed: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct HoldsInner {
    holding: Option<Arc<Holding>>,
    /// The handle's one-holder permit, kept while the holding lives.
    permit: Option<OwnedMutexGuard<()>>,
    /// The guards' ids, oldest first.
    ids: Vec<u64>,
    next_id: u64,
}

/// What the last hold gives back: the holding to finish, and the handle's permit, to be let
/// go once the deletion is under way.
pub(crate) struct LastHold {
    pub(crate) holding: Arc<Holding>,
    pub(crate) permit: Option<OwnedMutexGuard<()>>,
}

impl Holds {
    fn lock(&self) -> StdMutexGuard<'_, HoldsInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(self: &Arc<Self>, inner: &mut HoldsInner, holding: Arc<Holding>) -> LockGuard {
        let id = inner.next_id;
        inner.next_id += 1;
        inner.ids.push(id);
        self.changed.send_modify(|n| *n += 1);
        LockGuard {
            holds: self.clone(),
            holding,
            id,
            released: false,
        }
    }

    /// The first hold on a new holding, with the handle's permit.
    pub(crate) fn install(
        self: &Arc<Self>,
        holding: Arc<Holding>,
        permit: OwnedMutexGuard<()>,
    ) -> LockGuard {
        let mut inner = self.lock();
        inner.holding = Some(holding.clone());
        inner.permit = Some(permit);
        self.add(&mut inner, holding)
    }

    /// Counts up for the holder of hold `id`; fails if that hold is gone or the lock lost.
    fn reenter(self: &Arc<Self>, id: u64) -> Result<LockGuard> {
        let mut inner = self.lock();
        let holding = match &inner.holding {
            Some(h) if inner.ids.contains(&id) => h.clone(),
            _ => return Err(RecipeError::NotHeld),
        };
        if let Some(reason) = holding.lost_reason() {
            return Err(RecipeError::Lost(reason.as_str()));
        }
        Ok(self.add(&mut inner, holding))
    }

    fn contains(&self, id: u64) -> bool {
        self.lock().ids.contains(&id)
    }

    pub(crate) fn count(&self) -> usize {
        self.lock().ids.len()
    }

    pub(crate) fn is_held(&self) -> bool {
        self.lock()
            .holding
            .as_ref()
            .is_some_and(|h| h.lost_reason().is_none())
    }

    /// Gives up hold `id`; returns the holding and the permit when that was the last, for
    /// the caller to finish.
    pub(crate) fn drop_hold(&self, id: u64) -> Result<Option<LastHold>> {
        let mut inner = self.lock();
        let Some(pos) = inner.ids.iter().position(|x| *x == id) else {
            return Err(RecipeError::NotHeld);
        };
        inner.ids.remove(pos);
        let last = if inner.ids.is_empty() {
            inner.holding.take().map(|holding| LastHold {
                holding,
                permit: inner.permit.take(),
            })
        } else {
            None
        };
        self.changed.send_modify(|n| *n += 1);
        Ok(last)
    }
}

/// Proof of holding a [`Mutex`](crate::mutex::Mutex): one count of its re-entrant hold.
///
/// Release it with [`release`](Self::release) to learn the outcome; dropping it releases too,
/// deleting the node in the background when it was the last count.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::Mutex;
/// use zk_session::{Op, Version};
///
/// let mutex = Mutex::new(client, "/locks/report");
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
pub struct LockGuard {
    holds: Arc<Holds>,
    holding: Arc<Holding>,
    id: u64,
    released: bool,
}

impl LockGuard {
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
    /// # fn example(guard: zk_recipes::LockGuard) {
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
    /// # async fn f(guard: zk_recipes::LockGuard) {
    /// tokio::select! {
    ///     _ = work() => {}
    ///     reason = guard.lost() => eprintln!("stopped: lock {reason}"),
    /// }
    /// # }
    /// ```
    pub async fn lost(&self) -> LostReason {
        let mut lost = self.holding.lost.subscribe();
        let mut holds = self.holds.changed.subscribe();
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
    /// # async fn f(guard: zk_recipes::LockGuard, storage_accepts: impl Fn(u64) -> bool) {
    /// // The storage remembers the highest token it has seen and refuses lower ones.
    /// assert!(storage_accepts(guard.fencing_token()));
    /// # }
    /// ```
    pub fn fencing_token(&self) -> u64 {
        self.holding.node.stat.czxid as u64
    }

    /// Runs `ops` as one transaction behind a check that the lock node still exists, and
    /// returns their results. Once the node is gone (session expired, node deleted) the server
    /// refuses the whole transaction: that is [`RecipeError::Lost`]. It also fails at once,
    /// without sending, when this guard already knows the lock is lost. A failing op of the
    /// caller's is [`zk_session::Error::Multi`] with `index` counting the caller's ops only.
    ///
    /// ```no_run
    /// # async fn f(guard: zk_recipes::LockGuard) -> zk_recipes::Result<()> {
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
            return Err(match r {
                LostReason::Released => RecipeError::NotHeld,
                r => RecipeError::Lost(r.as_str()),
            });
        }
        let check = Op::check(self.holding.path(), Version::Any);
        match self
            .holding
            .client
            .multi(std::iter::once(check).chain(ops))
            .await
        {
            Ok(mut results) => {
                if !results.is_empty() {
                    results.remove(0);
                }
                Ok(results)
            }
            Err(Error::Multi { index: 0, code, .. }) => {
                if code == ErrorCode::NoNode {
                    mark(&self.holding.lost, LostReason::NodeDeleted);
                }
                Err(RecipeError::Lost(LostReason::NodeDeleted.as_str()))
            }
            Err(Error::Multi {
                index,
                code,
                results,
            }) => Err(RecipeError::Session(Error::Multi {
                index: index - 1,
                code,
                results: results.get(1..).unwrap_or_default().to_vec(),
            })),
            Err(e) => Err(e.into()),
        }
    }

    /// Re-enters the lock: another guard of the same hold, counting up at once without a
    /// request. Only a holder can do this, since only it has a guard; the node is deleted
    /// when the last of the guards is released. [`RecipeError::NotHeld`] if this guard's hold
    /// was already given up, [`RecipeError::Lost`] when the lock can no longer be trusted.
    ///
    /// ```no_run
    /// # async fn example(mutex: zk_recipes::Mutex) -> zk_recipes::Result<()> {
    /// let outer = mutex.acquire().await?;
    /// let inner = outer.reenter()?;
    /// assert_eq!((inner.path(), mutex.hold_count()), (outer.path(), 2));
    /// inner.release().await?; // the node stays: `outer` still holds
    /// outer.release().await?; // the last hold: the node is deleted
    /// # Ok(()) }
    /// ```
    pub fn reenter(&self) -> Result<LockGuard> {
        self.holds.reenter(self.id)
    }

    /// Gives up this hold; when it is the mutex's last, deletes the lock node. Local state
    /// is updated first, so a release during a connection loss cannot leave it inconsistent
    /// (CURATOR-678): if the delete cannot be done now, a background task keeps trying until
    /// the node or the session is gone. Cancel-safe: the deletion is owned by that task from
    /// the first poll, so dropping this future half-way leaves no node behind.
    ///
    /// ```no_run
    /// # async fn example(mutex: zk_recipes::Mutex) -> zk_recipes::Result<()> {
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

impl Drop for LockGuard {
    fn drop(&mut self) {
        if !self.released {
            if let Ok(Some(last)) = self.holds.drop_hold(self.id) {
                last.holding.finish_in_background();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_policy() {
        assert_eq!(reason_for_state(SessionState::Connected, true), None);
        assert_eq!(
            reason_for_state(SessionState::Suspended, true),
            Some(LostReason::Suspended)
        );
        assert_eq!(reason_for_state(SessionState::Suspended, false), None);
        assert_eq!(
            reason_for_state(SessionState::ConnectedReadOnly, false),
            None
        );
        assert_eq!(
            reason_for_state(SessionState::Lost, false),
            Some(LostReason::SessionLost)
        );
        assert_eq!(
            reason_for_state(SessionState::Expired, false),
            Some(LostReason::Expired)
        );
        assert_eq!(
            reason_for_state(SessionState::Closed, false),
            Some(LostReason::Closed)
        );
    }

    /// A holding on a client that never connects: enough for the bookkeeping.
    fn holding(czxid: i64) -> Arc<Holding> {
        let client = Client::builder("127.0.0.1:1").build().unwrap();
        let node = ProtectedNode {
            path: "/l/_c_x-lock-0000000001".into(),
            name: "_c_x-lock-0000000001".into(),
            id: "x".into(),
            stat: zk_session::Stat {
                czxid,
                ..Default::default()
            },
        };
        Holding::start(client, "/l".into(), node, None, true)
    }

    fn permit() -> OwnedMutexGuard<()> {
        Arc::new(tokio::sync::Mutex::new(()))
            .try_lock_owned()
            .unwrap()
    }

    #[tokio::test]
    async fn holds_count_up_and_down_through_the_guards() {
        let holds = Arc::new(Holds::default());
        let serial = Arc::new(tokio::sync::Mutex::new(()));
        let a = holds.install(holding(7), serial.clone().try_lock_owned().unwrap());
        let b = a.reenter().unwrap();
        assert_eq!(holds.count(), 2);
        assert_eq!((a.fencing_token(), b.fencing_token()), (7, 7));
        assert!(a.is_held() && b.is_held() && holds.is_held());
        // The handle stays taken for any other task while a hold is left.
        assert!(serial.try_lock().is_err());
        assert!(holds.drop_hold(b.id).unwrap().is_none());
        assert!(!b.is_held() && a.is_held());
        assert_eq!(b.lost().await, LostReason::Released);
        assert!(matches!(b.reenter(), Err(RecipeError::NotHeld)));
        assert!(matches!(
            b.fenced_multi([]).await,
            Err(RecipeError::NotHeld)
        ));
        assert!(matches!(b.release().await, Err(RecipeError::NotHeld)));
        // The last hold hands the holding and the permit back.
        let last = holds.drop_hold(a.id).unwrap().expect("the last hold");
        assert_eq!(last.holding.path(), "/l/_c_x-lock-0000000001");
        assert!(last.permit.is_some());
        drop(last);
        assert!(serial.try_lock().is_ok());
        assert!(!holds.is_held());
        assert!(matches!(holds.drop_hold(a.id), Err(RecipeError::NotHeld)));
        drop(a); // its hold is gone already: nothing for its Drop to do
    }

    #[tokio::test]
    async fn a_lost_holding_refuses_reentry() {
        let holds = Arc::new(Holds::default());
        let h = holding(1);
        let g = holds.install(h.clone(), permit());
        mark(&h.lost, LostReason::Expired);
        assert_eq!(g.lost().await, LostReason::Expired);
        assert!(!g.is_held() && !holds.is_held());
        assert!(matches!(g.reenter(), Err(RecipeError::Lost(_))));
        assert!(matches!(
            g.fenced_multi([]).await,
            Err(RecipeError::Lost("session expired"))
        ));
    }

    #[test]
    fn first_reason_wins() {
        let tx = watch::channel(None).0;
        mark(&tx, LostReason::Suspended);
        mark(&tx, LostReason::Expired);
        assert_eq!(*tx.borrow(), Some(LostReason::Suspended));
        assert_eq!(LostReason::NodeDeleted.to_string(), "lock node deleted");
    }
}
