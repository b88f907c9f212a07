//! Leader election that runs a task while elected, in the manner of Curator's
//! `LeaderSelector`, and interoperable with it on the same path.
//!
//! As in Curator, the selector is a [`Mutex`] on the election path whose node
//! (`<path>/_c_<uuid>-lock-<seq>`) carries the participant id as its data. Whoever holds the
//! mutex leads: the selector runs the caller's task, and leadership ends when the task
//! returns. The task is cancelled (dropped) when leadership is lost: the connection suspended
//! (with the default [`SuspendPolicy`]), the session lost or expired, or the node deleted.
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
//! use zk_recipes::leader_selector::{LeaderSelector, Leadership};
//! use zk_session::Client;
//!
//! let client = Client::builder("127.0.0.1:2181").connect().await?;
//! let selector = LeaderSelector::builder(client, "/services/compactor/leader", |lead: Leadership| async move {
//!     println!("{} leads with fencing token {}", lead.id(), lead.fencing_token());
//!     tokio::time::sleep(std::time::Duration::from_secs(60)).await; // the leader's work
//! })
//! .id("compactor-2")
//! .auto_requeue(true)
//! .start();
//! // ... later
//! selector.close().await;
//! # Ok(()) }
//! ```

use std::{future::Future, pin::Pin, sync::Arc};

use tokio::sync::{mpsc, oneshot, watch};
use zk_session::{Client, Error, ErrorCode, Op, OpResult, Version};

use crate::{
    candidacy::session_over,
    mutex::Mutex,
    participant::{default_id, list_participants},
    protected::retry_delay,
    LockGuard, LostReason, RecipeError, Result,
};

pub use crate::candidacy::SuspendPolicy;
pub use crate::participant::Participant;

type BoxTask = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;
type TaskFn = dyn Fn(Leadership) -> BoxTask + Send + Sync + 'static;

/// One term of leadership, handed to the leader's task.
///
/// The task is dropped when the term is lost, so most tasks need nothing from this handle.
/// It serves the rest: things the task spawned can wait on [`lost`](Self::lost), and writes
/// that must not land after the term can go through [`fenced_multi`](Self::fenced_multi).
///
/// ```no_run
/// # async fn f(client: zk_session::Client) {
/// use zk_recipes::leader_selector::{LeaderSelector, Leadership};
/// use zk_session::{Op, Version};
///
/// let selector = LeaderSelector::builder(client, "/election/writer", |lead: Leadership| async move {
///     // Refused by the server once this term's node is gone.
///     let write = Op::set_data("/shared/state", b"from the leader", Version::Any);
///     if let Err(e) = lead.fenced_multi([write]).await {
///         eprintln!("term {} could not write: {e}", lead.term());
///     }
/// })
/// .start();
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Leadership {
    client: Client,
    id: String,
    node: String,
    term: u64,
    fencing_token: u64,
    ended: watch::Receiver<bool>,
}

