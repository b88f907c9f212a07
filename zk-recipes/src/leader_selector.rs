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
//! let selector = LeaderSelector::builder(client, "/services/compactor/leader")
//!     .task(|lead: Leadership| async move {
//!         println!("{} leads with fencing token {}", lead.id(), lead.fencing_token());
//!         tokio::time::sleep(std::time::Duration::from_secs(60)).await; // the leader's work
//!     })
//!     .id("compactor-2")
//!     .auto_requeue(true)
//!     .start()
//!     .await?;
//! // ... later
//! selector.close().await?;
//! # Ok(()) }
//! ```

// This file holds the selector's handle; beside it are its builder, the term handed to the
// leader's task, and the supervisor task that runs the election.
mod builder;
mod leadership;
mod supervisor;

use std::{future::Future, pin::Pin};

use tokio::sync::{mpsc, oneshot, watch};
use zk_session::Client;

pub use self::{builder::LeaderSelectorBuilder, leadership::Leadership};
use crate::{participant::list_participants, RecipeError, Result, ValueWatch};

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
    Close(oneshot::Sender<Result<()>>),
}

/// Where a [`LeaderSelector`] stands: the recipe's [`status`](LeaderSelector::status). A new
/// value is published only when the state changes.
///
/// ```no_run
/// # async fn f(selector: zk_recipes::LeaderSelector) -> zk_recipes::Result<()> {
/// use zk_recipes::SelectorStatus;
/// let mut status = selector.status();
/// match status.wait_for(|s| s.is_leader() || s.has_ended()).await? {
///     SelectorStatus::Leading => println!("the task runs"),
///     SelectorStatus::Ended(why) => println!("out of the election: {why}"),
///     other => println!("{other:?}"),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SelectorStatus {
    /// In line for a term.
    Queued,
    /// Elected: the task runs.
    Leading,
    /// Out of line after a term, without auto-requeue: see
    /// [`requeue`](LeaderSelector::requeue).
    Idle,
    /// The selector was closed (or dropped): the last state.
    Closed,
    /// The selector ended for another reason (the client's end: [`RecipeError::Lost`]; the
    /// server's refusal of our node): the last state.
    Ended(RecipeError),
}

impl SelectorStatus {
    /// Whether the task runs as leader.
    pub fn is_leader(&self) -> bool {
        matches!(self, SelectorStatus::Leading)
    }

    /// Whether this is a last state ([`Closed`](Self::Closed) or [`Ended`](Self::Ended)).
    pub fn has_ended(&self) -> bool {
        matches!(self, SelectorStatus::Closed | SelectorStatus::Ended(_))
    }
}

/// The public status of a selector in the supervisor's `state`.
fn selector_status(state: &Status) -> SelectorStatus {
    match &state.ended {
        Some(RecipeError::Closed) => SelectorStatus::Closed,
        Some(e) => SelectorStatus::Ended(e.clone()),
        None if state.leading => SelectorStatus::Leading,
        None if state.queued => SelectorStatus::Queued,
        None => SelectorStatus::Idle,
    }
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
/// let selector = LeaderSelector::builder(client, "/election/c")
///     .id("me")
///     .start()
///     .await?;
/// if let Some(leader) = selector.leader().await? {
///     println!("{} leads; is it us? {}", leader.id, selector.has_leadership());
/// }
/// selector.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct LeaderSelector {
    client: Client,
    path: String,
    id: String,
    ctl: mpsc::UnboundedSender<Ctl>,
    status: watch::Receiver<Status>,
    public: watch::Receiver<SelectorStatus>,
}

impl LeaderSelector {
    /// A builder for a selector at `path`; its [`task`](LeaderSelectorBuilder::task) runs
    /// whenever elected.
    ///
    /// ```no_run
    /// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
    /// use zk_recipes::LeaderSelector;
    /// let selector = LeaderSelector::builder(client, "/election/b")
    ///     .task(|lead| async move {
    ///         println!("term {} begins", lead.term());
    ///     })
    ///     .start()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn builder(client: Client, path: impl Into<String>) -> LeaderSelectorBuilder {
        LeaderSelectorBuilder::new(client, path.into())
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

    /// Where the selector stands, as it changes; its last state says why it ended.
    ///
    /// See the example on [`SelectorStatus`].
    pub fn status(&self) -> ValueWatch<SelectorStatus> {
        ValueWatch::new(self.public.clone())
    }

    /// Queues again after a term ended without auto-requeue. False when already queued or
    /// leading, or when the selector has ended.
    ///
    /// ```no_run
    /// # fn example(selector: &zk_recipes::LeaderSelector) {
    /// use zk_recipes::SelectorStatus;
    /// // Without auto-requeue a participant leaves the line after one term; queue it again.
    /// match selector.status().get() {
    ///     SelectorStatus::Ended(reason) => println!("out of the election for good: {reason}"),
    ///     SelectorStatus::Idle if selector.requeue() => println!("queued for another term"),
    ///     _ => {}
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
    /// that is done: `Ok`, or the server's refusal of the deletion (the node's deletion goes
    /// on in the background if the connection is down).
    ///
    /// See the example on [`LeaderSelector`].
    pub async fn close(self) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        if self.ctl.send(Ctl::Close(tx)).is_err() {
            return Ok(());
        }
        rx.await.unwrap_or(Ok(()))
    }
}
