//! [`InterProcessMutex`]: the mutex and its acquire (its documentation is on the type).

// This file holds the mutex and its acquire; beside it are its builder and the two ways
// of waiting in line, fair and unfair.
mod builder;
mod fair;
mod granted;
mod line_rule;
mod unfair;

use std::{sync::Arc, time::Duration};

use tokio::{
    sync::{watch, OwnedMutexGuard},
    time::{timeout_at, Instant},
};
use zk_session::{Client, Error, ErrorCode, OneshotWatch};

pub use self::builder::InterProcessMutexBuilder;
pub(crate) use self::line_rule::LineRule;
use crate::{
    contender::ContenderNames,
    mutex_guard::{Holding, Holds, InterProcessMutexGuard},
    plumbing::{
        cleanup::Claim,
        pending::Pending,
        protected::{ProtectedCreate, ProtectedNode},
        {
            liveness::{client_over, SuspendPolicy},
            session_scope::SessionScope,
        },
    },
    LostReason, RecipeError, Result,
};

/// A distributed, re-entrant mutex on Curator's protocol (InterProcessMutex), with the
/// failures of Curator and kazoo fixed.
///
/// Each contender creates a protected ephemeral-sequential node `<path>/_c_<uuid>-lock-<seq>`
/// (see [`ProtectedCreate`](crate::ProtectedCreate)); the oldest contender holds the lock, and every other
/// one watches only the contender just ahead of it, so a release wakes exactly one waiter.
/// Contenders are recognised and ordered as [`ContenderNames`](crate::ContenderNames) describes, so the
/// lock is shared safely with Curator's InterProcessMutex, and with kazoo's Lock when kazoo is
/// given `extra_lock_patterns=["-lock-"]`; other children of the lock path are ignored.
///
/// Beyond Curator:
/// - an uncontended acquire is one round trip: the children listing is sent right behind the
///   create; and a waiter whose only predecessor goes takes the lock without listing again;
/// - an acquire that is dropped, cancelled or times out leaves no node behind (CURATOR-62,
///   kazoo #732): it deletes its node, or leaves a background task doing so until the node or
///   the session is gone;
/// - a waiter whose node is deleted by someone else creates a new one and keeps waiting;
/// - the [`InterProcessMutexGuard`] says when the lock can no longer be trusted and fences writes.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use zk_recipes::InterProcessMutex;
/// use zk_session::Client;
///
/// let client = Client::builder("127.0.0.1:2181").connect().await?;
/// let mutex = InterProcessMutex::new(client.clone(), "/locks/nightly-report");
/// let guard = mutex.acquire_timeout(Duration::from_secs(30)).await?;
/// // ... the critical section, watching guard.lost() ...
/// guard.release().await?;
/// # Ok(()) }
/// ```
///
/// A handle may be shared between tasks (behind an `Arc`): they exclude each other as
/// different handles do, as two threads sharing one Curator InterProcessMutex do. An
/// acquire through a handle whose lock is held by another task waits (in this process, with
/// no second lock node) until that holder's last guard is released.
///
/// Re-entrance belongs to the holder: async Rust has no thread to tell the holder by, so
/// the holder proves it by its [`InterProcessMutexGuard`], and re-enters with [`InterProcessMutexGuard::reenter`],
/// which counts up at once. The node is deleted when the last of those guards is released.
/// Calling [`acquire`](Self::acquire) again on the same handle while holding the lock is not
/// re-entrance: it waits for the lock to be free, so a holder that does so without a
/// deadline waits for itself forever (use `reenter`, or `try_acquire`/`acquire_timeout`).
///
/// ```no_run
/// # async fn example(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::InterProcessMutex;
///
/// let mutex = InterProcessMutex::new(client, "/locks/report");
/// let outer = mutex.acquire().await?;
/// let inner = outer.reenter()?; // the holder re-enters: counts up, no second lock node
/// assert_eq!(mutex.hold_count(), 2);
/// // Another task (or this one) acquiring through the same handle is excluded meanwhile.
/// assert!(mutex.try_acquire().await?.is_none());
/// drop(inner);
/// outer.release().await?; // the last hold: the lock node is deleted
/// assert_eq!(mutex.hold_count(), 0);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct InterProcessMutex {
    core: Arc<LockCore>,
}

/// The state of a mutex handle.
#[derive(Debug)]
struct LockCore {
    client: Client,
    path: String,
    fair: bool,
    /// Who a waiter waits for: everyone ahead, or (a read lock) only the writers.
    rule: LineRule,
    policy: SuspendPolicy,
    names: ContenderNames,
    create: ProtectedCreate,
    /// One holder at a time per handle: taken for the whole of an acquisition and kept by
    /// the holding until its last guard goes, so that tasks sharing the handle exclude each
    /// other without a second lock node.
    serial: Arc<tokio::sync::Mutex<()>>,
    holds: Arc<Holds>,
    /// Counts the lock nodes this handle's acquires made, for a selector's start.
    joined: Arc<watch::Sender<u64>>,
}

