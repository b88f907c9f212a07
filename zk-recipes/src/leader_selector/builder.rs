//! [`LeaderSelectorBuilder`]: a selector's options (participant id, auto-requeue, the
//! suspension policy), and its start, which spawns the supervisor.

use std::{future::Future, sync::Arc};

use tokio::sync::mpsc;
use zk_session::Client;

use super::{selector_status, supervisor::Supervisor, BoxTask, LeaderSelector, Status, TaskFn};
use crate::{
    mutex::InterProcessMutex, participant::default_id, plumbing::runtime, value_watch::Derived,
    Leadership, Result, SuspendPolicy,
};

/// Configures and starts a [`LeaderSelector`]; see [`LeaderSelector::builder`].
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::{LeaderSelector, SuspendPolicy};
///
/// let selector = LeaderSelector::builder(client, "/election/jobs")
///     .task(|_lead| async move {
///         // lead until this returns
///     })
/// .id("worker-4")
/// .auto_requeue(true)
/// .suspend_policy(SuspendPolicy::WaitForLost)
/// .start().await?;
/// # Ok(()) }
/// ```
pub struct LeaderSelectorBuilder {
    client: Client,
    path: String,
    task: Arc<TaskFn>,
    id: Option<String>,
    auto_requeue: bool,
    policy: SuspendPolicy,
}

impl std::fmt::Debug for LeaderSelectorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderSelectorBuilder")
            .field("path", &self.path)
            .field("id", &self.id)
            .field("auto_requeue", &self.auto_requeue)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl LeaderSelectorBuilder {
    /// Defaults: a task that leads until the term is taken away, a generated id, no
    /// auto-requeue, the default suspension policy.
    pub(super) fn new(client: Client, path: String) -> LeaderSelectorBuilder {
        let task: Arc<TaskFn> = Arc::new(|_| Box::pin(std::future::pending()) as BoxTask);
        LeaderSelectorBuilder {
            client,
            path,
            task,
            id: None,
            auto_requeue: false,
            policy: SuspendPolicy::default(),
        }
    }

    /// What to run whenever elected: leadership lasts until `task` returns (or is taken
    /// away: the task is then dropped). By default the selector leads until the term is
    /// taken away, interrupted or closed.
    ///
    /// See the example on [`LeaderSelectorBuilder`].
    pub fn task<F, Fut>(mut self, task: F) -> Self
    where
        F: Fn(Leadership) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.task = Arc::new(move |l| Box::pin(task(l)) as BoxTask);
        self
    }

    /// The participant id, stored as the node's data (default `host:pid:n`).
    ///
    /// See the example on [`LeaderSelectorBuilder`].
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Whether to queue again after each term (default false: one term, then out).
    ///
    /// See the example on [`LeaderSelectorBuilder`].
    pub fn auto_requeue(mut self, requeue: bool) -> Self {
        self.auto_requeue = requeue;
        self
    }

    /// What to do when the connection is suspended (default [`SuspendPolicy::StepDown`]:
    /// cancel the task).
    ///
    /// See the example on [`LeaderSelectorBuilder`].
    pub fn suspend_policy(mut self, policy: SuspendPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Joins the election and returns once this participant's node exists (so it is in
    /// [`participants`](LeaderSelector::participants)), as
    /// [`LeaderLatchBuilder::start`](crate::LeaderLatchBuilder::start) does; the task runs
    /// whenever it is elected, from then on in the background. While the client is
    /// disconnected this waits for the connection; wrap it in a timeout to bound that.
    /// Dropping the future leaves the election (in the background).
    ///
    /// Fails when the path is invalid, the server refuses the create (e.g. no permission),
    /// the client ends first, or with [`RecipeError::NoRuntime`](crate::RecipeError::NoRuntime)
    /// outside a tokio runtime.
    ///
    /// See the example on [`LeaderSelectorBuilder`].
    pub async fn start(self) -> Result<LeaderSelector> {
        let rt = runtime::current()?;
        let id = self.id.unwrap_or_else(default_id);
        let mutex = InterProcessMutex::builder(self.client.clone(), self.path.clone())
            .data(id.as_bytes())
            .suspend_policy(self.policy)
            .build();
        let joined = mutex.joined();
        let (ctl, ctl_rx) = mpsc::unbounded_channel();
        let status = Derived::new(
            Status {
                queued: true,
                ..Status::default()
            },
            selector_status,
        );
        let selector = LeaderSelector {
            client: self.client.clone(),
            path: self.path,
            id: id.clone(),
            ctl,
            status: status.subscribe(),
            public: status.status(),
        };
        let supervisor = Supervisor {
            client: self.client,
            mutex,
            id,
            task: self.task,
            auto_requeue: self.auto_requeue,
            status,
            ctl: ctl_rx,
            term: 0,
            pauses: Default::default(),
            released: Ok(()),
        };
        rt.spawn(supervisor.run());
        selector.joined(joined).await?;
        Ok(selector)
    }
}
