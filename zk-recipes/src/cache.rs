//! A cache of a znode, its children or a whole subtree, kept up to date by one persistent
//! (recursive) watch, in the spirit of Curator's `CuratorCache` and sharing nothing on the
//! server with it but the data it reads.
//!
//! The cache adds the watch on its root, loads what lies below it, then re-reads each znode
//! the watch reports. Its view can be read at any time ([`Cache::get`],
//! [`Cache::children`]); each subscriber gets its own bounded stream of [`CacheEvent`]s.
//!
//! Beyond CuratorCache:
//! - a change is a newer mzxid, and a znode deleted and created again (new czxid) while the
//!   cache could not see it is reported as deleted and created, even at the same version;
//! - after every reconnect and every new session the whole view is read again (a persistent
//!   watch does not replay what it missed) and [`CacheEvent::Resynced`] says it is complete;
//! - a slow subscriber holds up nobody and is told how many events it missed
//!   ([`CacheEvent::Lagged`]);
//! - no limit on the number of children (Curator 5.4 stops at 65,535 and says initialized);
//! - one read per znode: a leaf's Stat says it has no children, so it is never listed; reads
//!   go in multiRead batches, several in flight;
//! - no one-shot watch at all, so none can replace the persistent watch on a 3.8.0 server
//!   (ZOOKEEPER-4466); the session layer keeps the watch when the application sets one;
//! - event paths outside the root are ignored (ClickHouse Keeper reports the watch's own path).
//!
//! Closing or dropping the [`Cache`] removes its watch and ends its streams.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use zk_recipes::{Cache, CacheEvent, CacheMode};
//! use zk_session::Client;
//!
//! let client = Client::builder("127.0.0.1:2181").connect().await?;
//! let mut builder = Cache::builder(client, "/services").mode(CacheMode::Tree).max_depth(2);
//! let mut events = builder.subscribe(); // from the very first event of the load
//! let cache = builder.start().await?; // returns once the view is complete
//! println!("instances: {:?}", cache.children("/services/api"));
//! while let Some(event) = events.next().await {
//!     match event {
//!         CacheEvent::Created { path, .. } => println!("+ {path}"),
//!         CacheEvent::Changed { path, new, .. } => println!("~ {path} v{}", new.stat().version),
//!         CacheEvent::Deleted { path, .. } => println!("- {path}"),
//!         CacheEvent::Lagged { missed } => println!("missed {missed}: the view is still whole"),
//!         other => println!("{other:?}"),
//!     }
//! }
//! # Ok(()) }
//! ```

mod connection;
mod event;
mod fan_out;
mod in_order;
mod loader;
mod name_index;
mod store;
mod tree;

use std::sync::Arc;

use tokio::task::JoinHandle;
use zk_session::{AddWatchMode, Client};

pub use event::{CacheEvent, CachedNode, ResyncReason};
pub use fan_out::CacheEvents;

use crate::{plumbing::runtime, LostReason, RecipeError, Result, ValueWatch};
use loader::{Loader, Shared};
use tree::Tree;

/// What part of the tree under the root a cache holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum CacheMode {
    /// The root znode alone (Curator's NodeCache; a plain persistent watch).
    Node,
    /// The root and its children (Curator's PathChildrenCache).
    Children,
    /// The whole subtree, down to [`CacheBuilder::max_depth`] (Curator's CuratorCache).
    #[default]
    Tree,
}

/// Whether a cache keeps the znodes' data or only their Stat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum CacheData {
    /// Data and Stat.
    #[default]
    Keep,
    /// The Stat alone: less memory when only presence and versions matter.
    StatOnly,
}

/// Events a subscriber may hold unread before it misses some, by default.
const DEFAULT_CAPACITY: usize = 10_000;

/// Configures and starts a [`Cache`].
#[derive(Debug)]
pub struct CacheBuilder {
    client: Client,
    root: String,
    mode: CacheMode,
    data: CacheData,
    max_depth: Option<usize>,
    capacity: usize,
    shared: Arc<Shared>,
}

impl CacheBuilder {
    /// Which part of the tree to cache (the whole subtree by default).
    pub fn mode(mut self, mode: CacheMode) -> Self {
        self.mode = mode;
        self
    }

    /// Data and Stat (the default), or the Stat alone.
    pub fn data(mut self, data: CacheData) -> Self {
        self.data = data;
        self
    }

