//! A double barrier on Curator's layout (DistributedDoubleBarrier): members enter together
//! once enough have arrived, and leave together once all are done.
//!
//! Under the barrier's path each member has an EPHEMERAL node named by a fresh uuid (no
//! prefix, no sequence), and the PERSISTENT node `ready` says that enough have entered.
//! Curator's processes and ours count each other.
//!
//! Beyond Curator: `enter` counts again after every wake-up instead of returning after the
//! first (GH-1290: a reconnect or any spurious event let a member through alone), and an
//! enter that times out, fails or is dropped deletes its node (CURATOR-318: a member that
//! gave up was counted by later arrivals). Requests cut off by a connection loss are tried
//! again on the same session; an enter whose session expires fails with
//! [`RecipeError::Lost`] (its node went with the session), and the caller may enter again on
//! the new one.
//!
//! A member dropped after `enter` without `leave` takes its node away (in the background),
//! as its process ending would: Curator's barrier has no close, and its node stays until the
//! session ends, so the others' `leave` would wait for a member that is gone for good.

use std::{sync::Mutex as StdMutex, time::Duration};

use tokio::{
    runtime::Handle,
    time::{timeout_at, Instant},
};
use zk_session::{Client, CreateOptions, Error, ErrorCode, Version};

use crate::plumbing::liveness::raw_session_id;
use crate::{
    plumbing::cleanup::{spawn_removal, Removal, Target},
    plumbing::pending::CLEANUP_GRACE,
    plumbing::protected::{child_path, create_parents, new_protected_id},
    plumbing::retry::retrying,
    plumbing::session_scope::SessionScope,
    plumbing::watches::exists_watch,
    RecipeError, Result,
};

/// The node that says enough members have entered.
const READY: &str = "ready";

/// A double barrier for `member_qty` members at a path; see the
/// [module documentation](self).
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use std::time::Duration;
/// use zk_recipes::DoubleBarrier;
///
/// let barrier = DoubleBarrier::new(client, "/barriers/stage-2", 3);
/// barrier.enter_timeout(Duration::from_secs(60)).await?; // all three are in
/// // ... the work of the stage ...
/// barrier.leave().await?; // all three are done
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct DoubleBarrier {
    client: Client,
    path: String,
    member_qty: usize,
    our_name: String,
    ready_path: String,
    /// This member's node between a successful enter and the start of a leave: removed
    /// (by its `Drop`) when the barrier is dropped.
    inside: StdMutex<Option<RemoveOwn>>,
}

impl DoubleBarrier {
    /// A member of the barrier at `path` that opens when `member_qty` members have entered.
    ///
    /// See the example on [`DoubleBarrier`].
    pub fn new(client: Client, path: impl Into<String>, member_qty: usize) -> DoubleBarrier {
        let path = path.into();
        DoubleBarrier {
            client,
            ready_path: child_path(&path, READY),
            path,
            member_qty,
            our_name: new_protected_id(),
            inside: StdMutex::new(None),
        }
    }

    /// This member's node.
    ///
    /// See the example on [`DoubleBarrier`].
    pub fn node_path(&self) -> String {
        child_path(&self.path, &self.our_name)
    }

    /// Waits until `member_qty` members have entered, on one session: when it expires
    /// meanwhile, fails with [`RecipeError::Lost`]. Cancel-safe: a dropped enter deletes
    /// this member's node in the background, and so does dropping the barrier once entered.
    ///
    /// See the example on [`DoubleBarrier`].
    pub async fn enter(&self) -> Result<()> {
        self.enter_until(None).await
    }

    /// [`enter`](Self::enter), giving up with [`RecipeError::Timeout`] after `wait` (this
    /// member's node is deleted, so others do not count it).
    ///
    /// See the example on [`DoubleBarrier`].
    pub async fn enter_timeout(&self, wait: Duration) -> Result<()> {
        self.enter_until(Some(Instant::now() + wait)).await
    }

    /// Waits until every member has left (deleting this member's node on the way), then
    /// deletes `ready`. Cancel-safe: a dropped leave deletes this member's node in the
    /// background.
    ///
    /// See the example on [`DoubleBarrier`].
    pub async fn leave(&self) -> Result<()> {
        self.leave_until(None).await
    }

