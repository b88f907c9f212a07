//! [`DoubleBarrier`] and its enter (the documentation is on the type).

// This file holds the barrier and its enter; the member it gives out, and the leave, are
// beside it.
mod member;

use std::{future::Future, sync::Arc, time::Duration};

use tokio::{
    runtime::Handle,
    time::{timeout_at, Instant},
};
use zk_session::{Client, CreateOptions, Error, ErrorCode, Stat};

pub use self::member::DoubleBarrierMember;
use crate::{
    mutex_guard::Holding,
    plumbing::{
        cleanup::{spawn_removal, Removal, Target},
        liveness::{raw_session_id, SuspendPolicy},
        pending::CLEANUP_GRACE,
        protected::{child_path, create_parents, new_protected_id, ProtectedNode},
        retry::retrying,
        session_scope::SessionScope,
        watches::exists_watch,
    },
    RecipeError, Result,
};

/// The node that says enough members have entered.
const READY: &str = "ready";

/// A double barrier on Curator's layout (DistributedDoubleBarrier): members enter together
/// once enough have arrived, and leave together once all are done.
///
/// Under the barrier's path each member has an EPHEMERAL node named by a fresh uuid (no
/// prefix, no sequence), and the PERSISTENT node `ready` says that enough have entered.
/// Curator's processes and ours count each other.
///
/// Beyond Curator: an enter counts again after every wake-up instead of returning after the
/// first (GH-1290: a reconnect or any spurious event let a member through alone), and an
/// enter that times out, fails or is dropped deletes its node (CURATOR-318: a member that
/// gave up was counted by later arrivals). Requests cut off by a connection loss are tried
/// again on the same session; an enter whose session expires fails with
/// [`RecipeError::Lost`] (its node went with the session), and the caller may enter again on
/// the new one.
///
/// Entering is a hold, with the shape of every hold in this crate: [`DoubleBarrier::acquire`]
/// (Curator's `enter`), [`acquire_timeout`](DoubleBarrier::acquire_timeout) and
/// [`try_acquire`](DoubleBarrier::try_acquire) give a [`DoubleBarrierMember`], which says
/// when its membership can no longer be trusted ([`lost`](DoubleBarrierMember::lost)) and
/// leaves with [`release`](DoubleBarrierMember::release) (Curator's `leave`).
///
/// A member dropped without `release` takes its node away (in the background), as its
/// process ending would: Curator's barrier has no close, and its node stays until the
/// session ends, so the others' `leave` would wait for a member that is gone for good.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use std::time::Duration;
/// use zk_recipes::DoubleBarrier;
///
/// let barrier = DoubleBarrier::new(client, "/barriers/stage-2", 3);
/// let member = barrier.acquire_timeout(Duration::from_secs(60)).await?; // all three are in
/// // ... the work of the stage, watching member.lost() ...
/// member.release().await?; // all three are done
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DoubleBarrier {
    shape: Arc<Shape>,
}

/// Where the barrier is and how many it waits for: what the barrier and its members share.
#[derive(Debug)]
struct Shape {
    client: Client,
    path: String,
    member_qty: usize,
    ready_path: String,
    policy: SuspendPolicy,
}

/// Builds a [`DoubleBarrier`]; see [`DoubleBarrier::builder`].
///
/// ```no_run
/// # fn f(client: zk_session::Client) {
/// use zk_recipes::{DoubleBarrier, SuspendPolicy};
///
/// let barrier = DoubleBarrier::builder(client, "/barriers/stage-2")
///     .member_qty(3)
///     .suspend_policy(SuspendPolicy::WaitForLost)
///     .build();
/// # }
/// ```
#[derive(Debug)]
pub struct DoubleBarrierBuilder {
    client: Client,
    path: String,
    member_qty: usize,
    policy: SuspendPolicy,
}

impl DoubleBarrierBuilder {
    /// How many members open the barrier (default 1).
    ///
    /// See the example on [`DoubleBarrierBuilder`].
    pub fn member_qty(mut self, member_qty: usize) -> Self {
        self.member_qty = member_qty;
        self
    }

