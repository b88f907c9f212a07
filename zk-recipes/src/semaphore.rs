//! [`InterProcessSemaphoreV2`] and its [`SemaphoreLease`] (the documentation is on the types).

use std::{sync::Arc, time::Duration};

use tokio::time::{timeout_at, Instant};
use zk_session::{Acl, Client, Error, ErrorCode, Op, OpResult};

use crate::{
    mutex_guard::{holding_views, Holding},
    plumbing::cleanup::Claim,
    plumbing::hold_options::{hold_setters, HoldOptions},
    plumbing::liveness::SuspendPolicy,
    plumbing::pending::Pending,
    plumbing::protected::{child_path, ProtectedCreate, ProtectedNode},
    plumbing::retry::retrying,
    plumbing::session_scope::SessionScope,
    plumbing::watches::children_watch,
    InterProcessMutex, InterProcessMutexGuard, LostReason, RecipeError, Result,
};

/// The node name of a lease after the protected prefix, as Curator writes it.
const LEASE_NAME: &str = "lease-";

/// A distributed counting semaphore on Curator's protocol (InterProcessSemaphoreV2).
///
/// Under the semaphore's path, `locks` is an ordinary mutex (Curator's
/// `_c_<uuid>-lock-<seq>` nodes) and `leases` holds one protected ephemeral-sequential node
/// per lease, `_c_<uuid>-lease-<seq>`. To acquire, a process takes the mutex, creates its
/// lease node, and waits (children watch on `leases`) until there are at most `max_leases`
/// children, then lets the mutex go. Only the process holding the mutex counts, so waiters
/// are served one at a time in the mutex's order; every child of `leases` counts as a lease,
/// whoever wrote it, so Curator's processes and ours share the count.
///
/// Beyond Curator: an acquire that times out, fails or is dropped at any point leaves no
/// lease node behind (CURATOR-335, CURATOR-315, CURATOR-462 orphaned them): the node is
/// owned by the same background cleanup as the mutex's from the moment its create is sent.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use std::time::Duration;
/// use zk_recipes::InterProcessSemaphoreV2;
///
/// // At most 3 holders at a time, across every process using the path.
/// let semaphore = InterProcessSemaphoreV2::new(client, "/semaphores/exports", 3);
/// let lease = semaphore.acquire_timeout(Duration::from_secs(10)).await?;
/// // ... at most two others are here too ...
/// lease.release().await?;
/// let pair = semaphore.acquire_many(2).await?; // two leases at once
/// for lease in pair {
///     lease.release().await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct InterProcessSemaphoreV2 {
    client: Client,
    path: String,
    leases_path: String,
    max_leases: u32,
    lock: InterProcessMutex,
    create: ProtectedCreate,
    policy: SuspendPolicy,
}

/// Builds a [`InterProcessSemaphoreV2`]; see [`InterProcessSemaphoreV2::builder`].
///
/// ```no_run
/// # fn f(client: zk_session::Client) {
/// let semaphore = zk_recipes::InterProcessSemaphoreV2::builder(client, "/semaphores/exports")
///     .max_leases(3)
///     .data(b"worker-7")
///     .suspend_policy(zk_recipes::SuspendPolicy::WaitForLost)
///     .build();
/// # }
/// ```
#[derive(Debug)]
pub struct InterProcessSemaphoreV2Builder {
    client: Client,
    path: String,
    max_leases: u32,
    hold: HoldOptions,
}

impl InterProcessSemaphoreV2Builder {
    /// How many leases may be held at once (default 1).
    ///
    /// See the example on [`InterProcessSemaphoreV2Builder`].
    pub fn max_leases(mut self, max_leases: u32) -> Self {
        self.max_leases = max_leases;
        self
    }

    hold_setters! {
        /// The data of each lease node (default empty; Curator writes the host's address).
        ///
        /// See the example on [`InterProcessSemaphoreV2Builder`].
        data;

        /// The ACL of the lease and lock nodes (default open).
        ///
        /// See the example on [`InterProcessSemaphoreV2Builder`].
        acl;

        /// When a held [`SemaphoreLease`] stops being trusted on a suspended connection (default
        /// [`SuspendPolicy::StepDown`], as the mutex): at once, or only once the session is
        /// presumed lost. An expiry or the deletion of the lease node always ends it.
        ///
        /// See the example on [`InterProcessSemaphoreV2Builder`].
        suspend_policy;
    }

