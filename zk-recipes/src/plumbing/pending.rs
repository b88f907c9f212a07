//! The node of an acquire in progress, until the acquire succeeds: deleted when it fails,
//! times out or is dropped. The deletion is owned by a background task from the moment the
//! acquire gives up (see [`cleanup`](super::cleanup)), so a cancelled acquire leaves nothing
//! behind (CURATOR-62, kazoo #732) and a timed-out one returns on time.

use std::time::Duration;

use tokio::runtime::Handle;
use zk_session::Client;

use crate::plumbing::cleanup::{spawn_removal, Claim, Target};

/// How long a failed or timed-out acquire waits for the deletion of its node before
/// returning (the deletion goes on in the background either way): one round trip on a
/// healthy connection, and a bounded overshoot of the caller's deadline on a stalled one.
pub(crate) const CLEANUP_GRACE: Duration = Duration::from_millis(250);

/// The node of an acquire in progress (or the protected id of its create, while that is
/// unanswered): deleted when the acquire fails, and in the background when it is dropped.
pub(crate) struct Pending {
    client: Client,
    parent: String,
    /// What the acquire's creates may have made, shared with the protected create.
    pub(crate) claim: Claim,
    handle: Option<Handle>,
}

impl Pending {
    /// Nothing yet, for an acquire under `parent` whose creates `claim` tracks. Call inside
    /// a tokio runtime.
    pub(crate) fn new(client: Client, parent: String, claim: Claim) -> Self {
        Pending {
            client,
            parent,
            claim,
            handle: Handle::try_current().ok(),
        }
    }

    /// Hands the node over to a background deletion at once, then waits up to
    /// [`CLEANUP_GRACE`] for it, so that a caller who looks right after usually finds it
    /// gone. Cancel-safe: the deletion is owned by the task before the first await.
    pub(crate) async fn remove_now(&mut self) {
        let removal = self.spawn(self.claim.take());
        let _ = removal.wait(CLEANUP_GRACE).await;
    }

    /// The acquire succeeded: the node is the holder's.
    pub(crate) fn hand_over(&self) -> Target {
        self.claim.take()
    }

    fn spawn(&self, target: Target) -> crate::plumbing::cleanup::Removal {
        spawn_removal(
            self.handle.as_ref(),
            self.client.clone(),
            self.parent.clone(),
            target,
        )
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let _ = self.spawn(self.claim.take());
    }
}
