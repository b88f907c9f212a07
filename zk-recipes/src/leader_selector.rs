//! Leader election that runs a task while elected, in the manner of Curator's
//! `LeaderSelector`, and interoperable with it on the same path.
//!
//! As in Curator, the selector is an [`InterProcessMutex`](crate::InterProcessMutex) on the election path whose node
//! (`<path>/_c_<uuid>-lock-<seq>`) carries the participant id as its data. Whoever holds the
//! mutex leads: the selector runs the caller's task, and leadership ends when the task
//! returns. The task is cancelled (dropped) when leadership is lost: the connection suspended
//! (with the default [`SuspendPolicy`](crate::SuspendPolicy)), the session lost or expired, or the node deleted.
//! The task is dropped *before* the node is released, so the next leader can only start after
//! this one has stopped. With auto-requeue the participant queues again after each term.
//!
//! When the session expires and the client goes on with a new one (zk-session's default),
//! the term ends as lost, and a selector with auto-requeue queues again on the new session;
//! one without it stays out until [`LeaderSelector::requeue`]. A participant still waiting
//! for its term when the session expires queues again on the new session (its place in line
//! went with the old one). With a client built with
//! [`OnExpiry::End`](zk_session::OnExpiry::End) the expiry ends the selector.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use zk_recipes::{LeaderSelector, Leadership};
//! use zk_session::Client;
//!
//! let client = Client::builder("127.0.0.1:2181").connect().await?;
//! let selector = LeaderSelector::builder(client, "/services/compactor/leader", |lead: Leadership| async move {
//!     println!("{} leads with fencing token {}", lead.id(), lead.fencing_token());
//!     tokio::time::sleep(std::time::Duration::from_secs(60)).await; // the leader's work
//! })
//! .id("compactor-2")
//! .auto_requeue(true)
//! .start().await?;
//! // ... later
//! selector.close().await;
//! # Ok(()) }
//! ```

// This file holds the selector's handle; beside it are its builder, the term handed to the
// leader's task, and the supervisor task that runs the election.
mod builder;
mod leadership;
mod supervisor;

use std::{future::Future, pin::Pin, sync::Arc};

use tokio::sync::{mpsc, oneshot, watch};
use zk_session::Client;

pub use self::{builder::LeaderSelectorBuilder, leadership::Leadership};
use crate::{participant::list_participants, LeadershipWatch, RecipeError, Result};

use crate::Participant;

type BoxTask = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;
type TaskFn = dyn Fn(Leadership) -> BoxTask + Send + Sync + 'static;

/// The supervisor's published state.
#[derive(Debug, Clone, Default)]
pub(crate) struct Status {
    pub(crate) leading: bool,
    pub(crate) queued: bool,
    pub(crate) ended: Option<RecipeError>,
}

enum Ctl {
    Requeue,
    Interrupt,
    Close(oneshot::Sender<()>),
}

/// A participant in a selector election (Curator's LeaderSelector).
///
/// Dropping it without [`close`](Self::close) cancels a running task and leaves the election
/// in the background.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::LeaderSelector;
///
/// let selector = LeaderSelector::builder(client, "/election/c", |_lead| async move {})
///     .id("me")
///     .start().await?;
/// if let Some(leader) = selector.leader().await? {
///     println!("{} leads; is it us? {}", leader.id, selector.has_leadership());
/// }
/// selector.close().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct LeaderSelector {
    client: Client,
    path: String,
    id: String,
    ctl: mpsc::UnboundedSender<Ctl>,
    status: watch::Receiver<Status>,
}

