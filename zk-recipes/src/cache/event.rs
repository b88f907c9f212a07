//! What a cache tells its subscribers, and the node snapshots it hands out.

use bytes::Bytes;
use zk_session::Stat;

/// A cached znode: its Stat and, unless the cache keeps stats only, its data.
///
/// Cheap to clone: the data is shared, never copied.
///
/// ```
/// use zk_recipes::CachedNode;
/// use zk_session::Stat;
///
/// let node = CachedNode::new(Stat::default(), Some(b"v1".as_slice().into()));
/// assert_eq!(node.data(), Some(&b"v1"[..]));
/// assert_eq!(node.stat().version, 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedNode {
    stat: Stat,
    data: Option<Bytes>,
}

impl CachedNode {
    /// A node snapshot (for tests and adapters; the cache builds its own).
    pub fn new(stat: Stat, data: Option<Bytes>) -> Self {
        CachedNode { stat, data }
    }

    /// The Stat read with the data.
    pub fn stat(&self) -> &Stat {
        &self.stat
    }

    /// The data, or `None` when the cache keeps stats only ([`CacheData::StatOnly`]).
    ///
    /// [`CacheData::StatOnly`]: super::CacheData::StatOnly
    pub fn data(&self) -> Option<&[u8]> {
        self.data.as_deref()
    }

    /// The data as shared bytes (no copy), or `None` for a stats-only cache.
    pub fn data_bytes(&self) -> Option<&Bytes> {
        self.data.as_ref()
    }
}

/// Why the cache re-read its whole tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResyncReason {
    /// The connection came back with the same session. A persistent watch does not replay
    /// what changed while the client was away, so the cache read everything again.
    Reconnected,
    /// The session expired and the client went on with a new one: the cache was rebuilt on
    /// the new session.
    NewSession,
    /// The watch's event buffer overflowed: some changes were only known by re-reading.
    WatchLagged,
}

/// One change seen by a [`Cache`](super::Cache), or a milestone of its view.
///
/// Paths are full paths (relative to the client's chroot), the root's included.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheEvent {
    /// A znode entered the view (created, or seen for the first time by the initial load).
    Created {
        /// Its path.
        path: String,
        /// Its data and Stat.
        node: CachedNode,
    },
    /// A znode's data changed (its mzxid moved on).
    Changed {
        /// Its path.
        path: String,
        /// What the view held before.
        old: CachedNode,
        /// What it holds now.
        new: CachedNode,
    },
    /// A znode left the view. A znode deleted and created again while the cache could not
    /// see it (its czxid differs) is reported as `Deleted`, then `Created`.
    Deleted {
        /// Its path.
        path: String,
        /// What the view held last.
        old: CachedNode,
    },
    /// The initial load is complete: the view holds the whole tree as it was. Sent once.
    Initialized,
    /// The view was read again in full after a reconnect, a new session or an overflow, and
    /// is complete again; the changes found were sent before this.
    Resynced(ResyncReason),
    /// This subscriber fell behind its buffer and missed `missed` events right here. The
    /// view ([`Cache::get`](super::Cache::get)) is still complete: read it to catch up.
    Lagged {
        /// How many events were dropped.
        missed: u64,
    },
}
