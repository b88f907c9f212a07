//! [`KazooLockingQueue`]: kazoo's `LockingQueue`, sharing its znodes with kazoo producers and
//! consumers, and the entry a consumer holds ([`KazooLockedEntry`]).

use std::{
    fmt,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Weak,
    },
    time::Duration,
};

use bytes::Bytes;
use tokio::sync::Mutex;
use zk_session::Client;

use super::{
    consumer::{Claim, Consumer, Source},
    distributed_queue::ensure_dir,
    handle::{Base, Handle},
    held_lock::{read_item, take_lock, HeldLock, LockGuard, Locking},
    kazoo_names::{consumer_id, entry_prefix, priority_of, DEFAULT_PRIORITY, ENTRY_PREFIX},
    lock_watch::LockWatch,
    order::QueueOrder,
    raw_item::{DirKind, RawDir},
    QueueStatus,
};
use crate::{
    plumbing::{protected::child_path, runtime},
    LostReason, RecipeError, Result, ValueWatch,
};

/// Builds a [`KazooLockingQueue`]; see [`KazooLockingQueue::builder`].
#[derive(Debug)]
pub struct KazooLockingQueueBuilder {
    client: Client,
    path: String,
}

impl KazooLockingQueueBuilder {
    /// Makes `path/taken` and `path/entries` when missing (PERSISTENT, empty, as kazoo's
    /// `ensure_path`; missing parents as containers) and starts the queue with a new
    /// consumer id. Fails with the server's refusal, the client's end, or
    /// [`RecipeError::NoRuntime`] outside a tokio runtime.
    pub async fn start(self) -> Result<KazooLockingQueue> {
        runtime::current()?;
        let (taken, entries) = (
            child_path(&self.path, "taken"),
            child_path(&self.path, "entries"),
        );
        ensure_dir(&self.client, &taken).await?;
        ensure_dir(&self.client, &entries).await?;
        let raw = RawDir {
            dir: entries.clone(),
            // kazoo lists only `entries` and `taken`: a marker beside them is never taken.
            markers: self.path,
            kind: DirKind::Persistent,
        };
        let inner = Inner {
            base: Base::new(self.client, entries),
            taken,
            id: consumer_id(),
            raw,
        };
        let consumer = Consumer::new(QueueOrder::Priority, ENTRY_PREFIX, 16);
        Ok(KazooLockingQueue {
            core: Handle::start(inner, consumer)?,
            held: Mutex::new(Weak::new()),
        })
    }
}

/// A work queue shared with kazoo's `LockingQueue` (kazoo 2.11): entries are
/// PERSISTENT_SEQUENTIAL `path/entries/entry-<PPP>-<seq>` znodes of raw bytes, taken lowest
/// priority first, then oldest; a consumer locks the entry it takes with an EPHEMERAL
/// `path/taken/<entry>` holding its id (32 hex digits), and the entry stays until it is
/// consumed. A consumer that dies mid-entry leaves it to the next one (at least once).
///
/// As in kazoo, a consumer holds one entry at a time: a [`get`](Self::get) while an entry is
/// held returns that entry again, until it is [consumed](KazooLockedEntry::consume),
/// [released](KazooLockedEntry::release), lost, or dropped.
///
/// kazoo's `LockingQueue` and this one share znodes, either side producing or consuming.
/// They share nothing with kazoo's `Queue` (entries one level down) nor with Curator's
/// queues (see [`KazooQueue`](crate::KazooQueue)).
///
/// Where we differ from kazoo: a held entry says when its lock goes
/// ([`lost`](KazooLockedEntry::lost), [`is_held`](KazooLockedEntry::is_held)), where kazoo
/// must be asked (`holds_lock`). A waiting get keeps one children watch per change, not
/// a new pair of watches per event that fires after a get has ended (kazoo #175). A get
/// dropped between the lock's create and its reply, or an entry dropped unconsumed, removes
/// the lock in the background, so no orphan `taken` znode outlives the get (kazoo #366);
/// and a get tries every entry in order, not only the first free one. A put whose reply is
/// lost is neither doubled nor lost (an EPHEMERAL marker `path/_m_<uuid>` in the same
/// transaction, beside `entries` and `taken`, which kazoo never lists).
///
/// ```no_run
/// # async fn work(_: &[u8]) {}
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::KazooLockingQueue;
///
/// let queue = KazooLockingQueue::builder(client, "/jobs").start().await?;
/// queue.put_all([&b"a"[..], b"b"], 50).await?; // both or neither
/// let entry = queue.get().await?;
/// tokio::select! {
///     _ = work(entry.data()) => entry.consume().await?, // only now is it gone
///     why = entry.lost() => eprintln!("lock {why}: another consumer gets it"),
/// }
/// queue.close().await?;
/// # Ok(()) }
/// ```
///
/// Dropping the queue without [`close`](Self::close) stops it the same way.
#[derive(Debug)]
pub struct KazooLockingQueue {
    core: Handle<Inner>,
    /// The entry held, for a repeated get; one get at a time.
    held: Mutex<Weak<Shared>>,
}