impl LeaderSelector {
    /// A builder for a selector at `path` that runs `task` whenever elected.
    ///
    /// ```no_run
    /// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
    /// use zk_recipes::LeaderSelector;
    /// let selector = LeaderSelector::builder(client, "/election/b", |lead| async move {
    ///     println!("term {} begins", lead.term());
    /// })
    /// .start().await?;
    /// # Ok(()) }
    /// ```
    pub fn builder<F, Fut>(
        client: Client,
        path: impl Into<String>,
        task: F,
    ) -> LeaderSelectorBuilder
    where
        F: Fn(Leadership) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let task: Arc<TaskFn> = Arc::new(move |l| Box::pin(task(l)) as BoxTask);
        LeaderSelectorBuilder::new(client, path.into(), task)
    }

    /// The election path.
    ///
    /// See the example on [`LeaderSelector`].
    pub fn path(&self) -> &str {
        &self.path
    }

    /// This participant's id.
    ///
    /// See the example on [`LeaderSelector`].
    pub fn id(&self) -> &str {
        &self.id
    }

    /// True while the task runs as leader.
    ///
    /// See the example on [`LeaderSelector`].
    pub fn has_leadership(&self) -> bool {
        self.status.borrow().leading
    }

    /// Whether the selector leads, as it changes: agrees with
    /// [`has_leadership`](Self::has_leadership) at every moment, and needs no runtime.
    ///
    /// ```no_run
    /// # async fn f(selector: zk_recipes::LeaderSelector) -> zk_recipes::Result<()> {
    /// let mut leading = selector.watch_leadership();
    /// leading.wait_for(true).await?;
    /// # Ok(()) }
    /// ```
    pub fn watch_leadership(&self) -> LeadershipWatch {
        LeadershipWatch::of_selector(self.status.clone())
    }

    /// Why the selector stopped, once it has: [`RecipeError::Closed`] after
    /// [`close`](Self::close), or what ended it (the client's end: closed, or a session
    /// expired on a client built with [`OnExpiry::End`](zk_session::OnExpiry::End); an
    /// expiry followed by a new session does not end it).
    ///
    /// See the example on [`requeue`](Self::requeue).
    pub fn ended(&self) -> Option<RecipeError> {
        self.status.borrow().ended.clone()
    }

    /// Queues again after a term ended without auto-requeue. False when already queued or
    /// leading, or when the selector has ended.
    ///
    /// The same example serves for [`ended`](Self::ended).
    ///
    /// ```no_run
    /// # fn example(selector: &zk_recipes::LeaderSelector) {
    /// // Without auto-requeue a participant leaves the line after one term; queue it again.
    /// if let Some(reason) = selector.ended() {
    ///     println!("out of the election for good: {reason}");
    /// } else if selector.requeue() {
    ///     println!("queued for another term");
    /// }
    /// # }
    /// ```
    pub fn requeue(&self) -> bool {
        let s = self.status.borrow();
        if s.queued || s.leading || s.ended.is_some() {
            return false;
        }
        self.ctl.send(Ctl::Requeue).is_ok()
    }

    /// Cancels the running task, as if it had returned (Curator's `interruptLeadership`).
    ///
    /// ```no_run
    /// # fn example(selector: &zk_recipes::LeaderSelector) {
    /// // Hand leadership over, e.g. before a restart: the task is cancelled and the node
    /// // released, so the next participant in line takes over.
    /// if selector.has_leadership() {
    ///     selector.interrupt_leadership();
    /// }
    /// # }
    /// ```
    pub fn interrupt_leadership(&self) {
        let _ = self.ctl.send(Ctl::Interrupt);
    }

    /// All participants, in line order (the leader first), by id.
    ///
    /// See the example on [`Participant`].
    pub async fn participants(&self) -> Result<Vec<Participant>> {
        list_participants(&self.client, &self.path).await
    }

    /// The current leader, if any participant is in line.
    ///
    /// See the example on [`LeaderSelector`].
    pub async fn leader(&self) -> Result<Option<Participant>> {
        Ok(self.participants().await?.into_iter().next())
    }

    /// Waits until the first lock node exists (`joined` counts them) or the term began; the
    /// selector's end if it came first.
    async fn joined(&self, mut joined: watch::Receiver<u64>) -> Result<()> {
        let mut status = self.status.clone();
        // The count's sender goes with the supervisor, after it has published its end.
        let mut counting = true;
        loop {
            if *joined.borrow_and_update() > 0 {
                return Ok(());
            }
            {
                let s = status.borrow_and_update();
                if s.leading {
                    return Ok(());
                }
                if let Some(e) = &s.ended {
                    return Err(e.clone());
                }
            }
            tokio::select! {
                r = joined.changed(), if counting => counting = r.is_ok(),
                r = status.changed() => r.map_err(|_| RecipeError::Closed)?,
            }
        }
    }

    /// Leaves the election: cancels a running task, then releases the node. Returns once
    /// that is done (the node's deletion goes on in the background if the connection is
    /// down).
    ///
    /// See the example on [`LeaderSelector`].
    pub async fn close(&self) {
        let (tx, rx) = oneshot::channel();
        if self.ctl.send(Ctl::Close(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}
