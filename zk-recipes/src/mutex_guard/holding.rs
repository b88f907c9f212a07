//! [`Holding`]: one acquisition of the lock node (or of a semaphore's lease node), with the
//! task that watches it and the release that deletes it. The guards of one handle share it; its end is the lock's end.

use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex as StdMutex,
    },
    time::Duration,
};

use tokio::{
    runtime::Handle,
    sync::{watch, OwnedMutexGuard},
    task::{AbortHandle, JoinHandle},
};
use zk_session::{Client, ErrorCode, OneshotWatch, Op, OpResult};

use super::{
    monitor::{own_node_gone, session_gone},
    LostReason,
};
use crate::{
    plumbing::{
        cleanup::{spawn_removal, Removal, Target},
        fence::{self, Refused},
        liveness::{Liveness, SuspendPolicy},
        protected::ProtectedNode,
    },
    RecipeError, Result,
};

/// How long a release waits, after deleting the node, for the monitor to see the deletion
/// through its watch (normally at once: the event comes before the delete's reply).
const MONITOR_WIND_DOWN: Duration = Duration::from_millis(100);

/// One acquisition of the lock node, shared by the re-entrant guards of one mutex handle.
#[derive(Debug)]
pub(crate) struct Holding {
    client: Client,
    parent: String,
    node: ProtectedNode,
    lost: Arc<watch::Sender<Option<LostReason>>>,
    monitor: AbortHandle,
    /// The monitor task, for a release to let it end on its own.
    monitor_task: StdMutex<Option<JoinHandle<()>>>,
    /// True while the monitor holds a data watch on the node.
    watching: Arc<AtomicBool>,
    handle: Handle,
}

impl Holding {
    /// Starts watching the session and the node. `own_watch` is a data watch on the node
    /// already set while waiting, if any. Must be called inside a tokio runtime.
    pub(crate) fn start(
        client: Client,
        parent: String,
        node: ProtectedNode,
        own_watch: Option<OneshotWatch>,
        policy: SuspendPolicy,
    ) -> Arc<Holding> {
        let handle = Handle::current();
        let lost = Arc::new(watch::channel(None).0);
        // Subscribed before the monitor looks at the current state, so no change in between
        // goes unseen.
        let events = client.session_events();
        let watching = Arc::new(AtomicBool::new(own_watch.is_some()));
        let task = {
            let (client, path, lost) = (client.clone(), node.path.clone(), lost.clone());
            let watching = watching.clone();
            let owner = node.stat.ephemeral_owner;
            handle.spawn(async move {
                let reason = tokio::select! {
                    r = own_node_gone(&client, &path, own_watch, &watching) => r,
                    r = session_gone(&client, owner, events, policy) => r,
                };
                mark(&lost, reason);
            })
        };
        Arc::new(Holding {
            client,
            parent,
            node,
            lost,
            monitor: task.abort_handle(),
            monitor_task: StdMutex::new(Some(task)),
            watching,
            handle,
        })
    }

    /// Marks the holding as given up before its node goes by another way than [`finish`]
    /// (a barrier member deletes its own node while it leaves), so that the deletion is not
    /// reported as a loss.
    ///
    /// [`finish`]: Self::finish
    pub(crate) fn mark_released(&self) {
        mark(&self.lost, LostReason::Released);
    }

    pub(crate) fn lost_reason(&self) -> Option<LostReason> {
        *self.lost.borrow()
    }

    pub(crate) fn path(&self) -> &str {
        &self.node.path
    }

    /// The zxid that created the lock node; see
    /// [`InterProcessMutexGuard::fencing_token`](super::InterProcessMutexGuard::fencing_token).
    pub(crate) fn fencing_token(&self) -> u64 {
        self.node.stat.czxid as u64
    }

    /// The lost reason as it changes; `None` until the lock can no longer be trusted.
    pub(super) fn subscribe_lost(&self) -> watch::Receiver<Option<LostReason>> {
        self.lost.subscribe()
    }

    /// Resolves with the lost reason once there is one (a semaphore's lease waits on this;
    /// a guard also waits for its own hold to go).
    pub(crate) async fn lost(&self) -> LostReason {
        let mut lost = self.lost.subscribe();
        // The sender cannot close while `self` is borrowed; the reason, once set, stays.
        let reason = match lost.wait_for(Option::is_some).await {
            Ok(r) => r.unwrap_or(LostReason::Closed),
            Err(_) => LostReason::Closed,
        };
        reason
    }

