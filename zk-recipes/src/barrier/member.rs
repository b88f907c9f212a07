//! [`DoubleBarrierMember`]: one member's place in a [`DoubleBarrier`](super::DoubleBarrier)
//! once entered, with the watch that says when it can no longer be trusted, and the leave.

use std::{sync::Arc, time::Duration};

use tokio::time::Instant;
use zk_session::{Error, ErrorCode, Version};

use super::{hold, within, Shape};
use crate::{
    mutex_guard::{holding_views, Holding},
    plumbing::{
        protected::child_path, protected::ProtectedNode, retry::retrying, watches::exists_watch,
    },
    LostReason, RecipeError, Result,
};

/// A member of a [`DoubleBarrier`](crate::DoubleBarrier) that has entered: the barrier's
/// hold. Release it with [`release`](Self::release) (Curator's `leave`: waits until every
/// member has left); dropping it deletes its node in the background, as its process ending
/// would.
///
/// Like a mutex guard, it watches its session and its node: [`lost`](Self::lost) completes
/// when the node is deleted, the session expires or is presumed lost, or the connection is
/// suspended; trust never comes back.
///
/// ```no_run
/// # async fn work() {}
/// # async fn f(barrier: zk_recipes::DoubleBarrier) -> zk_recipes::Result<()> {
/// let member = barrier.acquire().await?;
/// tokio::select! {
///     _ = work() => {}
///     reason = member.lost() => eprintln!("stopped: membership {reason}"),
/// }
/// member.release().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping the member leaves the barrier without waiting for the others"]
pub struct DoubleBarrierMember {
    shape: Arc<Shape>,
    name: String,
    holding: Arc<Holding>,
    released: bool,
}

impl DoubleBarrierMember {
    pub(super) fn new(shape: Arc<Shape>, node: ProtectedNode) -> DoubleBarrierMember {
        DoubleBarrierMember {
            name: node.name.clone(),
            holding: hold(&shape, node),
            shape,
            released: false,
        }
    }

    holding_views! {
        /// This member's node.
        ///
        /// See the example on [`lost_reason`](Self::lost_reason).
        path;

        /// True while nothing has cast doubt on the membership.
        ///
        /// See the example on [`lost_reason`](Self::lost_reason).
        is_held;

        /// Why the membership can no longer be trusted, if it cannot.
        ///
        /// ```no_run
        /// # fn f(member: zk_recipes::DoubleBarrierMember) {
        /// if member.is_held() {
        ///     println!("inside as {}", member.path());
        /// } else {
        ///     println!("no longer inside: {:?}", member.lost_reason());
        /// }
        /// # }
        /// ```
        lost_reason;

        /// Completes when the membership can no longer be trusted (at once if it already
        /// cannot). Cancel-safe; may be awaited from several places.
        ///
        /// See the example on [`DoubleBarrierMember`].
        lost;
    }

    /// Leaves: deletes this member's node and waits until every member has left, then
    /// deletes `ready`. Cancel-safe: a dropped release deletes this member's node in the
    /// background.
    ///
    /// See the example on [`DoubleBarrierMember`].
    pub async fn release(self) -> Result<()> {
        self.release_until(None).await
    }

    /// [`release`](Self::release), giving up with [`RecipeError::Timeout`] after `wait`
    /// (this member's node is deleted all the same).
    ///
    /// ```no_run
    /// # async fn f(member: zk_recipes::DoubleBarrierMember) -> zk_recipes::Result<()> {
    /// use std::time::Duration;
    ///
    /// member.release_timeout(Duration::from_secs(30)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn release_timeout(self, wait: Duration) -> Result<()> {
        self.release_until(Some(Instant::now() + wait)).await
    }

    async fn release_until(mut self, deadline: Option<Instant>) -> Result<()> {
        // Our node goes on the way out: that is no loss.
        self.holding.mark_released();
        let left = within(deadline, self.leave_steps()).await;
        self.released = true;
        let deleted = self.holding.finish(None).await;
        left.and(deleted)
    }

    /// Curator's leave: the lowest member waits for the highest to go, every other member
    /// deletes its node and waits for the lowest, until none is left.
    async fn leave_steps(&self) -> Result<()> {
        let shape = &self.shape;
        let mut ours_should_exist = true;
        loop {
            let mut members = shape.members().await?;
            members.sort();
            let ours = members.iter().position(|m| *m == self.name);
            if ours.is_none() && ours_should_exist {
                return Err(RecipeError::Lost(LostReason::NodeDeleted));
            }
            let watch_name = match (members.len(), ours) {
                (0, _) => break,
                (1, Some(_)) => {
                    self.delete_own().await?;
                    break;
                }
                (_, Some(0)) => members.last(),
                (_, ours) => {
                    if ours.is_some() {
                        self.delete_own().await?;
                        ours_should_exist = false;
                    }
                    members.first()
                }
            };
            let Some(watch_name) = watch_name else { break };
            let watched = child_path(&shape.path, watch_name);
            if let (Some(_), w) =
                retrying(&shape.client, || exists_watch(&shape.client, &watched)).await?
            {
                let _ = w.await;
            }
        }
        let deleted = retrying(&shape.client, || {
            shape.client.delete(&shape.ready_path, Version::Any)
        })
        .await;
        match deleted {
            Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    async fn delete_own(&self) -> Result<()> {
        let client = &self.shape.client;
        let own = self.path();
        match retrying(client, || client.delete(own, Version::Any)).await {
            Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

impl Drop for DoubleBarrierMember {
    fn drop(&mut self) {
        if !self.released {
            self.holding.finish_in_background();
        }
    }
}