#[derive(Debug)]
struct Inner {
    base: Base,
    taken: String,
    id: Bytes,
    raw: RawDir,
}

impl KazooLockingQueue {
    /// A queue at `path` (its entries in `path/entries`, its locks in `path/taken`).
    pub fn builder(client: Client, path: impl Into<String>) -> KazooLockingQueueBuilder {
        KazooLockingQueueBuilder {
            client,
            path: path.into(),
        }
    }

    /// This consumer's id, written into the locks it takes (kazoo's `id`).
    pub fn id(&self) -> &str {
        std::str::from_utf8(&self.core.inner.id).unwrap_or_default()
    }

    /// Adds an entry of priority 100 (kazoo's default). A lost reply is resolved before this
    /// returns; cancel-safe in that a dropped put either happened once or not at all.
    pub async fn put(&self, item: &[u8]) -> Result<()> {
        self.put_all([item], DEFAULT_PRIORITY).await
    }

    /// Adds an entry taken before every entry of a higher `priority` (0 to 999; anything
    /// over 999 fails with [`RecipeError::InvalidArgument`]).
    pub async fn put_with_priority(&self, item: &[u8], priority: u16) -> Result<()> {
        self.put_all([item], priority).await
    }

    /// Adds several entries of one `priority` in one transaction (kazoo's `put_all`): all
    /// of them or none.
    pub async fn put_all<I, B>(&self, items: I, priority: u16) -> Result<()>
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        let prefix = entry_prefix(priority)?;
        self.core.serving()?;
        let items = items
            .into_iter()
            .map(|b| Bytes::copy_from_slice(b.as_ref()))
            .collect();
        let inner = &self.core.inner;
        inner.raw.put(&inner.base.client, &prefix, items).await
    }

    /// Waits for an entry and locks it (kazoo's `get()`), or returns the entry already held.
    /// Cancel-safe: a dropped get leaves no lock behind.
    pub async fn get(&self) -> Result<KazooLockedEntry> {
        self.get_as(Wait::Forever)
            .await?
            .ok_or(RecipeError::Timeout)
    }

    /// Waits at most `timeout` for an entry (kazoo's `get(timeout)`): `None` when none came.
    pub async fn get_timeout(&self, timeout: Duration) -> Result<Option<KazooLockedEntry>> {
        self.get_as(Wait::For(timeout)).await
    }

    /// Locks an entry if one is free now; `None` when none is.
    pub async fn try_get(&self) -> Result<Option<KazooLockedEntry>> {
        self.get_as(Wait::No).await
    }

    async fn get_as(&self, wait: Wait) -> Result<Option<KazooLockedEntry>> {
        let mut held = self.held.lock().await;
        if let Some(shared) = held.upgrade().filter(|s| s.is_held()) {
            return Ok(Some(KazooLockedEntry { shared }));
        }
        let taken = match wait {
            Wait::Forever => Some(self.core.take().await?),
            Wait::For(t) => self.core.take_timeout(t).await?,
            Wait::No => self.core.next(false).await?,
        };
        Ok(taken.map(|t| {
            let shared = Arc::new(t);
            *held = Arc::downgrade(&shared);
            KazooLockedEntry { shared }
        }))
    }

    /// The queue's state; its last state says why it ended.
    pub fn status(&self) -> ValueWatch<QueueStatus> {
        self.core.status()
    }

    /// Stops the queue: gets in progress end with [`RecipeError::Closed`]. The queue's
    /// znodes stay; an entry held and not consumed is unlocked when dropped.
    pub async fn close(self) -> Result<()> {
        self.core.close();
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
enum Wait {
    Forever,
    For(Duration),
    No,
}

impl Source for Inner {
    type Item = Shared;

    fn base(&self) -> &Base {
        &self.base
    }

    async fn claim(&self, name: &str) -> Result<Claim<Shared>> {
        let client = &self.base.client;
        let mut lock = LockGuard::new(client, child_path(&self.taken, name), self.id.clone());
        match take_lock(client, &mut lock).await? {
            Locking::Held => {}
            Locking::Locked(path) => return Ok(Claim::Locked(path)),
            Locking::Gone => return Ok(Claim::Gone),
        }
        let entry = child_path(&self.base.path, name);
        // Gone: consumed before we locked it; the guard unlocks (kazoo deletes its lock).
        let Some(data) = read_item(client, &entry).await? else {
            return Ok(Claim::Gone);
        };
        let held = HeldLock::new(lock, entry);
        Ok(Claim::Taken(Shared {
            name: name.to_owned(),
            data,
            watch: held.watch(),
            given_up: AtomicBool::new(false),
            held: Mutex::new(Some(held)),
        }))
    }

    async fn make_dir(&self) -> Result<()> {
        ensure_dir(&self.base.client, &self.taken).await?;
        self.raw.make(&self.base.client).await
    }
}

/// A held entry, shared by the handles a repeated get hands out.
#[derive(Debug)]
struct Shared {
    name: String,
    data: Bytes,
    watch: LockWatch,
    /// Consumed or released through one of the handles.
    given_up: AtomicBool,
    held: Mutex<Option<HeldLock>>,
}

impl Shared {
    fn is_held(&self) -> bool {
        !self.given_up.load(Ordering::Acquire) && self.watch.lost_reason().is_none()
    }

    /// The lock, for a consume or release; it is the caller's to give up from here.
    async fn give_up(&self) -> Result<HeldLock> {
        let held = self.held.lock().await.take();
        self.given_up.store(true, Ordering::Release);
        self.watch.mark_released();
        held.ok_or(RecipeError::NotHeld)
    }
}

/// An entry locked by a [`KazooLockingQueue`] consumer: in the queue still, until
/// [`consume`](Self::consume) removes it; [`release`](Self::release) (or dropping every
/// handle to it) unlocks it, in its place, for the next consumer.
///
/// Its lock goes with the consumer's session: [`is_held`](Self::is_held) and
/// [`lost`](Self::lost) say when (the session expired or presumed lost, the client ended,
/// the lock deleted), after which a consume removes nothing and fails with
/// [`RecipeError::Lost`].
///
/// ```no_run
/// # async fn f(queue: zk_recipes::KazooLockingQueue) -> zk_recipes::Result<()> {
/// let entry = queue.get().await?;
/// println!("{} (priority {})", entry.name(), entry.priority());
/// if entry.holds_lock().await? {
///     entry.consume().await?;
/// } else {
///     println!("lost: {:?}", entry.lost_reason()); // another consumer gets it
/// }
/// # Ok(()) }
/// ```
#[must_use = "dropping the entry unlocks it for the next consumer"]
pub struct KazooLockedEntry {
    shared: Arc<Shared>,
}

impl fmt::Debug for KazooLockedEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KazooLockedEntry")
            .field("name", &self.shared.name)
            .field("len", &self.shared.data.len())
            .field("held", &self.shared.is_held())
            .finish()
    }
}