    /// When a [`DoubleBarrierMember`] stops being trusted on a suspended connection
    /// (default [`SuspendPolicy::StepDown`], as the mutex's); an expiry or the deletion of
    /// the member's node always ends it.
    ///
    /// See the example on [`DoubleBarrierBuilder`].
    pub fn suspend_policy(mut self, policy: SuspendPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The barrier.
    ///
    /// See the example on [`DoubleBarrierBuilder`].
    pub fn build(self) -> DoubleBarrier {
        DoubleBarrier {
            shape: Arc::new(Shape {
                client: self.client,
                ready_path: child_path(&self.path, READY),
                path: self.path,
                member_qty: self.member_qty,
                policy: self.policy,
            }),
        }
    }
}

impl DoubleBarrier {
    /// The barrier at `path` that opens when `member_qty` members have entered.
    ///
    /// See the example on [`DoubleBarrier`].
    pub fn new(client: Client, path: impl Into<String>, member_qty: usize) -> DoubleBarrier {
        Self::builder(client, path).member_qty(member_qty).build()
    }

    /// A builder, for the member count and the [`SuspendPolicy`] of the members.
    ///
    /// See the example on [`DoubleBarrierBuilder`].
    pub fn builder(client: Client, path: impl Into<String>) -> DoubleBarrierBuilder {
        DoubleBarrierBuilder {
            client,
            path: path.into(),
            member_qty: 1,
            policy: SuspendPolicy::default(),
        }
    }

    /// The barrier's path.
    ///
    /// See the example on [`DoubleBarrier`].
    pub fn path(&self) -> &str {
        &self.shape.path
    }

    /// How many members open the barrier.
    ///
    /// See the example on [`DoubleBarrier`].
    pub fn member_qty(&self) -> usize {
        self.shape.member_qty
    }

    /// Enters, and waits until `member_qty` members have entered, on one session: when it
    /// expires meanwhile, fails with [`RecipeError::Lost`]. Cancel-safe: a dropped enter
    /// deletes this member's node in the background, and so does dropping the member.
    ///
    /// See the example on [`DoubleBarrier`].
    pub async fn acquire(&self) -> Result<DoubleBarrierMember> {
        self.enter(None, true).await?.ok_or(RecipeError::Timeout)
    }

    /// [`acquire`](Self::acquire), giving up with [`RecipeError::Timeout`] after `wait`
    /// (this member's node is deleted, so others do not count it).
    ///
    /// See the example on [`DoubleBarrier`].
    pub async fn acquire_timeout(&self, wait: Duration) -> Result<DoubleBarrierMember> {
        self.enter(Some(Instant::now() + wait), true)
            .await?
            .ok_or(RecipeError::Timeout)
    }

    /// Enters if that opens the barrier (or it is open already); `None`, with no node left
    /// behind, when fewer than `member_qty` members would be in.
    ///
    /// ```no_run
    /// # async fn f(barrier: zk_recipes::DoubleBarrier) -> zk_recipes::Result<()> {
    /// match barrier.try_acquire().await? {
    ///     Some(member) => member.release().await?,
    ///     None => println!("not enough members yet"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn try_acquire(&self) -> Result<Option<DoubleBarrierMember>> {
        self.enter(None, false).await
    }

    async fn enter(
        &self,
        deadline: Option<Instant>,
        wait: bool,
    ) -> Result<Option<DoubleBarrierMember>> {
        let shape = &self.shape;
        let name = new_protected_id();
        let mut cleanup = RemoveOwn::new(shape, &name);
        let r = within(deadline, async {
            let scope = SessionScope::enter(&shape.client)
                .await
                .map_err(RecipeError::Lost)?;
            cleanup.session = scope.id();
            tokio::select! {
                r = shape.enter_steps(&cleanup.path, wait) => r,
                reason = scope.wait_ended() => Err(RecipeError::Lost(reason)),
            }
        })
        .await;
        match r {
            Ok(Some(stat)) => {
                // The member owns the node from here.
                cleanup.armed = false;
                let node = ProtectedNode::at(cleanup.path.clone(), name, stat);
                Ok(Some(DoubleBarrierMember::new(shape.clone(), node)))
            }
            Ok(None) => {
                cleanup.remove_now().await;
                Ok(None)
            }
            Err(e) => {
                cleanup.remove_now().await;
                Err(e)
            }
        }
    }
}