    /// The semaphore.
    ///
    /// See the example on [`InterProcessSemaphoreV2Builder`].
    pub fn build(self) -> InterProcessSemaphoreV2 {
        let leases_path = child_path(&self.path, "leases");
        let mut lock =
            InterProcessMutex::builder(self.client.clone(), child_path(&self.path, "locks"));
        // The lock nodes share only the ACL: their data and suspend policy stay the mutex's
        // defaults.
        if let Some(acl) = &self.hold.acl {
            lock = lock.acl(acl.clone());
        }
        InterProcessSemaphoreV2 {
            create: self.hold.protected_create(leases_path.clone(), LEASE_NAME),
            lock: lock.build(),
            client: self.client,
            path: self.path,
            leases_path,
            max_leases: self.max_leases,
            policy: self.hold.policy,
        }
    }
}

impl InterProcessSemaphoreV2 {
    /// A semaphore of `max_leases` leases at `path`.
    ///
    /// See the example on [`InterProcessSemaphoreV2`].
    pub fn new(
        client: Client,
        path: impl Into<String>,
        max_leases: u32,
    ) -> InterProcessSemaphoreV2 {
        Self::builder(client, path).max_leases(max_leases).build()
    }

    /// A builder for the lease data and ACL.
    ///
    /// See the example on [`InterProcessSemaphoreV2Builder`].
    pub fn builder(client: Client, path: impl Into<String>) -> InterProcessSemaphoreV2Builder {
        InterProcessSemaphoreV2Builder {
            client,
            path: path.into(),
            max_leases: 1,
            hold: HoldOptions::default(),
        }
    }

    /// The semaphore's path.
    ///
    /// See the example on [`InterProcessSemaphoreV2`].
    pub fn path(&self) -> &str {
        &self.path
    }

    /// How many leases may be held at once.
    ///
    /// See the example on [`InterProcessSemaphoreV2`].
    pub fn max_leases(&self) -> u32 {
        self.max_leases
    }

    /// Waits for a lease, as long as the session lives (see
    /// [`InterProcessMutex::acquire`](crate::InterProcessMutex::acquire) for how a lost or expired session ends the
    /// wait). Cancel-safe: dropping the future leaves no node behind.
    ///
    /// See the example on [`InterProcessSemaphoreV2`].
    pub async fn acquire(&self) -> Result<SemaphoreLease> {
        Ok(self.acquire_inner(1, None).await?.remove(0))
    }

    /// Like [`acquire`](Self::acquire), giving up with [`RecipeError::Timeout`] after
    /// `wait`.
    ///
    /// See the example on [`InterProcessSemaphoreV2`].
    pub async fn acquire_timeout(&self, wait: Duration) -> Result<SemaphoreLease> {
        Ok(self
            .acquire_inner(1, Some(Instant::now() + wait))
            .await?
            .remove(0))
    }

