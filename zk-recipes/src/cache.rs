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
//! Dropping the [`Cache`] removes its watch and ends its streams.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use zk_recipes::cache::{Cache, CacheEvent, CacheMode};
//! use zk_session::Client;
//!
//! let client = Client::builder("127.0.0.1:2181").connect().await?;
//! let mut builder = Cache::builder(client, "/services").mode(CacheMode::Tree).max_depth(2);
//! let mut events = builder.subscribe(); // from the very first event of the load
//! let cache = builder.start().await?;
//! cache.initialized().await?;
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

use crate::{RecipeError, Result};
use loader::{Loader, Phase, Shared};
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

/// Configures and starts a [`Cache`]. See the example in the [module docs](self).
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

    /// Adds the watch on the root and starts loading; returns once the watch is in place
    /// (wait for [`Cache::initialized`] for the load). The root need not exist: the view is
    /// empty until it does.
    ///
    /// Fails with the session's error if the watch cannot be added (an invalid path, a
    /// client that has ended...). Cancellation-safe: a dropped `start` leaves no watch.
    pub async fn start(self) -> Result<Cache> {
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
        let task = tokio::spawn(loader.run(watch, session));
        Ok(Cache {
            root: self.root,
            capacity: self.capacity,
            shared: self.shared,
            task,
        })
    }
}

/// A live view of a znode, its children or its subtree. See the [module docs](self).
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
    pub fn builder(client: Client, root: &str) -> CacheBuilder {
        let shared = Arc::new(Shared::new(Tree::new(root, 0, true)));
        CacheBuilder {
            client,
            root: root.to_owned(),
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

    /// True once the initial load is complete.
    pub fn is_initialized(&self) -> bool {
        *self.shared.phase.borrow() == Phase::Initialized
    }

    /// Waits until the initial load is complete. Fails with [`RecipeError::Closed`] if the
    /// cache stopped first (its client ended). Cancellation-safe.
    pub async fn initialized(&self) -> Result<()> {
        let mut rx = self.shared.phase.subscribe();
        let phase = *rx
            .wait_for(|p| *p != Phase::Loading)
            .await
            .map_err(|_| RecipeError::Closed)?;
        match phase {
            Phase::Initialized => Ok(()),
            _ => Err(RecipeError::Closed),
        }
    }

    /// True once the cache has stopped: its client ended. The view stays readable as it was.
    pub fn is_stopped(&self) -> bool {
        *self.shared.phase.borrow() == Phase::Stopped
    }
}

impl Drop for Cache {
    /// Stops the task: its watch is removed and the event streams end.
    fn drop(&mut self) {
        self.task.abort();
    }
}
