//! The fair wait, Curator's algorithm: queue up, watch only the one ahead, take the lock when
//! first. The walk along the line is the recipes' one [`Walk`]; here is what the mutex does
//! with its outcome.

use super::{Acquired, InterProcessMutex};
use crate::{
    plumbing::{
        line::{Moved, Walk},
        pending::Pending,
    },
    Result,
};

impl InterProcessMutex {
    /// Curator's algorithm: queue up, watch the one ahead, take the lock when first.
    pub(super) async fn attempt_fair(
        &self,
        pending: &mut Pending,
        wait: bool,
    ) -> Result<Option<Acquired>> {
        let core = &self.core;
        loop {
            let (node, children) = core
                .create
                .listed(&core.client, Some(&pending.claim))
                .await?;
            let mut walk = Walk::new(&core.client, &core.path, &core.names, &core.rule, &node);
            match walk.until_held(children, wait).await? {
                Moved::Holds => {
                    return Ok(Some(Acquired {
                        node,
                        own_watch: walk.into_own_watch(),
                    }))
                }
                // Taken, and the caller would not wait: `pending` deletes our node.
                Moved::Busy => return Ok(None),
                // Gone (the session, if it ended, says so at the next create): queue again.
                Moved::Gone | Moved::Relist { .. } => {
                    pending.claim.take(); // gone: nothing to delete
                }
            }
        }
    }
}