impl KazooLockedEntry {
    /// The entry's znode name (`entry-100-0000000042`).
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// What the producer put.
    pub fn data(&self) -> &Bytes {
        &self.shared.data
    }

    /// The entry's priority, read from its name.
    pub fn priority(&self) -> u16 {
        priority_of(&self.shared.name).unwrap_or(DEFAULT_PRIORITY)
    }

    /// True while the entry's lock stands and it was neither consumed nor released.
    pub fn is_held(&self) -> bool {
        self.shared.is_held()
    }

    /// Why the entry is no longer held, if it is not.
    pub fn lost_reason(&self) -> Option<LostReason> {
        if self.shared.given_up.load(Ordering::Acquire) {
            return Some(LostReason::Released);
        }
        self.shared.watch.lost_reason()
    }

    /// Completes when the entry is no longer held (at once if it is not). Cancel-safe; may
    /// be awaited from several places.
    pub async fn lost(&self) -> LostReason {
        self.shared.watch.lost().await
    }

    /// Asks the server whether the lock is still ours (kazoo's `holds_lock`: a sync, then
    /// the lock's data compared with our id; here its owner too).
    pub async fn holds_lock(&self) -> Result<bool> {
        match &*self.shared.held.lock().await {
            Some(held) => held.holds_lock().await,
            None => Ok(false),
        }
    }

    /// Removes the entry and its lock in one transaction (kazoo's `consume`). Fails with
    /// [`RecipeError::Lost`] when the lock is no longer ours (nothing is removed), and with
    /// [`RecipeError::NotHeld`] when another handle consumed or released it.
    pub async fn consume(self) -> Result<()> {
        self.shared.give_up().await?.remove_item().await
    }

    /// Unlocks the entry, in its place, for the next consumer (kazoo's `release`).
    pub async fn release(self) -> Result<()> {
        self.shared.give_up().await?.unlock().await
    }
}
