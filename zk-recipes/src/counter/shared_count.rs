//! [`SharedCount`]: an `i32` in one znode that every process sees, as Curator's SharedCount
//! stores it (4 bytes, big-endian, two's complement).
//!
//! A background task keeps a data watch on the node and re-reads it after every event and
//! every reconnect or new session, so [`SharedCount::changes`] sees what Curator's listeners
//! see. Values are ordered by the znode's mzxid, not its version: the version is an `i32`
//! that wraps, the mzxid does not (CURATOR-688, fixed in Curator 5.7; Debian's 5.4 compares
//! versions).

use std::sync::Arc;

use tokio::{sync::watch, task::AbortHandle};
use zk_session::{Client, CreateOptions, Error, ErrorCode, Stat, Version};

use super::{be_bytes, parent_of};
use crate::{
    plumbing::liveness::{client_ended, why_ended, Turn},
    plumbing::protected::create_parents,
    plumbing::retry::{may_retry, retry_while, Pauses},
    plumbing::runtime,
    plumbing::watches::{data_watch, exists_watch},
    LostReason, RecipeError, Result, ValueWatch,
};

/// A value of a [`SharedCount`] with the znode version it was read or written at: the
/// `previous` of a [`SharedCount::try_set`].
///
/// See the example on [`SharedCount`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VersionedCount {
    value: i32,
    version: i32,
    mzxid: i64,
}

impl VersionedCount {
    /// The count.
    ///
    /// See the example on [`SharedCount`].
    pub fn value(&self) -> i32 {
        self.value
    }

    /// The znode's data version when this value was read or written.
    ///
    /// See the example on [`SharedCount`].
    pub fn version(&self) -> i32 {
        self.version
    }

    fn read(path: &str, data: &[u8], stat: &Stat) -> Result<VersionedCount> {
        Ok(VersionedCount {
            value: i32::from_be_bytes(be_bytes::<4>(path, data)?),
            version: stat.version,
            mzxid: stat.mzxid,
        })
    }
}

/// Where a [`SharedCount`] stands: the recipe's [`status`](SharedCount::status).
///
/// ```no_run
/// # async fn f(count: zk_recipes::SharedCount) -> zk_recipes::Result<()> {
/// use zk_recipes::SharedCountStatus;
/// let mut status = count.status();
/// let now = status.wait_for(|s| *s == SharedCountStatus::Missing || s.has_ended()).await?;
/// println!("{now:?}");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SharedCountStatus {
    /// The znode is there and its changes are followed.
    Following,
    /// The znode was deleted: the count waits for it to come back (a
    /// [`set`](SharedCount::set) creates it again).
    Missing,
    /// The count was closed (or dropped): the last state.
    Closed,
    /// The client ended for good, and the count with it: the last state.
    Ended(LostReason),
}

impl SharedCountStatus {
    /// Whether this is a last state ([`Closed`](Self::Closed) or [`Ended`](Self::Ended)).
    pub fn has_ended(&self) -> bool {
        matches!(
            self,
            SharedCountStatus::Closed | SharedCountStatus::Ended(_)
        )
    }
}

/// Builds a [`SharedCount`]; see [`SharedCount::builder`].
///
/// See the example on [`SharedCount`].
#[derive(Debug)]
pub struct SharedCountBuilder {
    client: Client,
    path: String,
    seed: i32,
}

impl SharedCountBuilder {
    /// The value the znode is created with when it is missing (default 0).
    ///
    /// See the example on [`SharedCount`].
    pub fn seed(mut self, seed: i32) -> Self {
        self.seed = seed;
        self
    }

    /// Creates the znode with the seed when it is missing (its parents as containers),
    /// reads it, and follows its changes from then on. Fails with the server's refusal, the
    /// client's end, or [`RecipeError::NoRuntime`] outside a tokio runtime. Cancel-safe: a
    /// dropped start leaves at most the node it was asked to create.
    ///
    /// See the example on [`SharedCount`].
    pub async fn start(self) -> Result<SharedCount> {
        let handle = runtime::current()?;
        let SharedCountBuilder { client, path, seed } = self;
        let first = retry_while(
            || read_or_create(&client, &path, seed),
            |e| matches!(e, RecipeError::Session(e) if e.is_retryable() && may_retry(&client)),
        )
        .await?;
        let value = Arc::new(watch::channel(first).0);
        let status = Arc::new(watch::channel(SharedCountStatus::Following).0);
        let follower = Follower {
            client: client.clone(),
            path: path.clone(),
            value: value.clone(),
            status: status.clone(),
        };
        let follower = handle.spawn(follower.run());
        Ok(SharedCount {
            client,
            path,
            value,
            status,
            follower: follower.abort_handle(),
        })
    }
}