    /// Takes a lease if one is free now; `None` when all are held or another process is
    /// taking one (Curator's `acquire` with a zero wait). Leaves no node behind when it
    /// fails.
    ///
    /// ```no_run
    /// # async fn f(semaphore: zk_recipes::InterProcessSemaphoreV2) -> zk_recipes::Result<()> {
    /// match semaphore.try_acquire().await? {
    ///     Some(lease) => lease.release().await?,
    ///     None => println!("every lease is taken"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn try_acquire(&self) -> Result<Option<SemaphoreLease>> {
        match self.lock.try_acquire().await? {
            Some(guard) => self.lease_under(guard, None, false).await,
            None => Ok(None),
        }
    }

    /// Waits for `n` leases, taken one after another as Curator does; when it fails (or is
    /// dropped) the leases already taken are given back.
    ///
    /// See the example on [`InterProcessSemaphoreV2`].
    pub async fn acquire_many(&self, n: u32) -> Result<Vec<SemaphoreLease>> {
        self.acquire_inner(n, None).await
    }

    /// [`acquire_many`](Self::acquire_many) within `wait`.
    ///
    /// ```no_run
    /// # async fn f(semaphore: zk_recipes::InterProcessSemaphoreV2) -> zk_recipes::Result<()> {
    /// use std::time::Duration;
    ///
    /// let leases = semaphore.acquire_many_timeout(2, Duration::from_secs(5)).await?;
    /// assert_eq!(leases.len(), 2);
    /// # Ok(()) }
    /// ```
    pub async fn acquire_many_timeout(
        &self,
        n: u32,
        wait: Duration,
    ) -> Result<Vec<SemaphoreLease>> {
        self.acquire_inner(n, Some(Instant::now() + wait)).await
    }

    /// The names of the lease nodes (every child of `leases`: all count).
    ///
    /// ```no_run
    /// # async fn f(semaphore: zk_recipes::InterProcessSemaphoreV2) -> zk_recipes::Result<()> {
    /// println!("{} leases held", semaphore.participant_nodes().await?.len());
    /// # Ok(()) }
    /// ```
    pub async fn participant_nodes(&self) -> Result<Vec<String>> {
        match self.client.get_children(&self.leases_path).await {
            Ok(mut c) => {
                c.sort();
                Ok(c)
            }
            Err(Error::Code(ErrorCode::NoNode)) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }

    async fn acquire_inner(
        &self,
        n: u32,
        deadline: Option<Instant>,
    ) -> Result<Vec<SemaphoreLease>> {
        if n == 0 || n > self.max_leases {
            return Err(RecipeError::InvalidArgument(
                "the number of leases must be between 1 and max_leases",
            ));
        }
        let mut leases = Vec::with_capacity(n as usize);
        for _ in 0..n {
            match self.acquire_one(deadline).await {
                Ok(lease) => leases.push(lease),
                Err(e) => {
                    for lease in leases {
                        let _ = lease.release().await;
                    }
                    return Err(e);
                }
            }
        }
        Ok(leases)
    }

    /// One lease: Curator's steps under the `locks` mutex.
    async fn acquire_one(&self, deadline: Option<Instant>) -> Result<SemaphoreLease> {
        let guard = match deadline {
            Some(d) => {
                self.lock
                    .acquire_timeout(d.saturating_duration_since(Instant::now()))
                    .await?
            }
            None => self.lock.acquire().await?,
        };
        self.lease_under(guard, deadline, true)
            .await?
            .ok_or(RecipeError::Timeout)
    }

    /// Under the `locks` mutex (`guard`), creates our lease node and, when `wait`, waits
    /// until the leases are few enough; `None` (the node deleted) when not waiting and they
    /// are too many.
    async fn lease_under(
        &self,
        guard: InterProcessMutexGuard,
        deadline: Option<Instant>,
        wait: bool,
    ) -> Result<Option<SemaphoreLease>> {
        let mut pending = Pending::new(
            self.client.clone(),
            self.leases_path.clone(),
            Claim::default(),
        );
        let waited = async {
            let scope = SessionScope::enter(&self.client)
                .await
                .map_err(RecipeError::Lost)?;
            tokio::select! {
                r = self.create_and_wait(&pending, wait) => r,
                reason = scope.wait_ended() => Err(RecipeError::Lost(reason)),
            }
        };
        let result = match deadline {
            Some(d) => timeout_at(d, waited)
                .await
                .unwrap_or(Err(RecipeError::Timeout)),
            None => waited.await,
        };
        match result {
            Ok(Some(node)) => {
                pending.hand_over();
                let lease = SemaphoreLease::new(
                    self.client.clone(),
                    self.leases_path.clone(),
                    node,
                    self.policy,
                );
                // The lease is owned by `lease` now: dropping this future while the mutex
                // is released gives it back too.
                let _ = guard.release().await;
                Ok(Some(lease))
            }
            other => {
                pending.remove_now().await;
                // Released before the answer, not by the guard's drop in the background: a
                // caller who gave up finds no node of its own left.
                let _ = guard.release().await;
                other.map(|_| None)
            }
        }
    }

    /// Creates our lease node and waits until the leases are few enough; `None` when not
    /// `wait`ing and they are too many.
    async fn create_and_wait(
        &self,
        pending: &Pending,
        wait: bool,
    ) -> Result<Option<ProtectedNode>> {
        let (node, _) = self
            .create
            .listed(&self.client, Some(&pending.claim))
            .await?;
        loop {
            let (children, watch) = retrying(&self.client, || {
                children_watch(&self.client, &self.leases_path)
            })
            .await?;
            if !children.contains(&node.name) {
                return Err(RecipeError::Lost(LostReason::NodeDeleted));
            }
            if children.len() <= self.max_leases as usize {
                return Ok(Some(node));
            }
            if !wait {
                return Ok(None);
            }
            // Connection events end the watch too: then we list again.
            let _ = watch.await;
        }
    }
}

