//! Leader election by latch, in the manner of Curator's `LeaderLatch`, and interoperable
//! with it on the same path.
//!
//! Each participant keeps an ephemeral-sequential node `<path>/_c_<uuid>-latch-<seq>` whose
//! data is its participant id (a protected create, parents made as containers). The oldest
//! node leads; every other participant watches only the node just ahead of it. Leadership
//! lasts until the participant closes the latch or loses its session.
//!
//! Never two leaders, beyond Curator:
//! - a participant claims leadership only after reading its node back from the server and
//!   finding it owned by its *current* session (Curator's CURATOR-696 double leader);
//! - the leader drops leadership the moment the connection is suspended (with the default
//!   [`SuspendPolicy`]), or the session is lost or expires, and looks again when it
//!   reconnects;
//! - the leader keeps a watch on its own node: if someone deletes it, leadership ends at once
//!   and the participant queues again with a new node (Curator's leader would not notice).
//!
//! When the session expires, leadership ends with it (the node is gone). By default the
//! zk-session client then creates a new session on the same handle, and the latch takes
//! part again on it with a new node, as Curator's latch resets on reconnecting after a loss:
//! its [`status`](LeaderLatch::status) goes back to [`LatchStatus::InLine`], and
//! [`LeaderLatch::our_path`] names the new node. With a client built with
//! [`OnExpiry::End`](zk_session::OnExpiry::End) the expiry ends the latch: its status ends
//! as [`LatchStatus::Ended`] with [`RecipeError::Lost`], and a new client and latch are
//! needed.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use zk_recipes::{CloseMode, LeaderLatch};
//! use zk_session::Client;
//!
//! let client = Client::builder("127.0.0.1:2181").connect().await?;
//! let latch = LeaderLatch::builder(client, "/services/indexer/leader")
//!     .id("indexer-7")
//!     .start()
//!     .await?;
//! let now = latch.status().wait_for(|s| s.is_leader() || s.has_ended()).await?;
//! if now.is_leader() {
//!     println!("leading; participants: {:?}", latch.participants().await?);
//! }
//! latch.close_with(CloseMode::NotifyLeader).await?;
//! # Ok(()) }
//! ```

// This file holds the latch's handle; beside it is its engine, the task that keeps its node
// in line.
pub(crate) mod engine;

use tokio::sync::{broadcast, watch};
use zk_session::Client;

use self::engine::{Handle, Status};
use crate::{
    participant::{default_id, list_participants},
    plumbing::runtime,
    RecipeError, Result, ValueWatch,
};

pub use self::engine::LeadershipEvent;
use crate::{Participant, SuspendPolicy};

/// The node name after the protected prefix, as Curator's LeaderLatch writes it.
const LATCH_NAME: &str = "latch-";

/// Whether closing a latch tells the change streams that leadership ended (Curator's
/// `LeaderLatch.CloseMode`).
///
/// ```
/// use zk_recipes::CloseMode;
/// assert_eq!(CloseMode::default(), CloseMode::Silent);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CloseMode {
    /// No [`LeadershipEvent::NotLeader`] for the close itself (Curator's default).
    #[default]
    Silent,
    /// A leader that closes sends [`LeadershipEvent::NotLeader`] first.
    NotifyLeader,
}

/// Where a [`LeaderLatch`] stands: the recipe's [`status`](LeaderLatch::status). A new
/// value is published only when the state changes.
///
/// ```no_run
/// # async fn f(latch: zk_recipes::LeaderLatch) -> zk_recipes::Result<()> {
/// use zk_recipes::LatchStatus;
/// let mut status = latch.status();
/// match status.wait_for(|s| s.is_leader() || s.has_ended()).await? {
///     LatchStatus::Leader => println!("leading"),
///     LatchStatus::Ended(why) => println!("out of the election: {why}"),
///     other => println!("{other:?}"),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum LatchStatus {
    /// In the election, not leading: waiting in line, or for a connection.
    InLine,
    /// This participant leads.
    Leader,
    /// The latch was closed (or dropped): the last state.
    Closed,
    /// The latch ended for another reason (the client's end: [`RecipeError::Lost`]; the
    /// server's refusal of our node): the last state.
    Ended(RecipeError),
}

impl LatchStatus {
    /// Whether this participant leads.
    pub fn is_leader(&self) -> bool {
        matches!(self, LatchStatus::Leader)
    }

