//! [`PersistentNode`]: a node the recipe keeps present, as Curator's PersistentNode does (the
//! type's documentation says how).

mod keeper;

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc, Mutex as StdMutex,
};

use bytes::Bytes;
use tokio::{
    runtime::Handle,
    sync::{oneshot, watch},
    task::AbortHandle,
};
use zk_session::{Client, CreateOptions, Error, ErrorCode, Version};

use self::keeper::{remove_if_owned, Keeper};
use crate::{
    counter::parent_of,
    plumbing::cleanup::{spawn_removal, Target},
    plumbing::liveness::why_ended,
    plumbing::pending::CLEANUP_GRACE,
    plumbing::runtime,
    LostReason, RecipeError, Result, ValueWatch,
};

/// Where a [`PersistentNode`]'s node stands: the recipe's [`status`](PersistentNode::status).
/// A new value is published only when the node's state changes (a reconnect that lost
/// nothing is no change).
///
/// See the example on [`PersistentNode`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeStatus {
    /// Not created yet.
    Pending,
    /// The node is there, at this path.
    Present(String),
    /// The node was there and is gone (deleted, or its session expired); the recipe is
    /// creating it again.
    Lost,
    /// The recipe was closed (or dropped): the last state.
    Closed,
    /// The client ended for good, and the recipe with it: the last state.
    Ended(LostReason),
}

impl NodeStatus {
    /// Whether this is a last state ([`Closed`](Self::Closed) or [`Ended`](Self::Ended)).
    pub fn has_ended(&self) -> bool {
        matches!(self, NodeStatus::Closed | NodeStatus::Ended(_))
    }
}

/// Builds a [`PersistentNode`]; see [`PersistentNode::builder`].
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::PersistentNode;
/// use zk_session::CreateOptions;
///
/// let node = PersistentNode::builder(client, "/services/api/instance-")
///     .data(b"10.0.0.7:8080")
///     .options(CreateOptions::ephemeral_sequential())
///     .protected()
///     .start()
///     .await?;
/// println!("registered as {:?}", node.path());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct PersistentNodeBuilder {
    client: Client,
    path: String,
    data: Bytes,
    options: CreateOptions,
    protected: bool,
}

impl PersistentNodeBuilder {
    /// The node's data (default: none).
    ///
    /// See the example on [`PersistentNodeBuilder`].
    pub fn data(mut self, data: &[u8]) -> Self {
        self.data = Bytes::copy_from_slice(data);
        self
    }

    /// The create mode, ACL and TTL (default: ephemeral, open ACL). TTL modes need a server
    /// with `zookeeper.extendedTypesEnabled=true`.
    ///
    /// See the example on [`PersistentNodeBuilder`].
    pub fn options(mut self, options: CreateOptions) -> Self {
        self.options = options;
        self
    }

    /// Protected mode: the name gets Curator's `_c_<uuid>-` prefix, so a create whose reply
    /// is lost is recognised rather than made twice.
    ///
    /// See the example on [`PersistentNodeBuilder`].
    pub fn protected(mut self) -> Self {
        self.protected = true;
        self
    }

    /// Creates the node (or adopts the one there) and returns once it is present; from then
    /// on a background task keeps it present. While the client is disconnected this waits
    /// for the connection; wrap it in a timeout to bound that.
    ///
    /// Fails with the server's refusal of the first create (an invalid path, NoAuth...), or
    /// the client's end, or [`RecipeError::NoRuntime`] outside a tokio runtime. Cancel-safe:
    /// a dropped start deletes what it made, in the background.
    ///
    /// See the example on [`PersistentNodeBuilder`].
    pub async fn start(self) -> Result<PersistentNode> {
        let handle = runtime::current()?;
        let status = Arc::new(watch::channel(NodeStatus::Pending).0);
        let shared = Arc::new(Shared {
            data: StdMutex::new(self.data),
            placed: StdMutex::new(None),
            sending: StdMutex::new(None),
            losses: AtomicU64::new(0),
        });
        let (first_tx, first) = oneshot::channel();
        let keeper = Keeper {
            client: self.client.clone(),
            base: self.path,
            options: self.options,
            protected: self.protected,
            shared: shared.clone(),
            status: status.clone(),
        };
        let task = handle.spawn(keeper.run(first_tx));
        // Made before the wait: dropping the start drops it, and it cleans up.
        let node = PersistentNode {
            client: self.client,
            shared,
            status,
            task: task.abort_handle(),
            handle,
            closed: false,
        };
        match first.await {
            Ok(Ok(())) => Ok(node),
            Ok(Err(e)) => Err(e),
            // The keeper stopped before its first create: the client ended.
            Err(_) => Err(RecipeError::Lost(why_ended(&node.client))),
        }
    }
}

