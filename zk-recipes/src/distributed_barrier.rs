//! A barrier on Curator's layout (DistributedBarrier): one PERSISTENT node at the barrier's
//! path; while it exists, waiters wait; removing it lets them all through. A Curator process
//! and ours may set, remove and wait on the same barrier.
//!
//! The node outlives its creator (it is persistent, as Curator's): a process that sets the
//! barrier and dies leaves the others waiting until someone removes it.

use std::time::Duration;

use tokio::time::{timeout_at, Instant};
use zk_session::{Client, CreateOptions, Error, ErrorCode, Version};

use crate::{
    counter::parent_of,
    plumbing::{
        protected::create_parents,
        retry::{may_repeat_read, retry_while},
        watches::exists_watch,
    },
    RecipeError, Result,
};

/// A barrier at a path: set, remove, wait. See the [crate documentation](crate).
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use std::time::Duration;
/// use zk_recipes::DistributedBarrier;
///
/// let gate = DistributedBarrier::new(client, "/barriers/deploy");
/// gate.set().await?; // workers that wait from now on are held back
/// // ... elsewhere: gate.wait_timeout(Duration::from_secs(60)).await? ...
/// gate.remove().await?; // every waiter goes through
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DistributedBarrier {
    client: Client,
    path: String,
}

impl DistributedBarrier {
    /// The barrier at `path`.
    ///
    /// See the example on [`DistributedBarrier`].
    pub fn new(client: Client, path: impl Into<String>) -> DistributedBarrier {
        DistributedBarrier {
            client,
            path: path.into(),
        }
    }

    /// The barrier's path.
    ///
    /// See the example on [`DistributedBarrier`].
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Sets the barrier: creates its node (and the parents, as containers); set already is
    /// fine. Retried across connection losses and session expiry.
    ///
    /// See the example on [`DistributedBarrier`].
    pub async fn set(&self) -> Result<()> {
        let client = &self.client;
        loop {
            let made = repeating(client, || {
                client.create(&self.path, b"", CreateOptions::persistent())
            })
            .await;
            match made {
                Ok(_) | Err(Error::Code(ErrorCode::NodeExists)) => return Ok(()),
                Err(Error::Code(ErrorCode::NoNode)) => {
                    create_parents(client, parent_of(&self.path)).await?;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Removes the barrier, letting every waiter through; not set is fine.
    ///
    /// See the example on [`DistributedBarrier`].
    pub async fn remove(&self) -> Result<()> {
        let client = &self.client;
        match repeating(client, || client.delete(&self.path, Version::Any)).await {
            Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether the barrier is set now.
    ///
    /// ```no_run
    /// # async fn f(gate: zk_recipes::DistributedBarrier) -> zk_recipes::Result<()> {
    /// if gate.is_set().await? {
    ///     println!("{} holds waiters back", gate.path());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn is_set(&self) -> Result<bool> {
        let client = &self.client;
        Ok(repeating(client, || client.exists(&self.path))
            .await?
            .is_some())
    }

    /// Waits until the barrier is not set (at once if it is not). The node is persistent, so
    /// the wait goes on across connection losses and session expiry; it fails only when the
    /// client is closed or its session presumed lost. Cancel-safe.
    ///
    /// See the example on [`DistributedBarrier`].
    pub async fn wait(&self) -> Result<()> {
        let client = &self.client;
        loop {
            let (set, watch) = repeating(client, || exists_watch(client, &self.path)).await?;
            if set.is_none() {
                return Ok(());
            }
            // Whatever ends the watch (the deletion, a connection event), look again.
            let _ = watch.await;
        }
    }

    /// [`wait`](Self::wait), giving up with [`RecipeError::Timeout`] after `wait`.
    ///
    /// ```no_run
    /// # async fn f(gate: zk_recipes::DistributedBarrier) -> zk_recipes::Result<()> {
    /// use std::time::Duration;
    /// use zk_recipes::RecipeError;
    ///
    /// match gate.wait_timeout(Duration::from_secs(5)).await {
    ///     Ok(()) => println!("through"),
    ///     Err(RecipeError::Timeout) => println!("still set after 5 s"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn wait_timeout(&self, wait: Duration) -> Result<()> {
        timeout_at(Instant::now() + wait, self.wait())
            .await
            .unwrap_or(Err(RecipeError::Timeout))
    }
}

/// Runs `op` until it answers other than retryably, also across a session expiry: the
/// barrier's node is persistent, so each of its requests may be repeated on the next session
/// as it is (a repeated create's NodeExists and delete's NoNode are taken as done).
async fn repeating<T, F, Fut>(client: &Client, op: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Error>>,
{
    retry_while(op, |e: &Error| may_repeat_read(client, e)).await
}
