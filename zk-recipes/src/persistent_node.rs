//! [`PersistentNode`]: a node the recipe keeps present, as Curator's PersistentNode does.
//!
//! A background task creates the node (parents as containers); when it finds the node
//! already there it adopts it and writes our data onto it. It then keeps an exists watch on
//! it: a deletion makes it create the node again; a reconnect or a new session makes it
//! create again too (an ephemeral node goes with its session; NodeExists means it is still
//! there and is adopted, with our data re-applied). After the first create the path is
//! fixed: a sequential node comes back under the name it first got, created in the
//! non-sequential twin mode, and a protected node keeps its `_c_<uuid>-` prefix, as Curator
//! does since CURATOR-190 / CURATOR-483.
//!
//! [`PersistentNode::status`] says when the node is there and when it is lost (deleted, or
//! its session expired) and back; a loss can be over (the node created again) before a
//! receiver looks, so [`PersistentNode::times_lost`] counts every one.

use std::{
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex as StdMutex,
    },
    time::Duration,
};

use bytes::Bytes;
use tokio::{
    runtime::Handle,
    sync::{oneshot, watch},
    task::AbortHandle,
};
use zk_session::{Client, CreateMode, CreateOptions, Error, ErrorCode, EventType, Stat, Version};

use crate::{
    counter::parent_of,
    plumbing::cleanup::{spawn_removal, Target},
    plumbing::liveness::{client_ended, raw_session_id, why_ended, Turn},
    plumbing::pending::CLEANUP_GRACE,
    plumbing::protected::{create_parents, ProtectedCreate},
    plumbing::retry::{retrying, Pauses},
    plumbing::runtime,
    plumbing::watches::exists_watch,
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
/// PersistentNode: see the [module documentation](self). Dropping it deletes the node in
/// the background; [`close`](Self::close) does so and says whether it worked.
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

/// The background task.
struct Keeper {
    client: Client,
    base: String,
    options: CreateOptions,
    protected: bool,
    shared: Arc<Shared>,
    status: Arc<watch::Sender<NodeStatus>>,
}

/// Why the keeper stopped watching the node.
enum Gone {
    /// Deleted, or its session expired: lost.
    Lost,
    /// A reconnect or a watch failure: create again to find out.
    Check,
}

impl Keeper {
    /// Keeps the node present until the client ends; `first` hears how the first create
    /// went (the server's refusal ends the task: nothing to keep).
    async fn run(self, first: oneshot::Sender<Result<()>>) {
        let mut first = Some(first);
        let mut pauses = Pauses::default();
        // Whether the loss that the next creation repairs was already counted.
        let mut counted = false;
        while !client_ended(&self.client) {
            let had_node = self.shared.placed().is_some();
            match self.ensure().await {
                Ok((path, stat, created)) => {
                    pauses.reset();
                    // Created again without having seen it go (deleted, or its session
                    // expired, while we were disconnected): a loss all the same.
                    if had_node && created && !counted {
                        self.lost();
                    }
                    counted = false;
                    self.shared.place(&path, stat.ephemeral_owner);
                    // A node adopted back unchanged after a reconnect is no news.
                    let present = NodeStatus::Present(path.clone());
                    self.status.send_if_modified(|s| {
                        let changed = *s != present;
                        *s = present;
                        changed
                    });
                    if let Some(first) = first.take() {
                        let _ = first.send(Ok(()));
                    }
                    // Events from before this creation are stale (an expiry already
                    // repaired); the exists call in watch sees anything missed since.
                    let mut events = self.client.session_events();
                    let ephemeral = stat.ephemeral_owner != 0;
                    if let Gone::Lost = self.watch(&path, ephemeral, &mut events).await {
                        self.lost();
                        counted = true;
                    }
                }
                Err(RecipeError::Session(e))
                    if first.is_some()
                        && !(e.is_retryable() || e.code() == Some(ErrorCode::SessionExpired)) =>
                {
                    if let Some(first) = first.take() {
                        let _ = first.send(Err(e.into()));
                    }
                    return;
                }
                Err(_) => pauses.pause().await,
            }
        }
        let why = why_ended(&self.client);
        self.status.send_replace(NodeStatus::Ended(why));
    }

    /// Counted before it is told, so a receiver woken by it sees the count.
    fn lost(&self) {
        self.shared.losses.fetch_add(1, Ordering::AcqRel);
        self.status.send_replace(NodeStatus::Lost);
    }

    /// Creates the node (`true`), or adopts it and writes our data onto it (`false`).
    async fn ensure(&self) -> Result<(String, Stat, bool)> {
        let data = self.shared.data();
        let Some((path, _)) = self.shared.placed() else {
            let (path, stat) = self.first_create(&data).await?;
            return Ok((path, stat, true));
        };
        let options = twin(&self.options);
        loop {
            match self
                .client
                .create_with_stat(&path, &data, options.clone())
                .await
            {
                Ok((path, stat)) => return Ok((path, stat, true)),
                // Ours already (a reconnect within the session): written again only when its
                // data differs, so that watchers see no change that is not one.
                Err(Error::Code(ErrorCode::NodeExists)) => {
                    match self.client.get_data(&path).await {
                        Ok((current, stat)) if current[..] == data[..] => {
                            return Ok((path, stat, false))
                        }
                        Ok((_, stat)) => {
                            let version = Version::Exact(stat.version);
                            match self.client.set_data(&path, &data, version).await {
                                Ok(stat) => return Ok((path, stat, false)),
                                Err(Error::Code(ErrorCode::NoNode | ErrorCode::BadVersion)) => {
                                    continue
                                }
                                Err(e) => return Err(e.into()),
                            }
                        }
                        Err(Error::Code(ErrorCode::NoNode)) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(Error::Code(ErrorCode::NoNode)) => {
                    create_parents(&self.client, parent_of(&path)).await?
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    async fn first_create(&self, data: &[u8]) -> Result<(String, Stat)> {
        if self.protected {
            let (parent, name) = self.base.rsplit_once('/').unwrap_or(("", &self.base));
            let parent = if parent.is_empty() { "/" } else { parent };
            let node = ProtectedCreate::new(parent, name)
                .data(data)
                .options(self.options.clone())
                .create(&self.client)
                .await?;
            return Ok((node.path, node.stat));
        }
        loop {
            // A plain ephemeral node has a known path, so a dropped start can find it. (A
            // sequential one cannot be found: protected mode is for that.)
            if self.options.mode() == CreateMode::Ephemeral {
                let sent = (self.base.clone(), raw_session_id(&self.client));
                *self
                    .shared
                    .sending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = Some(sent);
            }
            match self
                .client
                .create_with_stat(&self.base, data, self.options.clone())
                .await
            {
                Err(Error::Code(ErrorCode::NodeExists)) if !self.options.mode().is_sequential() => {
                    let stat = self.client.set_data(&self.base, data, Version::Any).await?;
                    return Ok((self.base.clone(), stat));
                }
                Err(Error::Code(ErrorCode::NoNode)) => {
                    create_parents(&self.client, parent_of(&self.base)).await?
                }
                other => return Ok(other?),
            }
        }
    }

    /// Watches the node until it goes or the connection comes back after a break.
    async fn watch(
        &self,
        path: &str,
        ephemeral: bool,
        events: &mut zk_session::SessionEvents,
    ) -> Gone {
        loop {
            let w = match exists_watch(&self.client, path).await {
                Ok((Some(_), w)) => w,
                Ok((None, _)) => return Gone::Lost,
                Err(_) => return Gone::Check,
            };
            tokio::select! {
                ev = w => match ev {
                    Ok(ev) if ev.event_type() == EventType::NodeDeleted => return Gone::Lost,
                    Ok(_) => {}
                    Err(_) => return Gone::Check,
                },
                ev = events.next() => match ev.map(Turn::of) {
                    // A persistent or TTL node outlives the session.
                    Some(Some(Turn::Expired)) if ephemeral => return Gone::Lost,
                    Some(Some(Turn::Expired)) => return Gone::Check,
                    Some(Some(t)) if t.writable_again() => return Gone::Check,
                    Some(_) => {}
                    None => return Gone::Check,
                },
            }
        }
    }
}

/// Deletes `path` if it is an ephemeral node of session `owner` (0: none): what a create
/// dropped before its answer may have made. Retried across reconnects; a session that is
/// over took the node with it.
async fn remove_if_owned(client: Client, path: String, owner: i64) {
    if owner == 0 {
        return;
    }
    let _ = retrying(&client, || async {
        match client.exists(&path).await? {
            Some(stat) if stat.ephemeral_owner == owner => {
                match client.delete(&path, Version::Exact(stat.version)).await {
                    Ok(()) | Err(Error::Code(ErrorCode::NoNode | ErrorCode::BadVersion)) => Ok(()),
                    Err(e) => Err(e),
                }
            }
            _ => Ok(()),
        }
    })
    .await;
}

/// The mode a node is re-created in once its name is fixed: the non-sequential twin.
fn twin(options: &CreateOptions) -> CreateOptions {
    let acl = options.acl().to_vec();
    let twin = match options.mode() {
        CreateMode::EphemeralSequential => CreateOptions::ephemeral(),
        CreateMode::PersistentSequential => CreateOptions::persistent(),
        CreateMode::PersistentSequentialWithTtl => {
            CreateOptions::ttl(options.ttl_duration().unwrap_or(Duration::from_secs(60)))
        }
        _ => return options.clone(),
    };
    twin.with_acl(acl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_modes_come_back_as_their_twins() {
        assert_eq!(
            twin(&CreateOptions::ephemeral_sequential()).mode(),
            CreateMode::Ephemeral
        );
        assert_eq!(
            twin(&CreateOptions::persistent_sequential()).mode(),
            CreateMode::Persistent
        );
        let ttl = twin(&CreateOptions::ttl_sequential(Duration::from_secs(5)));
        assert_eq!(ttl.mode(), CreateMode::PersistentWithTtl);
        assert_eq!(ttl.ttl_duration(), Some(Duration::from_secs(5)));
        assert_eq!(
            twin(&CreateOptions::ephemeral()),
            CreateOptions::ephemeral()
        );
    }
}