    /// [`leave`](Self::leave) within `wait`.
    ///
    /// ```no_run
    /// # async fn f(barrier: zk_recipes::DoubleBarrier) -> zk_recipes::Result<()> {
    /// use std::time::Duration;
    ///
    /// barrier.leave_timeout(Duration::from_secs(30)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn leave_timeout(&self, wait: Duration) -> Result<()> {
        self.leave_until(Some(Instant::now() + wait)).await
    }

    async fn enter_until(&self, deadline: Option<Instant>) -> Result<()> {
        let mut cleanup = RemoveOwn::new(self);
        let r = within(deadline, async {
            let scope = SessionScope::enter(&self.client)
                .await
                .map_err(RecipeError::Lost)?;
            cleanup.session = scope.id();
            tokio::select! {
                r = self.enter_steps() => r,
                reason = scope.wait_ended() => Err(RecipeError::Lost(reason)),
            }
        })
        .await;
        if r.is_ok() {
            // Still ours to delete, should the barrier be dropped before it leaves. An
            // earlier enter's owner of the same node must not delete it now.
            if let Some(mut earlier) = self.lock_inside().replace(cleanup) {
                earlier.armed = false;
            }
        } else {
            cleanup.remove_now().await;
        }
        r
    }

    async fn leave_until(&self, deadline: Option<Instant>) -> Result<()> {
        // The leave owns the node from here; what an enter left is replaced.
        let taken = self.lock_inside().take();
        let mut cleanup = taken.unwrap_or_else(|| RemoveOwn::new(self));
        let r = within(deadline, self.leave_steps()).await;
        cleanup.remove_now().await;
        r
    }

    fn lock_inside(&self) -> std::sync::MutexGuard<'_, Option<RemoveOwn>> {
        self.inside.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn enter_steps(&self) -> Result<()> {
        let own = self.node_path();
        let mut created = false;
        loop {
            let (ready, watch) = retrying(&self.client, || {
                exists_watch(&self.client, &self.ready_path)
            })
            .await?;
            if !created {
                self.create_own(&own).await?;
                created = true;
            }
            if ready.is_some() {
                return Ok(());
            }
            let count = self.members().await?.len();
            if count >= self.member_qty {
                let made = retrying(&self.client, || {
                    self.client
                        .create(&self.ready_path, b"", CreateOptions::persistent())
                })
                .await;
                return match made {
                    Ok(_) | Err(Error::Code(ErrorCode::NodeExists)) => Ok(()),
                    Err(e) => Err(e.into()),
                };
            }
            // Whatever woke us (ready made, a connection event), look again.
            let _ = watch.await;
        }
    }

    async fn leave_steps(&self) -> Result<()> {
        let mut ours_should_exist = true;
        loop {
            let mut members = self.members().await?;
            members.sort();
            let ours = members.iter().position(|m| *m == self.our_name);
            if ours.is_none() && ours_should_exist {
                return Err(RecipeError::Lost(crate::LostReason::NodeDeleted));
            }
            if members.is_empty() {
                break;
            }
            if members.len() == 1 && ours.is_some() {
                self.delete_own().await?;
                break;
            }
            let watch_name = if ours == Some(0) {
                members.last()
            } else {
                if ours.is_some() {
                    self.delete_own().await?;
                    ours_should_exist = false;
                }
                members.first()
            };
            let watched = child_path(&self.path, watch_name.expect("not empty"));
            if let (Some(_), w) =
                retrying(&self.client, || exists_watch(&self.client, &watched)).await?
            {
                let _ = w.await;
            }
        }
        let deleted = retrying(&self.client, || {
            self.client.delete(&self.ready_path, Version::Any)
        })
        .await;
        match deleted {
            Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    async fn create_own(&self, own: &str) -> Result<()> {
        let options = CreateOptions::ephemeral();
        loop {
            let made = retrying(&self.client, || {
                self.client.create(own, b"", options.clone())
            })
            .await;
            match made {
                Ok(_) | Err(Error::Code(ErrorCode::NodeExists)) => return Ok(()),
                Err(Error::Code(ErrorCode::NoNode)) => {
                    create_parents(&self.client, &self.path).await?
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    async fn delete_own(&self) -> Result<()> {
        let own = self.node_path();
        let deleted = retrying(&self.client, || self.client.delete(&own, Version::Any)).await;
        match deleted {
            Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => Ok(()),
            Err(e) => Err(e.into()),
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

async fn within(
    deadline: Option<Instant>,
    f: impl std::future::Future<Output = Result<()>>,
) -> Result<()> {
    match deadline {
        Some(d) => timeout_at(d, f).await.unwrap_or(Err(RecipeError::Timeout)),
        None => f.await,
    }
}

/// Deletes this member's node when an enter gives up or a leave ends, also when dropped.
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
    fn new(b: &DoubleBarrier) -> RemoveOwn {
        RemoveOwn {
            client: b.client.clone(),
            parent: b.path.clone(),
            path: b.node_path(),
            session: raw_session_id(&b.client),
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