/// One lease of a [`InterProcessSemaphoreV2`]. Release it with [`release`](Self::release) to learn the
/// outcome; dropping it releases too, deleting the node in the background.
///
/// Like a mutex guard, a lease watches its session and its node, and says when it can no
/// longer be trusted ([`lost`](Self::lost)): the lease node was deleted, the session expired
/// or is presumed lost, or (under the default [`SuspendPolicy::StepDown`]) the connection
/// was suspended. Trust never comes back; release the lease and acquire again.
///
/// ```no_run
/// # async fn work() {}
/// # async fn f(semaphore: zk_recipes::InterProcessSemaphoreV2) -> zk_recipes::Result<()> {
/// let lease = semaphore.acquire().await?;
/// tokio::select! {
///     _ = work() => {}
///     reason = lease.lost() => eprintln!("stopped: lease {reason}"),
/// }
/// lease.release().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping the lease releases it"]
pub struct SemaphoreLease {
    /// The lease node and its monitor: the same machinery as a held mutex's.
    holding: Arc<Holding>,
    released: bool,
}

impl SemaphoreLease {
    fn new(
        client: Client,
        parent: String,
        node: ProtectedNode,
        policy: SuspendPolicy,
    ) -> SemaphoreLease {
        SemaphoreLease {
            holding: Holding::start(client, parent, node, None, policy),
            released: false,
        }
    }

    holding_views! {
        /// The lease node's full path.
        ///
        /// See the example on [`InterProcessSemaphoreV2`].
        path;

        /// True while nothing has cast doubt on the lease.
        ///
        /// See the example on [`lost_reason`](Self::lost_reason).
        is_held;

        /// Why the lease can no longer be trusted, if it cannot.
        ///
        /// ```no_run
        /// # fn f(lease: zk_recipes::SemaphoreLease) {
        /// use zk_recipes::LostReason;
        ///
        /// if lease.is_held() {
        ///     println!("still holding {}", lease.path());
        /// } else if lease.lost_reason() == Some(LostReason::Expired) {
        ///     println!("the session expired: the lease went with it");
        /// }
        /// # }
        /// ```
        lost_reason;

        /// Completes when the lease can no longer be trusted (at once if it already cannot).
        /// Cancel-safe; may be awaited from several places.
        ///
        /// See the example on [`SemaphoreLease`].
        lost;
    }

    /// The zxid that created the lease node: it grows with every new lease.
    ///
    /// See the example on [`InterProcessSemaphoreV2`].
    pub fn fencing_token(&self) -> u64 {
        self.holding.fencing_token()
    }

    /// Runs `ops` as one transaction behind a check that the lease node still exists, as
    /// [`InterProcessMutexGuard::fenced_multi`](crate::InterProcessMutexGuard::fenced_multi)
    /// does for a lock: once the node is gone the server refuses the whole transaction
    /// ([`RecipeError::Lost`]); it also fails at once when the lease is known to be lost.
    ///
    /// ```no_run
    /// # async fn f(lease: zk_recipes::SemaphoreLease) -> zk_recipes::Result<()> {
    /// use zk_session::{Op, Version};
    ///
    /// lease
    ///     .fenced_multi([Op::set_data("/exports/current", b"batch-9", Version::Any)])
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn fenced_multi(&self, ops: impl IntoIterator<Item = Op>) -> Result<Vec<OpResult>> {
        self.holding.fenced_multi(ops).await
    }

    /// Deletes the lease node. Cancel-safe: the deletion is handed to a background task
    /// before the first await, which retries until the node or its session is gone.
    ///
    /// See the example on [`InterProcessSemaphoreV2`].
    pub async fn release(mut self) -> Result<()> {
        self.released = true;
        self.holding.finish(None).await
    }
}

impl Drop for SemaphoreLease {
    fn drop(&mut self) {
        if !self.released {
            self.holding.finish_in_background();
        }
    }
}