/// A shared `i32` counter at one znode, compatible with Curator's SharedCount.
///
/// The count owns nothing on the server: closing or dropping it stops following the
/// znode, which stays.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::SharedCount;
///
/// // Created with 10 unless the node exists; then its value is kept.
/// let count = SharedCount::builder(client, "/app/max-workers")
///     .seed(10)
///     .start()
///     .await?;
/// let seen = count.versioned();
/// // A compare-and-set: fails when another process wrote in between.
/// if !count.try_set(seen, seen.value() + 1).await? {
///     println!("someone else changed it to {}", count.count());
/// }
/// let mut changes = count.changes();
/// while let Ok(now) = changes.changed().await {
///     println!("now {}", now.value());
/// }
/// count.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct SharedCount {
    client: Client,
    path: String,
    value: Arc<watch::Sender<VersionedCount>>,
    status: Arc<watch::Sender<SharedCountStatus>>,
    follower: AbortHandle,
}

impl SharedCount {
    /// A builder for a count at `path`.
    ///
    /// See the example on [`SharedCount`].
    pub fn builder(client: Client, path: impl Into<String>) -> SharedCountBuilder {
        SharedCountBuilder {
            client,
            path: path.into(),
            seed: 0,
        }
    }

    /// Where the count stands, as it changes; its last state says why it ended.
    ///
    /// See the example on [`SharedCountStatus`].
    pub fn status(&self) -> ValueWatch<SharedCountStatus> {
        ValueWatch::new(self.status.subscribe())
    }

    /// Stops following the znode (which stays: the count owns nothing on the server).
    /// Always `Ok`; a `Result` as every recipe's close.
    ///
    /// See the example on [`SharedCount`].
    pub async fn close(self) -> Result<()> {
        Ok(())
    }

    /// The path of the znode.
    ///
    /// See the example on [`SharedCount`].
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The newest value known.
    ///
    /// See the example on [`SharedCount`].
    pub fn count(&self) -> i32 {
        self.value.borrow().value
    }

    /// The newest value known, with its version, for [`try_set`](Self::try_set).
    ///
    /// See the example on [`SharedCount`].
    pub fn versioned(&self) -> VersionedCount {
        *self.value.borrow()
    }

    /// The value as it changes: every value read or written after this call, newest first
    /// (a slow reader skips to the newest; see [`ValueWatch`]).
    ///
    /// See the example on [`SharedCount`].
    pub fn changes(&self) -> ValueWatch<VersionedCount> {
        ValueWatch::new(self.value.subscribe())
    }

    /// Sets the count to `value` if nobody has written since `previous` was read (the
    /// znode's version is still `previous.version()`); false, after reading the newer value,
    /// otherwise. Fails with NoNode when the znode is gone (see [`set`](Self::set)).
    /// Cancel-safe: the write is one request, done or not.
    ///
    /// See the example on [`SharedCount`].
    pub async fn try_set(&self, previous: VersionedCount, value: i32) -> Result<bool> {
        let version = Version::Exact(previous.version);
        match self
            .client
            .set_data(&self.path, &value.to_be_bytes(), version)
            .await
        {
            Ok(stat) => {
                self.publish(value, &stat);
                Ok(true)
            }
            Err(Error::Code(ErrorCode::BadVersion)) => {
                if let Ok((data, stat)) = self.client.get_data(&self.path).await {
                    offer(&self.value, VersionedCount::read(&self.path, &data, &stat)?);
                }
                Ok(false)
            }
            // Gone: no read can make a later try succeed, so a compare-and-set loop must
            // hear of it (Curator's trySetCount throws NoNode too).
            Err(e) => Err(e.into()),
        }
    }

    /// Sets the count to `value` whatever it was (creating the node if it went missing).
    ///
    /// ```no_run
    /// # async fn f(count: zk_recipes::SharedCount) -> zk_recipes::Result<()> {
    /// count.set(0).await?;
    /// assert_eq!(count.count(), 0);
    /// # Ok(()) }
    /// ```
    pub async fn set(&self, value: i32) -> Result<()> {
        let data = value.to_be_bytes();
        let stat = match self.client.set_data(&self.path, &data, Version::Any).await {
            Err(Error::Code(ErrorCode::NoNode)) => {
                create_parents(&self.client, parent_of(&self.path)).await?;
                let options = CreateOptions::persistent();
                let (_, stat) = self
                    .client
                    .create_with_stat(&self.path, &data, options.clone())
                    .await?;
                stat
            }
            other => other?,
        };
        self.publish(value, &stat);
        Ok(())
    }

