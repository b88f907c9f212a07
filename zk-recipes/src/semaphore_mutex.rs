//! A non-re-entrant distributed mutex on Curator's protocol (InterProcessSemaphoreMutex): an
//! [`InterProcessSemaphoreV2`] of one lease, on its layout (`<path>/locks` and
//! `<path>/leases`), so a Curator process holding an InterProcessSemaphoreMutex on the same
//! path excludes ours and ours excludes it.
//!
//! Unlike [`InterProcessMutex`](crate::InterProcessMutex) it has no re-entrance and no
//! owner: a second acquire through the same handle waits like any other contender, and the
//! guard may be released from any task (Curator's is not thread-bound either).

use std::time::Duration;

use zk_session::{Acl, Client};

use crate::{
    plumbing::hold_options::{hold_setters, HoldOptions},
    InterProcessSemaphoreV2, Result, SemaphoreLease, SuspendPolicy,
};

/// A non-re-entrant mutex at a path; see the crate documentation for the hold contract.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use std::time::Duration;
/// use zk_recipes::InterProcessSemaphoreMutex;
///
/// let mutex = InterProcessSemaphoreMutex::new(client, "/locks/compaction");
/// let guard = mutex.acquire_timeout(Duration::from_secs(10)).await?;
/// assert!(mutex.try_acquire().await?.is_none()); // not re-entrant: held, even for us
/// // ... the critical section, watching guard.lost() ...
/// guard.release().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct InterProcessSemaphoreMutex {
    semaphore: InterProcessSemaphoreV2,
}

/// Builds an [`InterProcessSemaphoreMutex`]; see [`InterProcessSemaphoreMutex::builder`].
///
/// ```no_run
/// # fn f(client: zk_session::Client) {
/// use zk_recipes::{InterProcessSemaphoreMutex, SuspendPolicy};
///
/// let mutex = InterProcessSemaphoreMutex::builder(client, "/locks/compaction")
///     .data(b"worker-7")
///     .suspend_policy(SuspendPolicy::WaitForLost)
///     .build();
/// # }
/// ```
#[derive(Debug)]
pub struct InterProcessSemaphoreMutexBuilder {
    client: Client,
    path: String,
    hold: HoldOptions,
}

impl InterProcessSemaphoreMutexBuilder {
    hold_setters! {
        /// The data of the lease node (default empty; Curator writes the host's address).
        ///
        /// See the example on [`InterProcessSemaphoreMutexBuilder`].
        data;

        /// The ACL of the lease and lock nodes (default open).
        ///
        /// See the example on [`InterProcessSemaphoreMutexBuilder`].
        acl;

        /// When a held lock stops being trusted on a suspended connection (default
        /// [`SuspendPolicy::StepDown`]); an expiry or the deletion of the node always ends it.
        ///
        /// See the example on [`InterProcessSemaphoreMutexBuilder`].
        suspend_policy;
    }

    /// The mutex.
    ///
    /// See the example on [`InterProcessSemaphoreMutexBuilder`].
    pub fn build(self) -> InterProcessSemaphoreMutex {
        let mut semaphore = InterProcessSemaphoreV2::builder(self.client, self.path)
            .max_leases(1)
            .data(&self.hold.data)
            .suspend_policy(self.hold.policy);
        if let Some(acl) = self.hold.acl {
            semaphore = semaphore.acl(acl);
        }
        InterProcessSemaphoreMutex {
            semaphore: semaphore.build(),
        }
    }
}

impl InterProcessSemaphoreMutex {
    /// The mutex at `path`.
    ///
    /// See the example on [`InterProcessSemaphoreMutex`].
    pub fn new(client: Client, path: impl Into<String>) -> InterProcessSemaphoreMutex {
        Self::builder(client, path).build()
    }

    /// A builder for the lease node's data and ACL and the suspend policy.
    ///
    /// See the example on [`InterProcessSemaphoreMutexBuilder`].
    pub fn builder(client: Client, path: impl Into<String>) -> InterProcessSemaphoreMutexBuilder {
        InterProcessSemaphoreMutexBuilder {
            client,
            path: path.into(),
            hold: HoldOptions::default(),
        }
    }

    /// The lock path.
    ///
    /// See the example on [`InterProcessSemaphoreMutex`].
    pub fn path(&self) -> &str {
        self.semaphore.path()
    }

    /// Waits until the lock is held, as long as the session lives (see
    /// [`InterProcessMutex::acquire`](crate::InterProcessMutex::acquire)). Cancel-safe:
    /// dropping the future leaves no node behind.
    ///
    /// See the example on [`InterProcessSemaphoreMutex`].
    pub async fn acquire(&self) -> Result<SemaphoreLease> {
        self.semaphore.acquire().await
    }

    /// Like [`acquire`](Self::acquire), giving up with
    /// [`RecipeError::Timeout`](crate::RecipeError::Timeout) after `wait`.
    ///
    /// See the example on [`InterProcessSemaphoreMutex`].
    pub async fn acquire_timeout(&self, wait: Duration) -> Result<SemaphoreLease> {
        self.semaphore.acquire_timeout(wait).await
    }

    /// Takes the lock if it is free; `None` when it is held (also through this handle).
    ///
    /// See the example on [`InterProcessSemaphoreMutex`].
    pub async fn try_acquire(&self) -> Result<Option<SemaphoreLease>> {
        self.semaphore.try_acquire().await
    }
}