/// What a successful attempt hands over: the node, and the data watch on it if one was set
/// while waiting.
struct Acquired {
    node: ProtectedNode,
    own_watch: Option<OneshotWatch>,
}

impl InterProcessMutex {
    /// A fair mutex at `path` (the lock node's parent, created as a container when missing).
    ///
    /// ```no_run
    /// # fn f(client: zk_session::Client) {
    /// let mutex = zk_recipes::InterProcessMutex::new(client, "/locks/job-42");
    /// # }
    /// ```
    pub fn new(client: Client, path: impl Into<String>) -> InterProcessMutex {
        Self::builder(client, path).build()
    }

    /// A builder for the other options.
    ///
    /// See the example on [`InterProcessMutexBuilder`].
    pub fn builder(client: Client, path: impl Into<String>) -> InterProcessMutexBuilder {
        InterProcessMutexBuilder::new(client, path.into())
    }

    /// The lock path.
    ///
    /// See the example on [`InterProcessMutex`].
    pub fn path(&self) -> &str {
        &self.core.path
    }

    /// The client the mutex uses.
    ///
    /// See the example on [`InterProcessMutex`].
    pub fn client(&self) -> &Client {
        &self.core.client
    }

    /// True while a holder of this handle holds the lock and nothing has cast doubt on it.
    ///
    /// See the example on [`InterProcessMutex`].
    pub fn is_held(&self) -> bool {
        self.core.holds.is_held()
    }

    /// How many holds (guards, the first and its re-entries) this handle's holder has.
    ///
    /// See the example on [`InterProcessMutex`].
    pub fn hold_count(&self) -> usize {
        self.core.holds.count()
    }

    /// Waits until the lock is held, as long as the session lives: while the connection is
    /// only suspended it waits for the reconnect, and once the session is lost (no
    /// connection for the whole session timeout), expired or closed, it fails with
    /// [`RecipeError::Lost`]. Waits also while another task holds the lock through this
    /// handle (see [`InterProcessMutex`] for re-entrance).
    ///
    /// An acquire belongs to the session current when it starts (or, between an expiry and
    /// the client's new session, the next one). If that session expires while it waits, it
    /// fails with `Lost(LostReason::Expired)` even though the client goes on with a new
    /// session, as Curator's acquire fails: its place in line went with the old session, and
    /// the caller decides whether to try again. A new acquire then runs on the new session
    /// (once a lost guard of this handle has been released or dropped).
    ///
    /// Cancel-safe: dropping the future leaves no node behind.
    ///
    /// ```no_run
    /// # async fn write_report(_token: u64) {}
    /// # async fn example(mutex: zk_recipes::InterProcessMutex) -> zk_recipes::Result<()> {
    /// let guard = mutex.acquire().await?; // however long the queue is
    /// write_report(guard.fencing_token()).await;
    /// guard.release().await?; // the next waiter in line takes the lock
    /// # Ok(()) }
    /// ```
    pub async fn acquire(&self) -> Result<InterProcessMutexGuard> {
        self.acquire_inner(None, true)
            .await?
            .ok_or(RecipeError::Timeout)
    }