    fn publish(&self, value: i32, stat: &Stat) {
        let v = VersionedCount {
            value,
            version: stat.version,
            mzxid: stat.mzxid,
        };
        offer(&self.value, v);
    }
}

impl Drop for SharedCount {
    fn drop(&mut self) {
        self.follower.abort();
        self.status.send_if_modified(|s| {
            let open = !s.has_ended();
            if open {
                *s = SharedCountStatus::Closed;
            }
            open
        });
    }
}

/// Takes `v` when it is newer (by mzxid) than the value held.
fn offer(tx: &watch::Sender<VersionedCount>, v: VersionedCount) {
    tx.send_if_modified(|cur| {
        let newer = v.mzxid > cur.mzxid;
        if newer {
            *cur = v;
        }
        newer
    });
}

/// Reads the node, creating it with `seed` first when it is missing.
async fn read_or_create(client: &Client, path: &str, seed: i32) -> Result<VersionedCount> {
    loop {
        match client.get_data(path).await {
            Ok((data, stat)) => return VersionedCount::read(path, &data, &stat),
            Err(Error::Code(ErrorCode::NoNode)) => {}
            Err(e) => return Err(e.into()),
        }
        create_parents(client, parent_of(path)).await?;
        let options = CreateOptions::persistent();
        match client
            .create(path, &seed.to_be_bytes(), options.clone())
            .await
        {
            Ok(_) | Err(Error::Code(ErrorCode::NodeExists)) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// The task that follows the znode for a [`SharedCount`].
struct Follower {
    client: Client,
    path: String,
    value: Arc<watch::Sender<VersionedCount>>,
    status: Arc<watch::Sender<SharedCountStatus>>,
}

impl Follower {
    /// Follows the node: a data watch re-armed after every event, and a re-read after every
    /// reconnect or new session (the watch may have missed changes meanwhile).
    async fn run(self) {
        let (client, path) = (&self.client, &self.path);
        let mut events = client.session_events();
        let mut pauses = Pauses::default();
        while !client_ended(client) {
            match data_watch(client, path).await {
                Ok((data, stat, w)) => {
                    pauses.reset();
                    self.set_status(SharedCountStatus::Following);
                    if let Ok(v) = VersionedCount::read(path, &data, &stat) {
                        offer(&self.value, v);
                    }
                    tokio::select! {
                        _ = w => {}
                        _ = reconnected(&mut events) => {}
                    }
                }
                // Deleted: wait for it to come back.
                Err(Error::Code(ErrorCode::NoNode)) => match exists_watch(client, path).await {
                    Ok((None, w)) => {
                        self.set_status(SharedCountStatus::Missing);
                        tokio::select! {
                            _ = w => {}
                            _ = reconnected(&mut events) => {}
                        }
                    }
                    Ok((Some(_), _)) => {}
                    Err(_) => pauses.pause().await,
                },
                Err(_) => pauses.pause().await,
            }
        }
        let why = why_ended(client);
        self.set_status(SharedCountStatus::Ended(why));
    }

    fn set_status(&self, now: SharedCountStatus) {
        self.status.send_if_modified(|s| {
            let changed = *s != now;
            *s = now;
            changed
        });
    }
}

/// Resolves on the next connection after a break (same session or a new one); never once
/// the client is gone.
async fn reconnected(events: &mut zk_session::SessionEvents) {
    loop {
        match events.next().await.map(Turn::of) {
            Some(Some(Turn::Back { .. })) => return,
            Some(_) => {}
            None => std::future::pending::<()>().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_four_bytes_big_endian_and_ordered_by_mzxid() {
        let stat = Stat {
            version: 3,
            mzxid: 10,
            ..Stat::default()
        };
        let v = VersionedCount::read("/c", &(-2i32).to_be_bytes(), &stat).unwrap();
        assert_eq!((v.value(), v.version()), (-2, 3));
        assert!(VersionedCount::read("/c", &[1, 2], &stat).is_err());
        let tx = watch::channel(v).0;
        // An older write (a smaller mzxid) arriving late does not replace a newer one, even
        // with a larger version (the version wraps).
        offer(
            &tx,
            VersionedCount {
                value: 5,
                version: i32::MAX,
                mzxid: 9,
            },
        );
        assert_eq!(tx.borrow().value(), -2);
        offer(
            &tx,
            VersionedCount {
                value: 6,
                version: i32::MIN,
                mzxid: 11,
            },
        );
        assert_eq!(tx.borrow().value(), 6);
    }
}
