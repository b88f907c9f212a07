//! [`SetPartitioner`]: kazoo's `SetPartitioner` (see its documentation for the layout,
//! the states and where it differs from kazoo).

mod decision;
mod engine;

use std::{sync::Arc, time::Duration};

use tokio::sync::{oneshot, watch};
use zk_session::Client;

use crate::{participant::default_id, plumbing::runtime, RecipeError, Result, ValueWatch};

/// Where a [`SetPartitioner`] stands (kazoo's `PartitionState`); a new value is published
/// only when it changes.
///
/// ```no_run
/// # async fn f(p: zk_recipes::SetPartitioner) -> zk_recipes::Result<()> {
/// use zk_recipes::PartitionStatus;
/// match p.status().wait_for(|s| s.is_acquired() || s.has_ended()).await? {
///     PartitionStatus::Acquired(items) => println!("working on {items:?}"),
///     other => println!("{other:?}"),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum PartitionStatus {
    /// Waiting for the party to settle, then for the locks of this member's slice.
    Allocating,
    /// This member owns these items (sorted), until the status changes.
    Acquired(Vec<String>),
    /// The party or the connection changed: stop using the items, then call
    /// [`SetPartitioner::release_set`] (unless [`ReleaseMode::Immediately`]).
    Release,
    /// Closed (or dropped): the last state.
    Closed,
    /// Failed for good (the client ended: [`RecipeError::Lost`]; the server refused a
    /// node): the last state.
    Failed(RecipeError),
}

impl PartitionStatus {
    /// Whether this member owns its items now.
    pub fn is_acquired(&self) -> bool {
        matches!(self, PartitionStatus::Acquired(_))
    }

    /// The items owned now: empty unless [`Acquired`](Self::Acquired).
    pub fn items(&self) -> &[String] {
        match self {
            PartitionStatus::Acquired(items) => items,
            _ => &[],
        }
    }

    /// Whether this is a last state ([`Closed`](Self::Closed) or [`Failed`](Self::Failed)).
    pub fn has_ended(&self) -> bool {
        matches!(self, PartitionStatus::Closed | PartitionStatus::Failed(_))
    }

    /// The same state (errors compared by their text).
    fn same_as(&self, other: &PartitionStatus) -> bool {
        use PartitionStatus as S;
        match (self, other) {
            (S::Acquired(a), S::Acquired(b)) => a == b,
            (S::Failed(a), S::Failed(b)) => a.to_string() == b.to_string(),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

/// When a member in [`PartitionStatus::Release`] lets go of its items.
///
/// ```
/// assert_eq!(zk_recipes::ReleaseMode::default(), zk_recipes::ReleaseMode::WhenAsked);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReleaseMode {
    /// When [`SetPartitioner::release_set`] is called (kazoo's way): the user first stops
    /// working on the items.
    #[default]
    WhenAsked,
    /// At once: for items whose work stops as soon as the status says
    /// [`Release`](PartitionStatus::Release).
    Immediately,
}

/// Configures and starts a [`SetPartitioner`]; see [`SetPartitioner::builder`].
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use std::time::Duration;
/// use zk_recipes::{ReleaseMode, SetPartitioner};
///
/// let p = SetPartitioner::builder(client, "/work_queues")
///     .items(["queue-1", "queue-2", "queue-3"])
///     .identifier("worker-7")
///     .time_boundary(Duration::from_secs(5))
///     .release_mode(ReleaseMode::WhenAsked)
///     .start()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SetPartitionerBuilder {
    client: Client,
    path: String,
    items: Vec<String>,
    identifier: Option<String>,
    time_boundary: Duration,
    release: ReleaseMode,
}

impl SetPartitionerBuilder {
    /// The set to divide (the same on every member; duplicates count once). Each item is a
    /// znode name under `<path>/locks`.
    ///
    /// See the example on [`SetPartitionerBuilder`].
    pub fn items<I: IntoIterator<Item = S>, S: Into<String>>(mut self, items: I) -> Self {
        self.items = items.into_iter().map(Into::into).collect();
        self
    }

