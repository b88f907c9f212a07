//! [`DistributedAtomicLong`]: an `i64` in one znode (8 bytes, big-endian), updated by
//! optimistic compare-and-set, as Curator's DistributedAtomicLong does.
//!
//! Each try reads the value and its version, computes, and writes with that version (or
//! creates the node when missing); a BadVersion or NodeExists means someone else wrote in
//! between, and the try is repeated under the caller's [`RetryPolicy`]. When the tries are
//! used up and the counter was built with [`AtomicLongBuilder::promote_to_lock`], the update
//! takes a [`InterProcessMutex`] at the lock path given (Curator's `PromotedToLock`, the same
//! `_c_<uuid>-lock-<seq>` nodes) and tries again under the second policy: the lock orders
//! promoted writers among themselves; optimistic writers are still caught by the version.

use std::time::Duration;

use zk_session::{Client, CreateOptions, Error, ErrorCode, RetryPolicy, Version};

use super::{be_bytes, parent_of};
use crate::{
    plumbing::protected::create_parents,
    plumbing::retry::{may_repeat_read, retry_under, retry_while},
    InterProcessMutex, RecipeError, Result,
};

/// What an update did: Curator's `AtomicValue`.
///
/// See the example on [`DistributedAtomicLong`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AtomicOutcome {
    /// Whether the value was written.
    pub succeeded: bool,
    /// The value before (the last one read).
    pub pre: i64,
    /// The value after: the one written when `succeeded`, else `pre`.
    pub post: i64,
    /// How many optimistic tries were made.
    pub optimistic_tries: u32,
    /// How many tries were made holding the promotion lock (0 when not promoted).
    pub promoted_tries: u32,
}

/// Builds a [`DistributedAtomicLong`]; see [`DistributedAtomicLong::builder`].
///
/// ```no_run
/// # fn f(client: zk_session::Client) {
/// use std::time::Duration;
/// use zk_recipes::DistributedAtomicLong;
/// use zk_session::RetryPolicy;
///
/// let hits = DistributedAtomicLong::builder(client, "/stats/hits")
///     .retry(RetryPolicy::exponential_backoff(Duration::from_millis(10), 5))
///     .promote_to_lock(
///         "/stats/hits-lock",
///         Duration::from_secs(5),
///         RetryPolicy::exponential_backoff(Duration::from_millis(10), 20),
///     )
///     .build();
/// # }
/// ```
#[derive(Debug)]
pub struct AtomicLongBuilder {
    client: Client,
    path: String,
    retry: RetryPolicy,
    promotion: Option<Promotion>,
}

#[derive(Debug)]
struct Promotion {
    mutex: InterProcessMutex,
    max_wait: Duration,
    retry: RetryPolicy,
}

impl AtomicLongBuilder {
    /// The policy of the optimistic tries (default: 10 retries from 10 ms).
    ///
    /// See the example on [`AtomicLongBuilder`].
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// When the optimistic tries fail, take a mutex at `lock_path` (waiting at most
    /// `max_wait`) and try again under `retry` while holding it.
    ///
    /// See the example on [`AtomicLongBuilder`].
    pub fn promote_to_lock(
        mut self,
        lock_path: impl Into<String>,
        max_wait: Duration,
        retry: RetryPolicy,
    ) -> Self {
        self.promotion = Some(Promotion {
            mutex: InterProcessMutex::new(self.client.clone(), lock_path),
            max_wait,
            retry,
        });
        self
    }

    /// The counter.
    ///
    /// See the example on [`AtomicLongBuilder`].
    pub fn build(self) -> DistributedAtomicLong {
        DistributedAtomicLong {
            client: self.client,
            path: self.path,
            retry: self.retry,
            promotion: self.promotion,
        }
    }
}

/// A distributed `i64` counter at one znode, compatible with Curator's
/// DistributedAtomicLong. A missing node or empty data reads as 0.
///
/// Every operation is cancel-safe: each write is one request, done or not, and nothing is
/// left behind but the value. Reads are retried while the connection is lost; a write whose
/// answer is lost with the connection fails with that error (ConnectionLoss): it may or may
/// not have happened, and trying again could add twice.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::DistributedAtomicLong;
///
/// let counter = DistributedAtomicLong::new(client, "/stats/requests");
/// let r = counter.increment().await?;
/// if r.succeeded {
///     println!("{} -> {}", r.pre, r.post);
/// }
/// let swapped = counter.compare_and_set(r.post, 100).await?;
/// println!("swapped: {}, now {}", swapped.succeeded, counter.get().await?);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct DistributedAtomicLong {
    client: Client,
    path: String,
    retry: RetryPolicy,
    promotion: Option<Promotion>,
}

