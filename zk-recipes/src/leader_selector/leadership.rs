//! [`Leadership`]: one term, as the leader's task sees it: who leads, the fencing token, when
//! the term ends, and writes fenced by the term's node.

use tokio::sync::watch;
use zk_session::{Client, Op, OpResult};

use crate::{
    plumbing::fence::{self, Refused},
    LostReason, RecipeError, Result,
};

/// One term of leadership, handed to the leader's task.
///
/// The task is dropped when the term is lost, so most tasks need nothing from this handle.
/// It serves the rest: things the task spawned can wait on [`lost`](Self::lost), and writes
/// that must not land after the term can go through [`fenced_multi`](Self::fenced_multi).
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::{LeaderSelector, Leadership};
/// use zk_session::{Op, Version};
///
/// let selector = LeaderSelector::builder(client, "/election/writer").task(|lead: Leadership| async move {
///     // Refused by the server once this term's node is gone.
///     let write = Op::set_data("/shared/state", b"from the leader", Version::Any);
///     if let Err(e) = lead.fenced_multi([write]).await {
///         eprintln!("term {} could not write: {e}", lead.term());
///     }
/// })
/// .start().await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Leadership {
    // Set by the supervisor when the term begins.
    pub(super) client: Client,
    pub(super) id: String,
    pub(super) node: String,
    pub(super) term: u64,
    pub(super) fencing_token: u64,
    /// Why the term ended, once it has.
    pub(super) ended: watch::Receiver<Option<LostReason>>,
}

impl Leadership {
    /// This participant's id.
    ///
    /// The same example serves for [`node`](Self::node), [`term`](Self::term),
    /// [`fencing_token`](Self::fencing_token) and [`is_current`](Self::is_current).
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_recipes::Result<()> {
    /// use zk_recipes::{LeaderSelector, Leadership};
    ///
    /// let task = |lead: Leadership| async move {
    ///     let (id, node, term) = (lead.id(), lead.node(), lead.term());
    ///     println!("{id} leads on {node}: term {term}, fencing token {}", lead.fencing_token());
    ///     assert!(lead.is_current()); // the task is dropped before its term ends
    /// };
    /// let selector = LeaderSelector::builder(client, "/election/jobs").task(task).start().await?;
    /// # Ok(()) }
    /// ```
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The node that holds the leadership.
    ///
    /// See the example on [`id`](Self::id).
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Counts this selector's terms, from 1.
    ///
    /// See the example on [`id`](Self::id).
    pub fn term(&self) -> u64 {
        self.term
    }

    /// Grows with every new leader on the path (the zxid that created the node).
    ///
    /// See the example on [`id`](Self::id).
    pub fn fencing_token(&self) -> u64 {
        self.fencing_token
    }

    /// True until the term ends.
    ///
    /// See the example on [`id`](Self::id).
    pub fn is_current(&self) -> bool {
        self.ended.borrow().is_none()
    }

    /// Completes when the term ends (at once if it has), with the reason, as
    /// [`InterProcessMutexGuard::lost`](crate::InterProcessMutexGuard::lost) does for a lock: the lock's own reasons,
    /// or [`LostReason::Released`] when the task returned, [`LostReason::Interrupted`] or
    /// [`LostReason::Closed`] when the selector ended the term.
    ///
    /// ```no_run
    /// # async fn f(lead: zk_recipes::Leadership) {
    /// let worker = {
    ///     let lead = lead.clone();
    ///     tokio::spawn(async move {
    ///         tokio::select! {
    ///             reason = lead.lost() => eprintln!("term over: {reason}"),
    ///             _ = std::future::pending::<()>() => {} // the work
    ///         }
    ///     })
    /// };
    /// # }
    /// ```
    pub async fn lost(&self) -> LostReason {
        let mut ended = self.ended.clone();
        loop {
            if let Some(r) = *ended.borrow_and_update() {
                return r;
            }
            // The supervisor sends the reason before it drops the sender.
            if ended.changed().await.is_err() {
                return ended.borrow().unwrap_or(LostReason::Closed);
            }
        }
    }

    /// Runs `ops` as one transaction behind a check that the leadership node still exists:
    /// once it is gone the server refuses them all, and this is [`RecipeError::Lost`].
    ///
    /// See the example on [`Leadership`].
    pub async fn fenced_multi(&self, ops: impl IntoIterator<Item = Op>) -> Result<Vec<OpResult>> {
        if let Some(reason) = *self.ended.borrow() {
            return Err(RecipeError::Lost(reason));
        }
        match fence::checked_multi(&self.client, &self.node, ops).await {
            Ok(results) => Ok(results),
            Err(Refused::Fence(_)) => Err(RecipeError::Lost(LostReason::NodeDeleted)),
            Err(Refused::Op(e)) => Err(e.into()),
        }
    }
}