    /// This member's identifier, unique in the party (default `host:pid:n`).
    ///
    /// See the example on [`SetPartitionerBuilder`].
    pub fn identifier(mut self, identifier: impl Into<String>) -> Self {
        self.identifier = Some(identifier.into());
        self
    }

    /// How long the party must stay unchanged before the set is divided (kazoo's
    /// `time_boundary`; default 30 s, as kazoo's).
    ///
    /// See the example on [`SetPartitionerBuilder`].
    pub fn time_boundary(mut self, settle: Duration) -> Self {
        self.time_boundary = settle;
        self
    }

    /// When a member in [`PartitionStatus::Release`] lets go (default
    /// [`ReleaseMode::WhenAsked`]).
    ///
    /// See the example on [`SetPartitionerBuilder`].
    pub fn release_mode(mut self, mode: ReleaseMode) -> Self {
        self.release = mode;
        self
    }

    /// Joins the party and returns once this member's node exists; the division follows in
    /// the background (see [`SetPartitioner::status`]). While the client is disconnected
    /// this waits for the connection.
    ///
    /// Fails with [`RecipeError::InvalidArgument`] for an item or identifier that is not a
    /// znode name, [`RecipeError::NoRuntime`] outside a tokio runtime, the server's refusal
    /// of a node, or the client's end. Cancel-safe: a dropped start leaves the party and
    /// removes its nodes in the background.
    ///
    /// See the example on [`SetPartitionerBuilder`].
    pub async fn start(self) -> Result<SetPartitioner> {
        let rt = runtime::current()?;
        let identifier = self.identifier.unwrap_or_else(default_id);
        if !is_name(&identifier) {
            return Err(RecipeError::InvalidArgument(
                "identifier is not a znode name",
            ));
        }
        if !self.items.iter().all(|i| is_name(i)) {
            return Err(RecipeError::InvalidArgument("an item is not a znode name"));
        }
        let status = Arc::new(watch::channel(PartitionStatus::Allocating).0);
        let (release_tx, release) = watch::channel(0u64);
        let (stop_tx, stop) = oneshot::channel();
        let (joined_tx, joined) = oneshot::channel();
        let cfg = engine::Config {
            client: self.client,
            path: self.path,
            items: self.items,
            identifier: identifier.clone(),
            time_boundary: self.time_boundary,
            release: self.release,
        };
        let wires = engine::Wires {
            status: status.clone(),
            release,
            stop,
            joined: joined_tx,
        };
        rt.spawn(engine::run(cfg, wires));
        let partitioner = SetPartitioner {
            identifier,
            status,
            release: release_tx,
            stop: Some(stop_tx),
        };
        joined.await.unwrap_or(Err(RecipeError::Closed))?;
        Ok(partitioner)
    }
}

/// A member of a party dividing a set, as kazoo's `SetPartitioner`: a set of items (shards, queues...) is
/// divided among the live members of a party, each item owned by one member at a time, and
/// divided again when members join or leave.
///
/// The layout is kazoo's, so kazoo processes can take part on the same path:
/// - each member is an ephemeral node `<path>/party/<uuid4hex>-<identifier>` holding its
///   identifier;
/// - once the party's children stayed unchanged for
///   [`time_boundary`](SetPartitionerBuilder::time_boundary), each member sorts the set and
///   the identifiers (code-point order, as Python does), takes `i`, its place among the
///   members, and keeps `set[i::members]`;
/// - each kept item is held by a kazoo `Lock` at `<path>/locks/<item>` (ephemeral-sequential
///   nodes `<uuid4hex>__lock__<seq10>`, the lowest sequence holding), so a member that has
///   not yet let go of an item keeps the next owner waiting.
///
/// The [`status`](SetPartitioner::status) goes through kazoo's states:
/// [`Allocating`](PartitionStatus::Allocating) → [`Acquired`](PartitionStatus::Acquired)
/// (the items are ours) → [`Release`](PartitionStatus::Release) when the party changes or the
/// connection is suspended (stop using the items, then call
/// [`release_set`](SetPartitioner::release_set)) → `Allocating` again; and
/// [`Failed`](PartitionStatus::Failed) or [`Closed`](PartitionStatus::Closed) at the end.
///
/// Where this differs from kazoo 2.11:
/// - kazoo's partitioner can stay in ALLOCATING for good when the connection wavers during
///   an allocation (kazoo #392). Here one task runs every round, and any interruption
///   (the party changing, a suspended connection, a lost reply) releases what the round
///   took and starts a new round.
/// - kazoo gives a member the first index of its identifier, so two members with one
///   identifier (two processes configured alike, or a stale node of a crashed one) take
///   the same slice and the next slice is owned by nobody. Here members sharing an
///   identifier are told apart by their node names and each takes its own slice; members
///   with unique identifiers compute exactly kazoo's slices.
/// - kazoo fails for good when its session is lost. Here, with a client that starts a new
///   session after an expiry (the default), the member goes to `Release`, then joins the
///   party again in the new session; it fails only when the client ends, or the server
///   refuses our nodes (no permission).
/// - kazoo waits for a lock in `max_reaction_time` slices, deleting and re-creating its node
///   each time; here the member keeps its place in line and waits on watches, leaving the
///   line at once when the party changes.
/// - lock nodes hold the member's identifier (kazoo's are empty), so an operator can see who
///   holds an item.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::{PartitionStatus, SetPartitioner};
///
/// let p = SetPartitioner::builder(client, "/work_queues")
///     .items(["queue-1", "queue-2", "queue-3"])
///     .start()
///     .await?;
/// let mut status = p.status();
/// loop {
///     match status.changed().await? {
///         PartitionStatus::Acquired(items) => println!("working on {items:?}"),
///         PartitionStatus::Release => {
///             // Stop working on the items first, then:
///             p.release_set().await?;
///         }
///         s if s.has_ended() => break,
///         _ => {}
///     }
/// }
/// p.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct SetPartitioner {
    identifier: String,
    status: Arc<watch::Sender<PartitionStatus>>,
    release: watch::Sender<u64>,
    stop: Option<oneshot::Sender<oneshot::Sender<Result<()>>>>,
}