    /// Runs `ops` behind a check that the node still exists (see
    /// [`InterProcessMutexGuard::fenced_multi`](super::InterProcessMutexGuard::fenced_multi));
    /// refused at once, without sending, when the holding is already known to be lost.
    pub(crate) async fn fenced_multi(
        &self,
        ops: impl IntoIterator<Item = Op>,
    ) -> Result<Vec<OpResult>> {
        if let Some(r) = self.lost_reason() {
            return Err(refusal(r));
        }
        match fence::checked_multi(&self.client, self.path(), ops).await {
            Ok(results) => Ok(results),
            Err(Refused::Fence(code)) => {
                if code == ErrorCode::NoNode {
                    self.mark_lost(LostReason::NodeDeleted);
                }
                Err(RecipeError::Lost(LostReason::NodeDeleted))
            }
            Err(Refused::Op(e)) => Err(RecipeError::Session(e)),
        }
    }

    /// Records why the lock can no longer be trusted, unless a reason is known already.
    pub(super) fn mark_lost(&self, reason: LostReason) {
        mark(&self.lost, reason);
    }

    /// Deletes the node, lets the handle's `permit` go and stops the monitor. The deletion is
    /// handed to a background task before the first await, which retries until the node or
    /// the session is gone, so dropping this future half-way leaves nothing behind; when
    /// connected, this waits for the task's first answer (up to the session timeout) to
    /// report a refusal.
    ///
    /// A monitor that holds a data watch on the node is left to see the deletion and end on
    /// its own: stopping it first would drop the watch before it delivered its event, which
    /// costs a removeWatches request besides the delete. It cannot report the deletion
    /// as a loss: `Released` is marked first, and the first reason wins. A monitor without a
    /// watch yet is stopped before the delete, so that it does not set one.
    pub(crate) async fn finish(&self, permit: Option<OwnedMutexGuard<()>>) -> Result<()> {
        mark(&self.lost, LostReason::Released);
        let watching = self.watching.load(Ordering::Acquire);
        if !watching {
            self.monitor.abort();
        }
        let removal = self.spawn_removal();
        // The deletion is owned by its task now: another task of this handle may go ahead.
        drop(permit);
        if !Liveness::now(&self.client).connected() {
            self.monitor.abort();
            return Ok(());
        }
        let deleted = removal.wait(self.client.negotiated_timeout()).await;
        if watching && deleted.is_ok() {
            self.wind_down().await;
        }
        self.monitor.abort();
        deleted.map_err(RecipeError::from)
    }

    fn spawn_removal(&self) -> Removal {
        spawn_removal(
            Some(&self.handle),
            self.client.clone(),
            self.parent.clone(),
            Target::node(&self.node),
        )
    }

    /// Waits a little for the monitor to end on its own, once the node is gone.
    async fn wind_down(&self) {
        let task = self
            .monitor_task
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(MONITOR_WIND_DOWN, task).await;
        }
    }

    /// [`finish`](Self::finish) without waiting, for `Drop`.
    pub(crate) fn finish_in_background(&self) {
        self.monitor.abort();
        mark(&self.lost, LostReason::Released);
        let _ = self.spawn_removal();
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        self.monitor.abort();
    }
}

/// What a fenced write gets when the hold is known to be over: `NotHeld` once released, else
/// why it was lost.
pub(crate) fn refusal(reason: LostReason) -> RecipeError {
    match reason {
        LostReason::Released => RecipeError::NotHeld,
        r => RecipeError::Lost(r),
    }
}

/// The first reason wins; later ones do not overwrite it.
fn mark(lost: &watch::Sender<Option<LostReason>>, reason: LostReason) {
    lost.send_if_modified(|v| {
        if v.is_none() {
            *v = Some(reason);
            true
        } else {
            false
        }
    });
}

/// The `path`, `is_held`, `lost_reason` and `lost` of a hold kept by a `holding:
/// Arc<Holding>` field (a semaphore lease, a barrier member), each with the rustdoc written
/// before its name, so every such hold answers alike while documenting itself in its words.
/// The caller has `LostReason` in scope.
macro_rules! holding_views {
    (
        $(#[$path_doc:meta])* path;
        $(#[$held_doc:meta])* is_held;
        $(#[$reason_doc:meta])* lost_reason;
        $(#[$lost_doc:meta])* lost;
    ) => {
        $(#[$path_doc])*
        pub fn path(&self) -> &str {
            self.holding.path()
        }

        $(#[$held_doc])*
        pub fn is_held(&self) -> bool {
            self.holding.lost_reason().is_none()
        }

        $(#[$reason_doc])*
        pub fn lost_reason(&self) -> Option<LostReason> {
            self.holding.lost_reason()
        }

        $(#[$lost_doc])*
        pub async fn lost(&self) -> LostReason {
            self.holding.lost().await
        }
    };
}
pub(crate) use holding_views;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_reason_wins() {
        let tx = watch::channel(None).0;
        mark(&tx, LostReason::Suspended);
        mark(&tx, LostReason::Expired);
        assert_eq!(*tx.borrow(), Some(LostReason::Suspended));
        assert_eq!(LostReason::NodeDeleted.to_string(), "its node was deleted");
    }
}
