//! The unfair wait: no place in the queue; every waiter watches the holder and, when it
//! goes, competes again after a random pause.

use std::time::Duration;

use super::{Acquired, InterProcessMutex};
use crate::{
    plumbing::{
        line::{look, until_changed, Turn, WatchHolder},
        pending::Pending,
        protected::child_path,
        retry::Pauses,
    },
    Result,
};

/// The largest random pause of an unfair waiter before it competes again.
const UNFAIR_JITTER_MS: u64 = 20;

impl InterProcessMutex {
    /// Random order: compete, and when another holds the lock, step out of the queue and
    /// watch the holder.
    pub(super) async fn attempt_unfair(
        &self,
        pending: &mut Pending,
        wait: bool,
    ) -> Result<Option<Acquired>> {
        let core = &self.core;
        let client = &core.client;
        let mut pauses = Pauses::default();
        loop {
            let (node, children) = core.create.listed(client, Some(&pending.claim)).await?;
            let holder = match look(&core.names, &children, &node.name, &WatchHolder) {
                Turn::Holds => {
                    return Ok(Some(Acquired {
                        node,
                        own_watch: None,
                    }))
                }
                Turn::Gone => {
                    pending.claim.take(); // gone: nothing to delete
                    continue;
                }
                Turn::WaitFor { name, .. } => child_path(&core.path, &name),
            };
            pending.remove_now().await;
            if !wait {
                return Ok(None);
            }
            // Whatever happens to the holder's node, compete again.
            let pause = match until_changed(client, &holder).await {
                // The session answered: a later failure starts from the shortest pause.
                Ok(()) => {
                    pauses.reset();
                    Duration::ZERO
                }
                Err(e) if e.is_retryable() => pauses.next_delay(),
                Err(e) => return Err(e.into()),
            };
            let jitter = Duration::from_millis(rand::random_range(0..=UNFAIR_JITTER_MS));
            tokio::time::sleep(pause + jitter).await;
        }
    }
}