impl SetPartitioner {
    /// A builder for a member of the party dividing a set at `path` (kazoo's `path`).
    ///
    /// See the example on [`SetPartitionerBuilder`].
    pub fn builder(client: Client, path: impl Into<String>) -> SetPartitionerBuilder {
        SetPartitionerBuilder {
            client,
            path: path.into(),
            items: Vec::new(),
            identifier: None,
            time_boundary: Duration::from_secs(30),
            release: ReleaseMode::default(),
        }
    }

    /// This member's identifier.
    ///
    /// See the example on [`SetPartitioner`].
    pub fn identifier(&self) -> &str {
        &self.identifier
    }

    /// The partitioner's state as it changes.
    ///
    /// See the example on [`SetPartitioner`].
    pub fn status(&self) -> ValueWatch<PartitionStatus> {
        ValueWatch::new(self.status.subscribe())
    }

    /// The items this member owns now (empty unless acquired).
    ///
    /// See the example on [`SetPartitioner`].
    pub fn items(&self) -> Vec<String> {
        self.status.borrow().items().to_vec()
    }

    /// In [`PartitionStatus::Release`]: lets go of the items (deletes their lock nodes) and
    /// returns once the member is allocating again (or has ended). Does nothing in another
    /// state. kazoo's `release_set`.
    ///
    /// See the example on [`SetPartitioner`].
    pub async fn release_set(&self) -> Result<()> {
        let mut status = self.status();
        if !matches!(status.get(), PartitionStatus::Release) {
            return Ok(());
        }
        self.release.send_modify(|n| *n += 1);
        status
            .wait_for(|s| !matches!(s, PartitionStatus::Release))
            .await?;
        Ok(())
    }

    /// Releases the items, leaves the party (deletes this member's nodes) and stops: `Ok`
    /// once the nodes are gone. kazoo's `finish`.
    ///
    /// See the example on [`SetPartitioner`].
    pub async fn close(mut self) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        if let Some(stop) = self.stop.take() {
            if stop.send(tx).is_err() {
                return Ok(()); // the engine ended already, cleaning up as it did
            }
        }
        rx.await.unwrap_or(Ok(()))
    }
}

/// Whether `s` can be one znode name.
fn is_name(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains('/') && !s.contains('\0')
}
