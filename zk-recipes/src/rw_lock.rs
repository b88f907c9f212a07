//! [`ReadWriteLock`]: two mutexes in one line (the documentation is on the type).

use tokio::time::Instant;
use zk_session::{Client, CreateOptions};

use crate::{
    contender::{format_sequence, ContenderKind, ContenderNames},
    mutex::LineRule,
    plumbing::protected::ProtectedCreate,
    InterProcessMutex, InterProcessMutexGuard, RecipeError, Result, SuspendPolicy,
};

/// Curator's node names for the two sides.
const READ_NAME: &str = "__READ__";
const WRITE_NAME: &str = "__WRIT__";

/// A distributed read/write lock on Curator's protocol (InterProcessReadWriteLock).
///
/// Both sides queue under one path: readers as `_c_<uuid>-__READ__<seq>`, writers as
/// `_c_<uuid>-__WRIT__<seq>`, ephemeral-sequential, ordered by sequence across both kinds.
/// A writer holds the lock when it is first in line and watches the one just ahead of it;
/// a reader holds it when no writer is ahead of it and watches the first writer, so readers
/// share and a writer excludes everyone. Each side is a [`InterProcessMutex`] with those rules, so it
/// has everything the mutex has: cancel-safe acquires, re-entrance through
/// [`InterProcessMutexGuard::reenter`], the lost-lock signal and fenced writes.
///
/// The holder of the write lock may also take the read lock
/// ([`ReadWriteLock::read_while_writing`]). Its read node is named after the write node's
/// sequence (a plain ephemeral `_c_<uuid>-__READ__<write seq>`), so it sorts where the write
/// node is and no waiting writer slips in when the write lock is released: the fix of
/// CURATOR-621 (Curator 5.5). Upgrading a read lock to the write lock is not possible, as in
/// Curator: the writer would wait behind its own read node.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::ReadWriteLock;
///
/// let lock = ReadWriteLock::new(client, "/locks/catalog");
/// let reading = lock.read_lock().acquire().await?; // shared with other readers
/// reading.release().await?;
///
/// let writing = lock.write_lock().acquire().await?; // alone
/// let also_reading = lock.read_while_writing(&writing).await?;
/// writing.release().await?; // readers may come in; writers still wait for us
/// also_reading.release().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ReadWriteLock {
    path: String,
    read: InterProcessMutex,
    write: InterProcessMutex,
}

/// Builds a [`ReadWriteLock`]; see [`ReadWriteLock::builder`].
///
/// ```no_run
/// # fn f(client: zk_session::Client) {
/// use zk_recipes::{ReadWriteLock, SuspendPolicy};
///
/// let lock = ReadWriteLock::builder(client, "/locks/catalog")
///     .suspend_policy(SuspendPolicy::WaitForLost)
///     .build();
/// # }
/// ```
#[derive(Debug)]
pub struct ReadWriteLockBuilder {
    client: Client,
    path: String,
    policy: SuspendPolicy,
}

impl ReadWriteLockBuilder {
    /// When a held read or write lock stops being trusted on a suspended connection (default
    /// [`SuspendPolicy::StepDown`], as the mutex's); an expiry or the deletion of the node
    /// always ends it.
    ///
    /// See the example on [`ReadWriteLockBuilder`].
    pub fn suspend_policy(mut self, policy: SuspendPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The lock.
    ///
    /// See the example on [`ReadWriteLockBuilder`].
    pub fn build(self) -> ReadWriteLock {
        let side = |name, rule| {
            InterProcessMutex::builder(self.client.clone(), self.path.clone())
                .line(name, rule)
                .suspend_policy(self.policy)
                .build()
        };
        ReadWriteLock {
            read: side(READ_NAME, LineRule::Shared),
            write: side(WRITE_NAME, LineRule::Write),
            path: self.path,
        }
    }
}

impl ReadWriteLock {
    /// A read/write lock at `path` (created as a container when missing).
    ///
    /// See the example on [`ReadWriteLock`].
    pub fn new(client: Client, path: impl Into<String>) -> ReadWriteLock {
        Self::builder(client, path).build()
    }

    /// A builder, for the [`SuspendPolicy`] of the held locks.
    ///
    /// See the example on [`ReadWriteLockBuilder`].
    pub fn builder(client: Client, path: impl Into<String>) -> ReadWriteLockBuilder {
        ReadWriteLockBuilder {
            client,
            path: path.into(),
            policy: SuspendPolicy::default(),
        }
    }

    /// The lock path.
    ///
    /// See the example on [`ReadWriteLock`].
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The read side: held by any number of readers while no writer is ahead of them.
    ///
    /// See the example on [`ReadWriteLock`].
    pub fn read_lock(&self) -> &InterProcessMutex {
        &self.read
    }

    /// The write side: held alone.
    ///
    /// See the example on [`ReadWriteLock`].
    pub fn write_lock(&self) -> &InterProcessMutex {
        &self.write
    }

    /// The read lock for the holder of the write lock, who proves it with its guard: held at
    /// once, and kept after the write lock is released (a downgrade). Fails with
    /// [`RecipeError::NotHeld`] when `write` is not a held guard of this lock's write side.
    /// Cancel-safe: a dropped call leaves no node behind.
    ///
    /// See the example on [`ReadWriteLock`].
    pub async fn read_while_writing(
        &self,
        write: &InterProcessMutexGuard,
    ) -> Result<InterProcessMutexGuard> {
        let name = write.path().rsplit('/').next().unwrap_or_default();
        let sequence = ContenderNames::new()
            .parse(name)
            .filter(|c| c.kind() == ContenderKind::CuratorWrite)
            .map(|c| c.sequence());
        let (Some(sequence), true) = (sequence, write.is_held() && self.owns(write)) else {
            return Err(RecipeError::NotHeld);
        };
        let create = ProtectedCreate::new(
            self.path.clone(),
            format!("{READ_NAME}{}", format_sequence(sequence)),
        )
        .options(CreateOptions::ephemeral());
        self.read.acquire_granted(&create, None::<Instant>).await
    }

    /// Whether `guard` is a hold of this lock's write side.
    fn owns(&self, guard: &InterProcessMutexGuard) -> bool {
        self.write.is_held()
            && guard
                .path()
                .strip_prefix(self.path.as_str())
                .is_some_and(|rest| rest.starts_with('/') && !rest[1..].contains('/'))
    }
}