    /// Whether this is a last state ([`Closed`](Self::Closed) or [`Ended`](Self::Ended)).
    pub fn has_ended(&self) -> bool {
        matches!(self, LatchStatus::Closed | LatchStatus::Ended(_))
    }
}

/// Configures and starts a [`LeaderLatch`]; see [`LeaderLatch::builder`].
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::{LeaderLatch, SuspendPolicy};
///
/// let latch = LeaderLatch::builder(client, "/election/scheduler")
///     .id("scheduler@host-3")
///     .suspend_policy(SuspendPolicy::WaitForLost)
///     .start()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct LeaderLatchBuilder {
    client: Client,
    path: String,
    id: Option<String>,
    policy: SuspendPolicy,
}

impl LeaderLatchBuilder {
    /// The participant id, stored as the node's data (default `host:pid:n`).
    ///
    /// See the example on [`LeaderLatchBuilder`].
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// What to do when the connection is suspended (default [`SuspendPolicy::StepDown`]).
    ///
    /// See the example on [`LeaderLatchBuilder`].
    pub fn suspend_policy(mut self, policy: SuspendPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Joins the election and returns once this participant's node exists (so it is in
    /// [`participants`](LeaderLatch::participants)). Leadership may follow at once or later;
    /// see [`LeaderLatch::status`]. While the client is disconnected this waits for the
    /// connection; wrap it in a timeout to bound that.
    ///
    /// Fails when the path is invalid, the server refuses the create (e.g. no permission),
    /// the session ends first, or with [`RecipeError::NoRuntime`] outside a tokio runtime.
    /// Cancel-safe: a dropped start leaves the election in the background.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use zk_recipes::LeaderLatch;
    ///
    /// let start = LeaderLatch::builder(client, "/election/indexer").id("indexer-1").start();
    /// // Give up if no connection comes within 10 s.
    /// let latch = tokio::time::timeout(Duration::from_secs(10), start).await??;
    /// println!("in line as {:?}", latch.our_path());
    /// # Ok(()) }
    /// ```
    pub async fn start(self) -> Result<LeaderLatch> {
        let rt = runtime::current()?;
        let id = self.id.unwrap_or_else(default_id);
        let handle = engine::spawn(
            &rt,
            engine::Config {
                client: self.client.clone(),
                dir: self.path.clone(),
                name: LATCH_NAME,
                id: id.clone(),
                policy: self.policy,
            },
        );
        let latch = LeaderLatch {
            client: self.client,
            path: self.path,
            id,
            handle,
        };
        latch.handle.joined().await?;
        Ok(latch)
    }
}

/// A participant in a latch election (Curator's LeaderLatch).
///
/// Dropping the latch without [`close`](Self::close) leaves the election in the background
/// (silently): the node is deleted as soon as the connection allows.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::{CloseMode, LeaderLatch};
///
/// let latch = LeaderLatch::builder(client, "/election/d").id("me").start().await?;
/// let leader = latch.leader().await?.expect("we are in line at least");
/// println!("{} leads (us: {})", leader.id, latch.has_leadership());
/// latch.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct LeaderLatch {
    client: Client,
    path: String,
    id: String,
    handle: Handle,
}

