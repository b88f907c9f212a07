//! [`InterProcessMutexBuilder`]: a mutex's options (fairness, node data and ACL, the suspend policy,
//! extra contender markers), apart from the mutex so each reads on its own.

use std::sync::Arc;

use zk_session::{Acl, Client};

use super::{InterProcessMutex, LineRule, LockCore};
use crate::{
    contender::ContenderNames,
    mutex_guard::Holds,
    plumbing::{
        hold_options::{hold_setters, HoldOptions},
        liveness::SuspendPolicy,
    },
};

/// The node name after the protected prefix, as Curator's InterProcessMutex writes it.
const LOCK_NAME: &str = "lock-";

/// Builds an [`InterProcessMutex`]; see [`InterProcessMutex::builder`].
///
/// ```no_run
/// # fn f(client: zk_session::Client) {
/// use zk_recipes::{InterProcessMutex, SuspendPolicy};
///
/// let mutex = InterProcessMutex::builder(client, "/locks/compaction")
///     .data(b"host-17")
///     .suspend_policy(SuspendPolicy::WaitForLost)
///     .contender_marker("n_")
///     .build();
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct InterProcessMutexBuilder {
    client: Client,
    path: String,
    fair: bool,
    rule: LineRule,
    lock_name: &'static str,
    hold: HoldOptions,
    names: ContenderNames,
}

impl InterProcessMutexBuilder {
    /// The defaults: fair, no data, an open ACL, a suspension counts as lost.
    pub(super) fn new(client: Client, path: String) -> InterProcessMutexBuilder {
        InterProcessMutexBuilder {
            client,
            path,
            fair: true,
            rule: LineRule::Exclusive,
            lock_name: LOCK_NAME,
            hold: HoldOptions::default(),
            names: ContenderNames::new(),
        }
    }

    /// First come, first served (the default): each waiter keeps its place in the queue and
    /// watches only the one ahead of it.
    ///
    /// See the example on [`unfair`](Self::unfair).
    pub fn fair(mut self) -> Self {
        self.fair = true;
        self
    }

    /// Random order: a waiter keeps no place in the queue. It watches the current holder, and
    /// when that goes, competes again after a random pause of up to 20 ms, so the next holder
    /// is whoever creates its node first. Every unfair waiter wakes on each release (a herd,
    /// the price of having no order); fair waiters on the same path come first.
    ///
    /// The same example serves for [`fair`](Self::fair) and [`acl`](Self::acl).
    ///
    /// ```no_run
    /// # fn example(client: zk_session::Client) {
    /// use zk_recipes::InterProcessMutex;
    /// use zk_session::Acl;
    ///
    /// // No queue: after each release, whichever waiter creates its node first wins.
    /// let cache = InterProcessMutex::builder(client.clone(), "/locks/cache").unfair().build();
    /// // First come, first served; only this session's authenticated identities may read the
    /// // lock nodes' data (the session must have called add_auth).
    /// let billing = InterProcessMutex::builder(client, "/locks/billing")
    ///     .fair()
    ///     .acl(Acl::creator_all())
    ///     .build();
    /// # }
    /// ```
    pub fn unfair(mut self) -> Self {
        self.fair = false;
        self
    }

    hold_setters! {
        /// The data of the lock node (default empty; Curator writes the host's address).
        ///
        /// See the example on [`InterProcessMutexBuilder`].
        data;

        /// The ACL of the lock node (default open).
        ///
        /// See the example on [`unfair`](Self::unfair).
        acl;

        /// Whether a suspended connection (or a read-only server) means the lock is lost:
        /// [`SuspendPolicy::StepDown`] (the default, Curator's standard policy) says so; with
        /// [`SuspendPolicy::WaitForLost`] only a lost or expired session, a closed client or a
        /// deleted node does.
        ///
        /// See the example on [`InterProcessMutexBuilder`].
        suspend_policy;
    }

    /// Also counts children whose name has `marker` before the sequence suffix as contenders
    /// (see [`ContenderNames::with_marker`]).
    ///
    /// See the example on [`InterProcessMutexBuilder`].
    pub fn contender_marker(mut self, marker: &str) -> Self {
        self.names = self.names.with_marker(marker);
        self
    }

    /// The node name after the protected prefix and the waiting rule, for the two sides of
    /// a read/write lock.
    pub(crate) fn line(mut self, lock_name: &'static str, rule: LineRule) -> Self {
        self.lock_name = lock_name;
        self.rule = rule;
        self
    }

    /// The mutex.
    ///
    /// See the example on [`InterProcessMutexBuilder`].
    pub fn build(self) -> InterProcessMutex {
        let create = self
            .hold
            .protected_create(self.path.clone(), self.lock_name);
        InterProcessMutex {
            core: Arc::new(LockCore {
                client: self.client,
                path: self.path,
                fair: self.fair,
                rule: self.rule,
                policy: self.hold.policy,
                names: self.names,
                create,
                serial: Arc::new(tokio::sync::Mutex::new(())),
                holds: Arc::new(Holds::default()),
                joined: Arc::new(tokio::sync::watch::channel(0).0),
            }),
        }
    }
}