/// One try's result.
enum Try {
    Done(i64, i64),
    /// Someone else wrote in between (BadVersion, NodeExists): try again.
    Raced(i64),
}

impl DistributedAtomicLong {
    /// A counter at `path`, optimistic only, with the default retry policy.
    ///
    /// See the example on [`DistributedAtomicLong`].
    pub fn new(client: Client, path: impl Into<String>) -> Self {
        Self::builder(client, path).build()
    }

    /// A builder for the retry policy and the promotion to a lock.
    ///
    /// See the example on [`AtomicLongBuilder`].
    pub fn builder(client: Client, path: impl Into<String>) -> AtomicLongBuilder {
        AtomicLongBuilder {
            client,
            path: path.into(),
            retry: RetryPolicy::exponential_backoff(Duration::from_millis(10), 10),
            promotion: None,
        }
    }

    /// The path of the znode.
    ///
    /// See the example on [`DistributedAtomicLong`].
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The current value (0 when the node is missing or empty).
    ///
    /// See the example on [`DistributedAtomicLong`].
    pub async fn get(&self) -> Result<i64> {
        Ok(self.read().await?.0)
    }

    /// Adds 1. See [`add`](Self::add).
    ///
    /// See the example on [`DistributedAtomicLong`].
    pub async fn increment(&self) -> Result<AtomicOutcome> {
        self.add(1).await
    }

    /// Subtracts 1. See [`add`](Self::add).
    ///
    /// ```no_run
    /// # async fn f(counter: zk_recipes::DistributedAtomicLong) -> zk_recipes::Result<()> {
    /// let r = counter.decrement().await?;
    /// assert!(!r.succeeded || r.post == r.pre - 1);
    /// # Ok(()) }
    /// ```
    pub async fn decrement(&self) -> Result<AtomicOutcome> {
        self.add(-1).await
    }

    /// Adds `delta` (wrapping, as Java's `long` does), retrying while others write in
    /// between; `succeeded` is false when the retries (and the promotion) are used up.
    ///
    /// See the example on [`DistributedAtomicLong`].
    pub async fn add(&self, delta: i64) -> Result<AtomicOutcome> {
        self.update(|v| v.wrapping_add(delta)).await
    }

    /// Subtracts `delta`. See [`add`](Self::add).
    ///
    /// See the example on [`decrement`](Self::decrement).
    pub async fn subtract(&self, delta: i64) -> Result<AtomicOutcome> {
        self.update(|v| v.wrapping_sub(delta)).await
    }

    /// Sets the value to `value` (whatever it was), retrying like [`add`](Self::add).
    ///
    /// See the example on [`force_set`](Self::force_set).
    pub async fn try_set(&self, value: i64) -> Result<AtomicOutcome> {
        self.update(|_| value).await
    }