impl LeaderLatch {
    /// A builder for a latch at `path` (the parent of the participants' nodes).
    ///
    /// ```no_run
    /// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
    /// let latch = zk_recipes::LeaderLatch::builder(client, "/election/a")
    ///     .start()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn builder(client: Client, path: impl Into<String>) -> LeaderLatchBuilder {
        LeaderLatchBuilder {
            client,
            path: path.into(),
            id: None,
            policy: SuspendPolicy::default(),
        }
    }

    /// The election path.
    ///
    /// See the example on [`our_path`](Self::our_path).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// This participant's id.
    ///
    /// See the example on [`our_path`](Self::our_path).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// This participant's node, while it has one (Curator's `getOurPath`).
    ///
    /// The same example serves for [`path`](Self::path) and [`id`](Self::id).
    ///
    /// ```no_run
    /// # fn example(latch: &zk_recipes::LeaderLatch) {
    /// println!("{} is in the election at {}", latch.id(), latch.path());
    /// if let Some(node) = latch.our_path() {
    ///     println!("with node {node}"); // e.g. /election/a/_c_<uuid>-latch-0000000003
    /// }
    /// # }
    /// ```
    pub fn our_path(&self) -> Option<String> {
        self.handle.status.borrow().node.clone()
    }

    /// True while this participant is the leader, as far as it can tell right now.
    ///
    /// ```no_run
    /// # fn f(latch: &zk_recipes::LeaderLatch) {
    /// if latch.has_leadership() {
    ///     println!("{} leads", latch.id());
    /// }
    /// # }
    /// ```
    pub fn has_leadership(&self) -> bool {
        self.handle.status.borrow().leader
    }

    /// Where the latch stands, as it changes; its last state says why it ended.
    ///
    /// See the example on [`LatchStatus`].
    pub fn status(&self) -> ValueWatch<LatchStatus> {
        ValueWatch::new(self.handle.public.clone())
    }

    /// The leadership changes from now on, as a stream of [`LeadershipEvent`]s.
    ///
    /// ```no_run
    /// # async fn f(latch: zk_recipes::LeaderLatch) {
    /// use zk_recipes::LeadershipEvent;
    /// let mut changes = latch.changes();
    /// while let Some(change) = changes.next().await {
    ///     match change {
    ///         LeadershipEvent::IsLeader => println!("now leading"),
    ///         LeadershipEvent::NotLeader => println!("no longer leading"),
    ///         _ => {} // events added later
    ///     }
    /// }
    /// # }
    /// ```
    pub fn changes(&self) -> LeadershipChanges {
        LeadershipChanges {
            rx: self.handle.events.subscribe(),
            status: self.handle.status.clone(),
        }
    }

    /// All participants, in line order (the leader first), by id.
    ///
    /// See the example on [`Participant`].
    pub async fn participants(&self) -> Result<Vec<Participant>> {
        list_participants(&self.client, &self.path).await
    }

    /// The current leader, if any participant is in line.
    ///
    /// See the example on [`LeaderLatch`].
    pub async fn leader(&self) -> Result<Option<Participant>> {
        Ok(self.participants().await?.into_iter().next())
    }

    /// Leaves the election: drops leadership first, silently (Curator's default close),
    /// then deletes the node. Returns once the node is gone or the session is (`Ok`), or
    /// with the server's refusal of the deletion; while the client is disconnected that
    /// means waiting for the connection (dropping this future leaves the deletion to go on
    /// in the background). [`close_with`](Self::close_with) chooses whether the change
    /// stream hears of it.
    ///
    /// See the example on [`LeaderLatch`].
    pub async fn close(self) -> Result<()> {
        self.close_with(CloseMode::default()).await
    }

    /// [`close`](Self::close), telling the change stream that leadership ended only with
    /// [`CloseMode::NotifyLeader`].
    ///
    /// ```no_run
    /// # async fn example(latch: zk_recipes::LeaderLatch) {
    /// use std::time::Duration;
    /// use zk_recipes::CloseMode;
    ///
    /// // Step down and leave, waiting at most 5 s for a connection to delete our node
    /// // (after that the deletion goes on in the background).
    /// let closing = latch.close_with(CloseMode::NotifyLeader);
    /// let _ = tokio::time::timeout(Duration::from_secs(5), closing).await;
    /// # }
    /// ```
    pub async fn close_with(self, mode: CloseMode) -> Result<()> {
        self.handle.close(mode == CloseMode::NotifyLeader).await
    }
}

/// A stream of leadership changes of one latch; see [`LeaderLatch::changes`].
///
/// ```no_run
/// # async fn f(latch: zk_recipes::LeaderLatch) {
/// let mut changes = latch.changes();
/// while let Some(change) = changes.next().await {
///     println!("{change:?}");
/// }
/// println!("the latch has ended");
/// # }
/// ```
#[derive(Debug)]
pub struct LeadershipChanges {
    rx: broadcast::Receiver<LeadershipEvent>,
    status: watch::Receiver<Status>,
}

impl LeadershipChanges {
    /// The next change; `None` once the latch has ended and every change was read. A reader
    /// more than 64 changes behind skips the oldest.
    ///
    /// See the example on [`LeadershipChanges`].
    pub async fn next(&mut self) -> Option<LeadershipEvent> {
        loop {
            match self.rx.try_recv() {
                Ok(ev) => return Some(ev),
                Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                Err(broadcast::error::TryRecvError::Closed) => return None,
                Err(broadcast::error::TryRecvError::Empty) => {}
            }
            // The engine sends its last change before it publishes its end.
            if self.status.borrow_and_update().ended.is_some() {
                return None;
            }
            tokio::select! {
                r = self.rx.recv() => match r {
                    Ok(ev) => return Some(ev),
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                r = self.status.changed() => if r.is_err() { return None },
            }
        }
    }
}