impl Leadership {
    /// This participant's id.
    ///
    /// The same example serves for [`node`](Self::node), [`term`](Self::term),
    /// [`fencing_token`](Self::fencing_token) and [`is_current`](Self::is_current).
    ///
    /// ```no_run
    /// # fn example(client: zk_session::Client) {
    /// use zk_recipes::leader_selector::{LeaderSelector, Leadership};
    ///
    /// let task = |lead: Leadership| async move {
    ///     let (id, node, term) = (lead.id(), lead.node(), lead.term());
    ///     println!("{id} leads on {node}: term {term}, fencing token {}", lead.fencing_token());
    ///     assert!(lead.is_current()); // the task is dropped before its term ends
    /// };
    /// let selector = LeaderSelector::builder(client, "/election/jobs", task).start();
    /// # }
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
        !*self.ended.borrow()
    }

    /// Completes when the term ends (at once if it has).
    ///
    /// ```no_run
    /// # async fn f(lead: zk_recipes::leader_selector::Leadership) {
    /// let worker = {
    ///     let lead = lead.clone();
    ///     tokio::spawn(async move {
    ///         tokio::select! {
    ///             _ = lead.lost() => {}
    ///             _ = std::future::pending::<()>() => {} // the work
    ///         }
    ///     })
    /// };
    /// # }
    /// ```
    pub async fn lost(&self) {
        let mut ended = self.ended.clone();
        let _ = ended.wait_for(|e| *e).await;
    }

    /// Runs `ops` as one transaction behind a check that the leadership node still exists:
    /// once it is gone the server refuses them all, and this is [`RecipeError::Lost`].
    ///
    /// See the example on [`Leadership`].
    pub async fn fenced_multi(&self, ops: impl IntoIterator<Item = Op>) -> Result<Vec<OpResult>> {
        if !self.is_current() {
            return Err(RecipeError::Lost("leadership ended"));
        }
        let check = Op::check(&self.node, Version::Any);
        match self.client.multi(std::iter::once(check).chain(ops)).await {
            Ok(mut results) => {
                results.remove(0);
                Ok(results)
            }
            Err(Error::Multi { index: 0, .. }) => Err(RecipeError::Lost("leadership node deleted")),
            Err(Error::Multi {
                index,
                code,
                results,
            }) => Err(Error::Multi {
                index: index - 1,
                code,
                results: results.get(1..).unwrap_or_default().to_vec(),
            }
            .into()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Configures and starts a [`LeaderSelector`]; see [`LeaderSelector::builder`].
///
/// ```no_run
/// # fn f(client: zk_session::Client) {
/// use zk_recipes::leader_selector::{LeaderSelector, SuspendPolicy};
///
/// let selector = LeaderSelector::builder(client, "/election/jobs", |_lead| async move {
///     // lead until this returns
/// })
/// .id("worker-4")
/// .auto_requeue(true)
/// .suspend_policy(SuspendPolicy::WaitForLost)
/// .start();
/// # }
/// ```
pub struct LeaderSelectorBuilder {
    client: Client,
    path: String,
    task: Arc<TaskFn>,
    id: Option<String>,
    auto_requeue: bool,
    policy: SuspendPolicy,
}

impl std::fmt::Debug for LeaderSelectorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderSelectorBuilder")
            .field("path", &self.path)
            .field("id", &self.id)
            .field("auto_requeue", &self.auto_requeue)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl LeaderSelectorBuilder {
    /// The participant id, stored as the node's data (default `host:pid:n`).
    ///
    /// See the example on [`LeaderSelectorBuilder`].
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Whether to queue again after each term (default false: one term, then out).
    ///
    /// See the example on [`LeaderSelectorBuilder`].
    pub fn auto_requeue(mut self, requeue: bool) -> Self {
        self.auto_requeue = requeue;
        self
    }

    /// What to do when the connection is suspended (default [`SuspendPolicy::StepDown`]:
    /// cancel the task).
    ///
    /// See the example on [`LeaderSelectorBuilder`].
    pub fn suspend_policy(mut self, policy: SuspendPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Queues for leadership in the background and returns at once. Must be called inside
    /// a tokio runtime.
    ///
    /// See the example on [`LeaderSelectorBuilder`].
    pub fn start(self) -> LeaderSelector {
        let id = self.id.unwrap_or_else(default_id);
        let mutex = Mutex::builder(self.client.clone(), self.path.clone())
            .data(id.as_bytes())
            .suspended_is_lost(self.policy == SuspendPolicy::StepDown)
            .build();
        let (ctl, ctl_rx) = mpsc::unbounded_channel();
        let status = watch::channel(Status {
            queued: true,
            ..Status::default()
        })
        .0;
        let sup = Supervisor {
            client: self.client.clone(),
            mutex,
            id: id.clone(),
            task: self.task,
            auto_requeue: self.auto_requeue,
            status: status.clone(),
            ctl: ctl_rx,
            term: 0,
        };
        tokio::spawn(sup.run());
        LeaderSelector {
            client: self.client,
            path: self.path,
            id,
            ctl,
            status: status.subscribe(),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Status {
    leading: bool,
    queued: bool,
    ended: Option<RecipeError>,
}

enum Ctl {
    Requeue,
    Interrupt,
    Close(oneshot::Sender<()>),
}

/// A participant in a selector election; see the [module documentation](self).
///
/// Dropping it without [`close`](Self::close) cancels a running task and leaves the election
/// in the background.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::leader_selector::LeaderSelector;
///
/// let selector = LeaderSelector::builder(client, "/election/c", |_lead| async move {})
///     .id("me")
///     .start();
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
    /// # fn f(client: zk_session::Client) {
    /// use zk_recipes::leader_selector::LeaderSelector;
    /// let selector = LeaderSelector::builder(client, "/election/b", |lead| async move {
    ///     println!("term {} begins", lead.term());
    /// })
    /// .start();
    /// # }
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
        LeaderSelectorBuilder {
            client,
            path: path.into(),
            task: Arc::new(move |l| Box::pin(task(l)) as BoxTask),
            id: None,
            auto_requeue: false,
            policy: SuspendPolicy::default(),
        }
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

    /// The leadership flag as a `tokio::sync::watch` receiver.
    ///
    /// ```no_run
    /// # async fn f(selector: zk_recipes::leader_selector::LeaderSelector) {
    /// let mut leading = selector.watch_leadership();
    /// let _ = leading.wait_for(|l| *l).await;
    /// # }
    /// ```
    pub fn watch_leadership(&self) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(self.has_leadership());
        let mut status = self.status.clone();
        tokio::spawn(async move {
            loop {
                let leading = status.borrow_and_update().leading;
                tx.send_if_modified(|v| std::mem::replace(v, leading) != leading);
                tokio::select! {
                    r = status.changed() => if r.is_err() { break },
                    _ = tx.closed() => break,
                }
            }
        });
        rx
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
    /// # fn example(selector: &zk_recipes::leader_selector::LeaderSelector) {
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
    /// # fn example(selector: &zk_recipes::leader_selector::LeaderSelector) {
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

/// The background task of one selector.
struct Supervisor {
    client: Client,
    mutex: Mutex,
    id: String,
    task: Arc<TaskFn>,
    auto_requeue: bool,
    status: watch::Sender<Status>,
    ctl: mpsc::UnboundedReceiver<Ctl>,
    term: u64,
}

/// How a term ended.
enum TermEnd {
    Returned,
    Lost(LostReason),
    Interrupted,
    Close(Option<oneshot::Sender<()>>),
}

impl Supervisor {
    async fn run(mut self) {
        let mut reply = None;
        let end = 'outer: loop {
            if !self.status.borrow().queued {
                match self.ctl.recv().await {
                    Some(Ctl::Requeue) => self.status.send_modify(|s| s.queued = true),
                    Some(Ctl::Interrupt) => {}
                    Some(Ctl::Close(r)) => {
                        reply = Some(r);
                        break RecipeError::Closed;
                    }
                    None => break RecipeError::Closed,
                }
                continue;
            }
            let acquired = {
                // Kept across commands: dropping it would give up our place in line.
                let acquire = self.mutex.acquire();
                tokio::pin!(acquire);
                loop {
                    tokio::select! {
                        r = &mut acquire => break r,
                        c = self.ctl.recv() => match c {
                            Some(Ctl::Close(r)) => {
                                reply = Some(r);
                                break 'outer RecipeError::Closed;
                            }
                            None => break 'outer RecipeError::Closed,
                            Some(Ctl::Requeue | Ctl::Interrupt) => {}
                        },
                    }
                }
            };
            let guard = match acquired {
                Ok(g) => g,
                Err(e) => {
                    // Over for good; an expiry the client recovers from is not: the next
                    // acquire runs on the new session.
                    if self.client.has_ended() {
                        break session_over(self.client.state());
                    }
                    match e {
                        RecipeError::Session(s)
                            if !s.is_retryable() && s.code() != Some(ErrorCode::SessionExpired) =>
                        {
                            break RecipeError::Session(s)
                        }
                        _ => tokio::time::sleep(retry_delay(3)).await,
                    }
                    continue;
                }
            };
            // Never lead on a node that is not the current session's (CURATOR-696): read it
            // back before the term starts. Anything doubtful means queueing again.
            let owned = tokio::select! {
                r = self.client.exists(guard.path()) => {
                    matches!(r, Ok(Some(stat)) if stat.ephemeral_owner == self.client.session_id())
                }
                _ = guard.lost() => false,
            };
            if !owned {
                let _ = guard.release().await;
                continue;
            }
            match self.lead(guard).await {
                TermEnd::Close(r) => {
                    reply = r;
                    break RecipeError::Closed;
                }
                // The client is over for good: no point queueing with it. (After an expiry
                // with a new session to follow, the term ends like any other.)
                TermEnd::Lost(
                    r @ (LostReason::Expired | LostReason::Closed | LostReason::AuthFailed),
                ) if self.client.has_ended() => break RecipeError::Lost(r.as_str()),
                TermEnd::Returned | TermEnd::Interrupted | TermEnd::Lost(_) => {
                    let requeue = self.auto_requeue;
                    self.status.send_modify(|s| s.queued = requeue);
                }
            }
        };
        self.status.send_modify(|s| {
            s.leading = false;
            s.queued = false;
            s.ended = Some(end);
        });
        if let Some(r) = reply {
            let _ = r.send(());
        }
    }

    /// One term: runs the task until it returns, the lock is lost, or a command ends it.
    async fn lead(&mut self, guard: LockGuard) -> TermEnd {
        self.term += 1;
        let (ended_tx, ended) = watch::channel(false);
        let leadership = Leadership {
            client: self.client.clone(),
            id: self.id.clone(),
            node: guard.path().to_owned(),
            term: self.term,
            fencing_token: guard.fencing_token(),
            ended,
        };
        self.status.send_modify(|s| {
            s.leading = true;
            s.queued = false;
        });
        // Spawned, so a panic in the task ends the term instead of the selector.
        let mut job = tokio::spawn((self.task)(leadership));
        let mut returned = false;
        let end = loop {
            tokio::select! {
                _ = &mut job => {
                    returned = true;
                    break TermEnd::Returned;
                }
                reason = guard.lost() => break TermEnd::Lost(reason),
                c = self.ctl.recv() => match c {
                    Some(Ctl::Interrupt) => break TermEnd::Interrupted,
                    Some(Ctl::Close(r)) => break TermEnd::Close(Some(r)),
                    None => break TermEnd::Close(None),
                    Some(Ctl::Requeue) => {}
                },
            }
        };
        if !returned {
            job.abort();
            // Wait until the task is really dropped: only then may the node go and someone
            // else lead.
            let _ = job.await;
        }
        let _ = ended_tx.send(true);
        self.status.send_modify(|s| s.leading = false);
        // A failed delete is retried in the background until the node or the session is gone.
        let _ = guard.release().await;
        end
    }
}