    /// Levels below the root to cache, at most (0: the root alone). No limit by default.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = Some(depth);
        self
    }

    /// Unread events each subscriber may hold before it misses some (10,000 by default).
    /// Applies to the subscribers taken after this call.
    pub fn subscriber_capacity(mut self, events: usize) -> Self {
        self.capacity = events;
        self
    }

    /// A subscriber that gets every event from the start of the initial load.
    pub fn subscribe(&mut self) -> CacheEvents {
        self.shared.lock().fan_out.subscribe(self.capacity)
    }

    fn depth(&self) -> usize {
        let limit = self.max_depth.unwrap_or(usize::MAX);
        match self.mode {
            CacheMode::Node => 0,
            CacheMode::Children => limit.min(1),
            CacheMode::Tree => limit,
        }
    }

    /// Adds the watch on the root, loads the view and returns once it is complete (the
    /// [`CacheEvent::Initialized`] of the subscribers taken before). The root need not
    /// exist: the view is empty until it does. While the client is disconnected the load
    /// waits for the connection; wrap the start in a timeout to bound that.
    ///
    /// Fails with the session's error if the watch cannot be added (an invalid path, a
    /// client that has ended...), with [`RecipeError::Lost`] if the client ends during the
    /// load, or with [`RecipeError::NoRuntime`] outside a tokio runtime. Cancel-safe: a
    /// dropped `start` leaves no watch.
    pub async fn start(self) -> Result<Cache> {
        let handle = runtime::current()?;
        let depth = self.depth();
        let keep = self.data == CacheData::Keep;
        self.shared.lock().tree = Tree::new(&self.root, depth, keep);
        let mode = if depth == 0 {
            AddWatchMode::Persistent
        } else {
            AddWatchMode::PersistentRecursive
        };
        // Subscribed before the watch exists: no reconnect between the two goes unseen.
        let session = self.client.session_events();
        let watch = self.client.add_watch(&self.root, mode).await?;
        let loader = Loader::new(self.client.clone(), self.shared.clone(), &self.root);
        let task = handle.spawn(loader.run(watch, session));
        // Made before the wait: dropping the start drops it, and its watch.
        let cache = Cache {
            root: self.root,
            capacity: self.capacity,
            shared: self.shared,
            task,
        };
        let loaded = cache
            .status()
            .wait_for(|s| *s != CacheStatus::Loading)
            .await?;
        match loaded {
            CacheStatus::Ended(why) => Err(RecipeError::Lost(why)),
            _ => Ok(cache),
        }
    }
}

/// Where a [`Cache`] stands: the recipe's [`status`](Cache::status).
///
/// ```no_run
/// # async fn f(cache: zk_recipes::Cache) -> zk_recipes::Result<()> {
/// let mut status = cache.status();
/// let end = status.wait_for(|s| s.has_ended()).await?;
/// println!("the cache stopped: {end:?}");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheStatus {
    /// The initial load is under way (only seen before [`CacheBuilder::start`] returns).
    Loading,
    /// The view is complete and followed (after a reconnect it is read again in full; the
    /// subscribers hear [`CacheEvent::Resynced`]).
    Initialized,
    /// The cache was closed (or dropped): the last state.
    Closed,
    /// The client ended for good, and the cache with it: the last state. The view stays
    /// readable as it was.
    Ended(LostReason),
}

impl CacheStatus {
    /// Whether this is a last state ([`Closed`](Self::Closed) or [`Ended`](Self::Ended)).
    pub fn has_ended(&self) -> bool {
        matches!(self, CacheStatus::Closed | CacheStatus::Ended(_))
    }
}

/// A live view of a znode, its children or its subtree.
///
/// Reads of the view ([`get`](Self::get), [`children`](Self::children)) are local and never
/// wait for the server. The view may already show a change a subscriber has not read yet.
#[derive(Debug)]
pub struct Cache {
    root: String,
    capacity: usize,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Cache {
    /// A builder for a cache of `root` on `client`'s session.
    pub fn builder(client: Client, root: impl Into<String>) -> CacheBuilder {
        let root = root.into();
        let shared = Arc::new(Shared::new(Tree::new(&root, 0, true)));
        CacheBuilder {
            client,
            root,
            mode: CacheMode::default(),
            data: CacheData::default(),
            max_depth: None,
            capacity: DEFAULT_CAPACITY,
            shared,
        }
    }

    /// The root's path.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The cached znode at `path` (its data and Stat), if the view holds it.
    pub fn get(&self, path: &str) -> Option<CachedNode> {
        self.shared.lock().tree.get(path)
    }

    /// The names of the cached children of `path`, sorted; `None` if `path` is not cached.
    pub fn children(&self, path: &str) -> Option<Vec<String>> {
        self.shared.lock().tree.children(path)
    }

    /// How many znodes the view holds.
    pub fn len(&self) -> usize {
        self.shared.lock().tree.len()
    }

    /// True when the view holds nothing (the root does not exist, or is not loaded yet).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A subscriber that gets every event from now on.
    pub fn subscribe(&self) -> CacheEvents {
        self.shared.lock().fan_out.subscribe(self.capacity)
    }

    /// Where the cache stands, as it changes; its last state says why it ended.
    ///
    /// See the example on [`CacheStatus`].
    pub fn status(&self) -> ValueWatch<CacheStatus> {
        ValueWatch::new(self.shared.status.subscribe())
    }

    /// Stops the cache: its watch is removed (the session sends the removal) and the
    /// subscribers' streams end. Always `Ok`: the cache owns nothing else on the server.
    /// Cancel-safe.
    ///
    /// ```no_run
    /// # async fn f(cache: zk_recipes::Cache) -> zk_recipes::Result<()> {
    /// cache.close().await?;
    /// # Ok(()) }
    /// ```
    pub async fn close(mut self) -> Result<()> {
        self.stop();
        // The task drops the watch (and ends the streams) as it goes.
        let _ = (&mut self.task).await;
        Ok(())
    }

    fn stop(&self) {
        self.shared.status.send_if_modified(|s| {
            let open = !s.has_ended();
            if open {
                *s = CacheStatus::Closed;
            }
            open
        });
        self.task.abort();
    }
}

impl Drop for Cache {
    /// Stops the task: its watch is removed and the event streams end.
    fn drop(&mut self) {
        self.stop();
    }
}