    /// Takes the lock if it is free; `None` when another holds it (also through this handle)
    /// or another acquire of this handle is under way. Leaves no node behind when it fails.
    ///
    /// ```no_run
    /// # async fn f(mutex: zk_recipes::InterProcessMutex) -> zk_recipes::Result<()> {
    /// match mutex.try_acquire().await? {
    ///     Some(guard) => guard.release().await?,
    ///     None => println!("busy"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn try_acquire(&self) -> Result<Option<InterProcessMutexGuard>> {
        self.acquire_inner(None, false).await
    }

    /// Like [`acquire`](Self::acquire), giving up with [`RecipeError::Timeout`] after
    /// `wait`. It returns within a round trip of the deadline (at most a quarter of a second
    /// after it): the node's deletion is handed to a background task, and usually done
    /// before this returns.
    ///
    /// ```no_run
    /// # async fn f(mutex: zk_recipes::InterProcessMutex) -> zk_recipes::Result<()> {
    /// use std::time::Duration;
    /// use zk_recipes::RecipeError;
    ///
    /// match mutex.acquire_timeout(Duration::from_secs(5)).await {
    ///     Ok(guard) => guard.release().await?,
    ///     Err(RecipeError::Timeout) => println!("still busy after 5 s"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn acquire_timeout(&self, wait: Duration) -> Result<InterProcessMutexGuard> {
        self.acquire_inner(Some(Instant::now() + wait), true)
            .await?
            .ok_or(RecipeError::Timeout)
    }

    /// The contenders' node names in the lock's order (the holder first), ignoring children
    /// that are not contenders.
    ///
    /// ```no_run
    /// # async fn example(mutex: zk_recipes::InterProcessMutex) -> zk_recipes::Result<()> {
    /// let nodes = mutex.participant_nodes().await?;
    /// if let Some(holder) = nodes.first() {
    ///     println!("{holder} holds the lock; {} waiting", nodes.len() - 1);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn participant_nodes(&self) -> Result<Vec<String>> {
        let children = match self.core.client.get_children(&self.core.path).await {
            Ok(c) => c,
            Err(Error::Code(ErrorCode::NoNode)) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        Ok(self
            .core
            .names
            .sorted(&children)
            .into_iter()
            .map(|c| c.name().to_owned())
            .collect())
    }

    /// Counts the lock nodes this handle's acquires made (or adopted): a waiter is in line
    /// once it has moved.
    pub(crate) fn joined(&self) -> watch::Receiver<u64> {
        self.core.joined.subscribe()
    }

    async fn acquire_inner(
        &self,
        deadline: Option<Instant>,
        wait: bool,
    ) -> Result<Option<InterProcessMutexGuard>> {
        let core = &self.core;
        if let Some(reason) = client_over(&core.client) {
            return Err(RecipeError::Lost(reason));
        }
        let Some(permit) = self.take_permit(deadline, wait).await? else {
            return Ok(None);
        };
        let claim = Claim::counting(core.joined.clone());
        let mut pending = Pending::new(core.client.clone(), core.path.clone(), claim);
        let attempt = self.attempt_in_session(&mut pending, wait);
        let result = match deadline {
            Some(d) => timeout_at(d, attempt)
                .await
                .unwrap_or(Err(RecipeError::Timeout)),
            None => attempt.await,
        };
        match result {
            Ok(Some(acquired)) => {
                // The node now belongs to the holding; nothing to clean up.
                pending.hand_over();
                Ok(Some(self.hold(acquired, permit)))
            }
            Ok(None) => {
                pending.remove_now().await;
                Ok(None)
            }
            Err(e) => {
                pending.remove_now().await;
                Err(e)
            }
        }
    }

    /// The handle's one-holder permit; `None` when not waiting and another task of this
    /// handle has it.
    async fn take_permit(
        &self,
        deadline: Option<Instant>,
        wait: bool,
    ) -> Result<Option<OwnedMutexGuard<()>>> {
        let serial = self.core.serial.clone();
        let permit = if !wait {
            match serial.try_lock_owned() {
                Ok(p) => p,
                Err(_) => return Ok(None),
            }
        } else if let Some(d) = deadline {
            timeout_at(d, serial.lock_owned())
                .await
                .map_err(|_| RecipeError::Timeout)?
        } else {
            serial.lock_owned().await
        };
        Ok(Some(permit))
    }

    /// One attempt, fair or unfair, bound to the session current when it starts.
    async fn attempt_in_session(
        &self,
        pending: &mut Pending,
        wait: bool,
    ) -> Result<Option<Acquired>> {
        let core = &self.core;
        // The acquire belongs to one session: when it ends, so does the acquire, even if
        // the client goes on with a new one (the caller decides whether to try again).
        let scope = SessionScope::enter(&core.client)
            .await
            .map_err(RecipeError::Lost)?;
        let attempt = async {
            if core.fair {
                self.attempt_fair(pending, wait).await
            } else {
                self.attempt_unfair(pending, wait).await
            }
        };
        // Waiting for a reconnect is worth it while the session may live; not after.
        let r = tokio::select! {
            r = attempt => r,
            reason = scope.wait_ended() => Err(RecipeError::Lost(reason)),
        };
        in_session_terms(r, &scope)
    }

    /// Starts the holding of an acquired node and gives out its first guard.
    fn hold(&self, acquired: Acquired, permit: OwnedMutexGuard<()>) -> InterProcessMutexGuard {
        let core = &self.core;
        let holding = Holding::start(
            core.client.clone(),
            core.path.clone(),
            acquired.node,
            acquired.own_watch,
            core.policy,
        );
        core.holds.install(holding, permit)
    }
}

/// An attempt's outcome as the session it belongs to has it: a failure or a node that
/// came after the session ended is that session's loss.
fn in_session_terms(r: Result<Option<Acquired>>, scope: &SessionScope) -> Result<Option<Acquired>> {
    match (r, scope.ended()) {
        // A request that failed because the session ended says so in the session's
        // words (ConnectionLoss once lost); the caller is owed the reason.
        (Err(RecipeError::Session(e)), Some(reason))
            if e.is_retryable()
                || e.code() == Some(ErrorCode::SessionExpired)
                || matches!(e, Error::Closed) =>
        {
            Err(RecipeError::Lost(reason))
        }
        // The session was replaced before the answer came: the node (if it is of
        // the new session) is left to `pending` to delete.
        (Ok(Some(_)), Some(reason)) => Err(RecipeError::Lost(reason)),
        (Ok(Some(a)), None) if a.node.stat.ephemeral_owner != scope.id() => {
            Err(RecipeError::Lost(LostReason::Expired))
        }
        (r, _) => r,
    }
}