/// A node kept present across connection loss and session expiry, as Curator's
/// PersistentNode. Dropping it deletes the node in the background; [`close`](Self::close)
/// does so and says whether it worked.
///
/// A background task creates the node (parents as containers) and keeps an exists watch on
/// it: a deletion makes it create the node again; a reconnect or a new session makes it
/// create again too (an ephemeral node goes with its session). NodeExists means the node is
/// still there: it is adopted, and our data written only when it differs, so that watchers
/// see no change that is not one. After the first create the path is fixed: a sequential
/// node comes back under the name it first got, created in the non-sequential twin mode,
/// and a protected node keeps its `_c_<uuid>-` prefix, as Curator does since CURATOR-190 /
/// CURATOR-483.
///
/// [`status`](Self::status) says when the node is there and when it is lost (deleted, or
/// its session expired) and back; a loss can be over (the node created again) before a
/// receiver looks, so [`times_lost`](Self::times_lost) counts every one.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::{NodeStatus, PersistentNode};
///
/// let node = PersistentNode::builder(client, "/services/api/host-7")
///     .data(b"10.0.0.7:8080")
///     .start()
///     .await?;
/// let mut status = node.status();
/// let mut seen = node.times_lost();
/// while let Ok(now) = status.changed().await {
///     // A loss may be over before we look: the count says it happened.
///     let lost = node.times_lost();
///     match &now {
///         NodeStatus::Lost => eprintln!("the node is gone; re-creating"),
///         NodeStatus::Present(p) if lost > seen => eprintln!("{p} was lost and is back"),
///         other if other.has_ended() => break,
///         _ => {}
///     }
///     seen = lost;
/// }
/// node.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct PersistentNode {
    client: Client,
    shared: Arc<Shared>,
    status: Arc<watch::Sender<NodeStatus>>,
    task: AbortHandle,
    handle: Handle,
    closed: bool,
}

/// What the handle and the task share.
#[derive(Debug)]
struct Shared {
    data: StdMutex<Bytes>,
    /// The node's path and owning session (0 for a persistent node), once created.
    placed: StdMutex<Option<(String, i64)>>,
    /// The path and session of a first (plain ephemeral) create sent and not yet placed:
    /// what a start dropped before the answer may have made.
    sending: StdMutex<Option<(String, i64)>>,
    /// How many times the node was lost.
    losses: AtomicU64,
}

impl Shared {
    fn data(&self) -> Bytes {
        self.data.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn placed(&self) -> Option<(String, i64)> {
        self.placed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn sending(&self) -> Option<(String, i64)> {
        self.sending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn place(&self, path: &str, owner: i64) {
        *self.placed.lock().unwrap_or_else(|e| e.into_inner()) = Some((path.to_owned(), owner));
    }
}

impl PersistentNode {
    /// A builder for an ephemeral node at `path` (see [`PersistentNodeBuilder`] for the data,
    /// the mode and protection).
    ///
    /// See the example on [`PersistentNodeBuilder`].
    pub fn builder(client: Client, path: impl Into<String>) -> PersistentNodeBuilder {
        PersistentNodeBuilder {
            client,
            path: path.into(),
            data: Bytes::new(),
            options: CreateOptions::ephemeral(),
            protected: false,
        }
    }

    /// The node's path (a sequential or protected node's name is the one it first got).
    ///
    /// See the example on [`PersistentNodeBuilder`].
    pub fn path(&self) -> Option<String> {
        self.shared.placed().map(|(p, _)| p)
    }

    /// Where the node stands, as it changes; its last state says why the recipe ended.
    ///
    /// See the example on [`PersistentNode`].
    pub fn status(&self) -> ValueWatch<NodeStatus> {
        ValueWatch::new(self.status.subscribe())
    }

    /// How many times the node was lost (deleted, or its session expired) since the recipe
    /// started. [`status`](Self::status) holds only the latest state, and the node is often
    /// back before a receiver looks; this count misses no loss.
    ///
    /// See the example on [`PersistentNode`].
    pub fn times_lost(&self) -> u64 {
        self.shared.losses.load(Ordering::Acquire)
    }

    /// Replaces the node's data: written now when the node is there, and on every
    /// re-creation.
    ///
    /// ```no_run
    /// # async fn f(node: zk_recipes::PersistentNode) -> zk_recipes::Result<()> {
    /// node.set_data(b"10.0.0.7:9090").await?;
    /// # Ok(()) }
    /// ```
    pub async fn set_data(&self, data: &[u8]) -> Result<()> {
        *self.shared.data.lock().unwrap_or_else(|e| e.into_inner()) = Bytes::copy_from_slice(data);
        let present = matches!(*self.status.borrow(), NodeStatus::Present(_));
        match self.shared.placed() {
            Some((path, _)) if present => {
                match self.client.set_data(&path, data, Version::Any).await {
                    // Gone: the task re-creates it with the new data.
                    Ok(_) | Err(Error::Code(ErrorCode::NoNode)) => Ok(()),
                    Err(e) => Err(e.into()),
                }
            }
            _ => Ok(()),
        }
    }

    /// Stops keeping the node and deletes it: `Ok` once it is gone (or its session is), the
    /// server's refusal otherwise. Waits a little for the deletion, which goes on in the
    /// background until the node or its session is gone. Cancel-safe.
    ///
    /// See the example on [`PersistentNode`].
    pub async fn close(mut self) -> Result<()> {
        let removal = self.stop();
        removal
            .wait(CLEANUP_GRACE.max(self.client.negotiated_timeout()))
            .await?;
        Ok(())
    }

    fn stop(&mut self) -> crate::plumbing::cleanup::Removal {
        self.closed = true;
        self.task.abort();
        self.status.send_if_modified(|s| {
            let open = !s.has_ended();
            if open {
                *s = NodeStatus::Closed;
            }
            open
        });
        let target = match self.shared.placed() {
            Some((path, owner)) => Target {
                id: None,
                path: Some(path),
                session: (owner != 0).then_some(owner),
            },
            None => {
                if let Some((path, owner)) = self.shared.sending() {
                    let client = self.client.clone();
                    self.handle.spawn(remove_if_owned(client, path, owner));
                }
                Target::default()
            }
        };
        let parent = target
            .path
            .as_deref()
            .map(parent_of)
            .unwrap_or("/")
            .to_owned();
        spawn_removal(Some(&self.handle), self.client.clone(), parent, target)
    }
}

impl Drop for PersistentNode {
    fn drop(&mut self) {
        if !self.closed {
            let _ = self.stop();
        }
    }
}
