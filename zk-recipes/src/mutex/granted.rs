//! A hold granted without waiting in line: the read lock taken by the holder of the write
//! lock (Curator's downgrade). The caller proves the right to it; here the node is made and
//! held with the same cleanup, session and monitoring as any acquire.

use tokio::time::Instant;

use super::{Acquired, InterProcessMutex};
use crate::{
    plumbing::{
        cleanup::Claim, pending::Pending, protected::ProtectedCreate, session_scope::SessionScope,
    },
    InterProcessMutexGuard, RecipeError, Result,
};

impl InterProcessMutex {
    /// Creates a node with `create` (under this lock's path) and holds it at once.
    /// Cancel-safe as [`acquire`](Self::acquire) is: a dropped call leaves no node behind.
    pub(crate) async fn acquire_granted(
        &self,
        create: &ProtectedCreate,
        deadline: Option<Instant>,
    ) -> Result<InterProcessMutexGuard> {
        let core = &self.core;
        let permit = self
            .take_permit(deadline, true)
            .await?
            .ok_or(RecipeError::Timeout)?;
        let mut pending = Pending::new(core.client.clone(), core.path.clone(), Claim::default());
        let made = async {
            let scope = SessionScope::enter(&core.client)
                .await
                .map_err(RecipeError::Lost)?;
            let (node, _) = create.listed(&core.client, Some(&pending.claim)).await?;
            if node.stat.ephemeral_owner != scope.id() {
                return Err(RecipeError::Lost(crate::LostReason::Expired));
            }
            Ok(node)
        }
        .await;
        match made {
            Ok(node) => {
                pending.hand_over();
                let acquired = Acquired {
                    node,
                    own_watch: None,
                };
                Ok(self.hold(acquired, permit))
            }
            Err(e) => {
                pending.remove_now().await;
                Err(e)
            }
        }
    }
}
