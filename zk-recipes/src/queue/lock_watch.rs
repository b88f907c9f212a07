//! The watch on the lock of a held queue item (a lock-safe [`QueueItem`](super::QueueItem), a
//! [`KazooLockedEntry`](super::KazooLockedEntry)): what their `lost()` and `is_held()` read.
//!
//! The lock is an EPHEMERAL znode, so it goes with its session. A task watches the lock node
//! and the session as a mutex guard's monitor does; a connection that drops and comes back
//! within the session does not count (an item is not a lock on a critical section: the
//! server keeps the lock for as long as the session lives), the session presumed lost or
//! expired, the client's end, or the node's deletion does.

use std::sync::{atomic::AtomicBool, Arc};

use tokio::{sync::watch, task::AbortHandle};
use zk_session::Client;

use crate::{
    mutex_guard::monitor::{own_node_gone, session_gone},
    plumbing::liveness::SuspendPolicy,
    LostReason,
};

/// Whether a held item's lock still stands: set once, when it does not.
#[derive(Debug)]
pub(crate) struct LockWatch {
    lost: Arc<watch::Sender<Option<LostReason>>>,
    task: AbortHandle,
}

impl LockWatch {
    /// Starts watching the lock at `path`, made by session `owner`. Inside a tokio runtime.
    pub(crate) fn start(client: &Client, path: String, owner: i64) -> LockWatch {
        let lost = Arc::new(watch::channel(None).0);
        // Subscribed before the task looks at the state, so no change in between goes unseen.
        let events = client.session_events();
        let (client, set) = (client.clone(), lost.clone());
        let task = tokio::spawn(async move {
            let watching = AtomicBool::new(false);
            let reason = tokio::select! {
                r = own_node_gone(&client, &path, None, &watching) => r,
                r = session_gone(&client, owner, events, SuspendPolicy::WaitForLost) => r,
            };
            mark(&set, reason);
        });
        LockWatch {
            lost,
            task: task.abort_handle(),
        }
    }

    /// Marks the hold as given up by its owner (done, consumed or released), so that the
    /// lock's own deletion is not reported as a loss.
    pub(crate) fn mark_released(&self) {
        mark(&self.lost, LostReason::Released);
    }

    /// Why the lock no longer stands, if it does not.
    pub(crate) fn lost_reason(&self) -> Option<LostReason> {
        *self.lost.borrow()
    }

    /// Resolves once the lock no longer stands.
    pub(crate) async fn lost(&self) -> LostReason {
        let mut lost = self.lost.subscribe();
        let reason = match lost.wait_for(Option::is_some).await {
            Ok(r) => r.unwrap_or(LostReason::Closed),
            Err(_) => LostReason::Closed,
        };
        reason
    }
}

impl Drop for LockWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Sets the reason unless one is set: the first reason stays.
fn mark(lost: &watch::Sender<Option<LostReason>>, reason: LostReason) {
    lost.send_if_modified(|r| {
        let first = r.is_none();
        if first {
            *r = Some(reason);
        }
        first
    });
}
