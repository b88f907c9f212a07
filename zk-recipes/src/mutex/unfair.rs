//! The unfair wait: no place in the queue; every waiter watches the holder and, when it
//! goes, competes again after a random pause.

use std::time::Duration;

use zk_session::{Error, ErrorCode};

use super::{Acquired, Mutex};
use crate::{
    pending::{data_watch, Pending},
    protected::child_path,
    Result, RETRY_BACKOFF,
};

/// The largest random pause of an unfair waiter before it competes again.
const UNFAIR_JITTER_MS: u64 = 20;

impl Mutex {
    /// Random order: compete, and when another holds the lock, step out of the queue and
    /// watch the holder.
    pub(super) async fn attempt_unfair(
        &self,
        pending: &mut Pending,
        wait: bool,
    ) -> Result<Option<Acquired>> {
        let core = &self.core;
        let client = &core.client;
        let mut retry = 0;
        loop {
            let (node, children) = core
                .create
                .create_and_list_tracked(client, &pending.claim)
                .await?;
            let order = core.names.sorted(&children);
            match order.iter().position(|c| c.name() == node.name) {
                Some(0) => {
                    return Ok(Some(Acquired {
                        node,
                        own_watch: None,
                    }))
                }
                None => {
                    pending.claim.take(); // gone: nothing to delete
                    continue;
                }
                Some(_) => {}
            }
            let holder = child_path(&core.path, order[0].name());
            pending.remove_now().await;
            if !wait {
                return Ok(None);
            }
            match data_watch(client, &holder).await {
                // Whatever happens to the holder's node, compete again.
                Ok((_, _, w)) => {
                    w.await?;
                }
                Err(Error::Code(ErrorCode::NoNode)) => {}
                Err(e) if e.is_retryable() => {
                    tokio::time::sleep(RETRY_BACKOFF.delay(retry)).await;
                    retry += 1;
                }
                Err(e) => return Err(e.into()),
            }
            let pause = rand::random_range(0..=UNFAIR_JITTER_MS);
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
    }
}