impl Shape {
    /// Creates our node at `own`, then waits (when `wait`) until the barrier is open. The
    /// Stat of our node once it is; `None` when not waiting and it is not.
    async fn enter_steps(&self, own: &str, wait: bool) -> Result<Option<Stat>> {
        let mut created = None;
        loop {
            let (ready, watch) = retrying(&self.client, || {
                exists_watch(&self.client, &self.ready_path)
            })
            .await?;
            let stat = match created {
                Some(stat) => stat,
                None => *created.insert(self.create_own(own).await?),
            };
            if ready.is_some() {
                return Ok(Some(stat));
            }
            if self.members().await?.len() >= self.member_qty {
                let made = retrying(&self.client, || {
                    self.client
                        .create(&self.ready_path, b"", CreateOptions::persistent())
                })
                .await;
                return match made {
                    Ok(_) | Err(Error::Code(ErrorCode::NodeExists)) => Ok(Some(stat)),
                    Err(e) => Err(e.into()),
                };
            }
            if !wait {
                return Ok(None);
            }
            // Whatever woke us (ready made, a connection event), look again.
            let _ = watch.await;
        }
    }

    /// Creates our node (its parents too) and returns its Stat.
    async fn create_own(&self, own: &str) -> Result<Stat> {
        let options = CreateOptions::ephemeral();
        loop {
            let made = retrying(&self.client, || {
                self.client.create_with_stat(own, b"", options.clone())
            })
            .await;
            match made {
                Ok((_, stat)) => return Ok(stat),
                // Made by a try cut off by a connection loss, on this session.
                Err(Error::Code(ErrorCode::NodeExists)) => {
                    if let Some(stat) = retrying(&self.client, || self.client.exists(own)).await? {
                        return Ok(stat);
                    }
                }
                Err(Error::Code(ErrorCode::NoNode)) => {
                    create_parents(&self.client, &self.path).await?
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The members' names (every child but `ready`), retrying while the connection is lost.
    async fn members(&self) -> Result<Vec<String>> {
        match retrying(&self.client, || self.client.get_children(&self.path)).await {
            Ok(mut c) => {
                c.retain(|n| n != READY);
                Ok(c)
            }
            Err(Error::Code(ErrorCode::NoNode)) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }
}

async fn within<T>(deadline: Option<Instant>, f: impl Future<Output = Result<T>>) -> Result<T> {
    match deadline {
        Some(d) => timeout_at(d, f).await.unwrap_or(Err(RecipeError::Timeout)),
        None => f.await,
    }
}

/// Deletes this member's node when an enter gives up, also when dropped.
#[derive(Debug)]
struct RemoveOwn {
    client: Client,
    parent: String,
    path: String,
    session: i64,
    handle: Option<Handle>,
    armed: bool,
}

impl RemoveOwn {
    fn new(shape: &Shape, name: &str) -> RemoveOwn {
        RemoveOwn {
            client: shape.client.clone(),
            parent: shape.path.clone(),
            path: child_path(&shape.path, name),
            session: raw_session_id(&shape.client),
            handle: Handle::try_current().ok(),
            armed: true,
        }
    }

    fn spawn(&mut self) -> Removal {
        self.armed = false;
        let target = Target {
            id: None,
            path: Some(self.path.clone()),
            session: (self.session != 0).then_some(self.session),
        };
        spawn_removal(
            self.handle.as_ref(),
            self.client.clone(),
            self.parent.clone(),
            target,
        )
    }

    async fn remove_now(&mut self) {
        let _ = self.spawn().wait(CLEANUP_GRACE).await;
    }
}

impl Drop for RemoveOwn {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.spawn();
        }
    }
}

/// Starts the watch on a member's node and session, as a held lock's.
fn hold(shape: &Shape, node: ProtectedNode) -> Arc<Holding> {
    Holding::start(
        shape.client.clone(),
        shape.path.clone(),
        node,
        None,
        shape.policy,
    )
}