    /// Sets the value to `new` if it is `expected` now; one try, no retry (as Curator's
    /// `compareAndSet`). A missing node compares unequal to anything.
    ///
    /// See the example on [`DistributedAtomicLong`].
    pub async fn compare_and_set(&self, expected: i64, new: i64) -> Result<AtomicOutcome> {
        let (pre, version) = self.read().await?;
        let mut out = AtomicOutcome {
            succeeded: false,
            pre,
            post: pre,
            optimistic_tries: 1,
            promoted_tries: 0,
        };
        let Some(version) = version.filter(|_| pre == expected) else {
            return Ok(out);
        };
        match self
            .client
            .set_data(&self.path, &new.to_be_bytes(), version)
            .await
        {
            Ok(_) => {
                out.succeeded = true;
                out.post = new;
            }
            Err(Error::Code(ErrorCode::BadVersion | ErrorCode::NoNode)) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(out)
    }

    /// Writes `value` unconditionally, creating the node when it is missing.
    ///
    /// ```no_run
    /// # async fn f(counter: zk_recipes::DistributedAtomicLong) -> zk_recipes::Result<()> {
    /// counter.force_set(7).await?;
    /// let r = counter.try_set(8).await?;
    /// assert!(!r.succeeded || (r.pre, r.post) == (7, 8) || r.post == 8);
    /// # Ok(()) }
    /// ```
    pub async fn force_set(&self, value: i64) -> Result<()> {
        let data = value.to_be_bytes();
        match self.client.set_data(&self.path, &data, Version::Any).await {
            Err(Error::Code(ErrorCode::NoNode)) => match self.create(&data).await {
                Err(Error::Code(ErrorCode::NodeExists)) => {
                    self.client
                        .set_data(&self.path, &data, Version::Any)
                        .await?;
                    Ok(())
                }
                other => other.map_err(Into::into),
            },
            other => other.map(drop).map_err(Into::into),
        }
    }

    /// Creates the node with `value` if it does not exist; false when it does.
    ///
    /// ```no_run
    /// # async fn f(counter: zk_recipes::DistributedAtomicLong) -> zk_recipes::Result<()> {
    /// if counter.initialize(1000).await? {
    ///     println!("we set the starting value");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn initialize(&self, value: i64) -> Result<bool> {
        match self.create(&value.to_be_bytes()).await {
            Ok(()) => Ok(true),
            Err(Error::Code(ErrorCode::NodeExists)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The value and the version to write it back with (`None` when the node is missing).
    async fn read(&self) -> Result<(i64, Option<Version>)> {
        match self.client.get_data(&self.path).await {
            Ok((data, stat)) if data.is_empty() => Ok((0, Some(Version::Exact(stat.version)))),
            Ok((data, stat)) => Ok((
                i64::from_be_bytes(be_bytes::<8>(&self.path, &data)?),
                Some(Version::Exact(stat.version)),
            )),
            Err(Error::Code(ErrorCode::NoNode)) => Ok((0, None)),
            Err(e) => Err(e.into()),
        }
    }

    /// [`read`](Self::read), retried while the connection is lost or the session is being
    /// replaced after an expiry (reads are safe to repeat).
    async fn read_retrying(&self) -> Result<(i64, Option<Version>)> {
        retry_while(
            || self.read(),
            |e| matches!(e, RecipeError::Session(e) if may_repeat_read(&self.client, e)),
        )
        .await
    }

    /// Creates the node (its parents as containers when missing).
    async fn create(&self, data: &[u8]) -> Result<(), Error> {
        let options = CreateOptions::persistent();
        match self.client.create(&self.path, data, options.clone()).await {
            Err(Error::Code(ErrorCode::NoNode)) => {
                if let Err(RecipeError::Session(e)) =
                    create_parents(&self.client, parent_of(&self.path)).await
                {
                    return Err(e);
                }
                self.client
                    .create(&self.path, data, options.clone())
                    .await
                    .map(drop)
            }
            other => other.map(drop),
        }
    }

    /// One optimistic try of `f`.
    async fn try_once(&self, f: &impl Fn(i64) -> i64) -> Result<Try> {
        let (pre, version) = self.read_retrying().await?;
        let post = f(pre);
        let data = post.to_be_bytes();
        let written = match version {
            Some(v) => self.client.set_data(&self.path, &data, v).await.map(drop),
            None => self.create(&data).await,
        };
        match written {
            Ok(()) => Ok(Try::Done(pre, post)),
            Err(Error::Code(ErrorCode::BadVersion | ErrorCode::NodeExists | ErrorCode::NoNode)) => {
                Ok(Try::Raced(pre))
            }
            // The write may or may not have happened, and reading again cannot tell ours
            // from another's equal write: the caller is told, rather than risk adding twice.
            Err(e) => Err(e.into()),
        }
    }

    /// Tries `f` under `policy`: the number of tries, and the values when one succeeded.
    async fn tries(
        &self,
        policy: &RetryPolicy,
        f: &impl Fn(i64) -> i64,
    ) -> Result<(u32, std::result::Result<(i64, i64), i64>)> {
        retry_under(policy, || async {
            Ok(match self.try_once(f).await? {
                Try::Done(pre, post) => Ok((pre, post)),
                Try::Raced(pre) => Err(pre),
            })
        })
        .await
    }

    /// The optimistic tries, then the promoted ones if configured.
    async fn update(&self, f: impl Fn(i64) -> i64) -> Result<AtomicOutcome> {
        let (optimistic_tries, r) = self.tries(&self.retry, &f).await?;
        let mut out = outcome(r, optimistic_tries, 0);
        let Some(p) = &self.promotion else {
            return Ok(out);
        };
        if out.succeeded {
            return Ok(out);
        }
        let guard = match p.mutex.acquire_timeout(p.max_wait).await {
            Ok(g) => g,
            Err(RecipeError::Timeout) => return Ok(out),
            Err(e) => return Err(e),
        };
        let tried = self.tries(&p.retry, &f).await;
        // The lock only ordered the tries; a failed release is the lock's business (its
        // node is deleted in the background), not the counter's. Released before a failed
        // try's error too, so that no lock node is left when the caller hears of it.
        let _ = guard.release().await;
        let (promoted_tries, r) = tried?;
        out = outcome(r, optimistic_tries, promoted_tries);
        Ok(out)
    }
}

fn outcome(
    r: std::result::Result<(i64, i64), i64>,
    optimistic_tries: u32,
    promoted_tries: u32,
) -> AtomicOutcome {
    let (succeeded, pre, post) = match r {
        Ok((pre, post)) => (true, pre, post),
        Err(pre) => (false, pre, pre),
    };
    AtomicOutcome {
        succeeded,
        pre,
        post,
        optimistic_tries,
        promoted_tries,
    }
}
