//! The fair wait, Curator's algorithm: queue up, watch only the one ahead, take the lock when
//! first. Split in steps (one look at the line, setting the watches, waiting on them) so
//! each reads on its own; [`Step`] carries what a step decided to the loop.

use zk_session::{Error, ErrorCode, EventType, OneshotWatch};

use super::{Acquired, InterProcessMutex};
use crate::{
    plumbing::{
        line::{data_watch, look, Turn},
        pending::Pending,
        protected::{child_path, ProtectedNode},
        retry::{may_retry, retry_delay},
    },
    Result,
};

/// How one node's time in line ended.
enum InLine {
    /// The lock (`Some`), or `None` when it is taken and the caller would not wait.
    Done(Option<Acquired>),
    /// Our node is gone: queue again with a new one.
    NodeGone,
}

/// What the waiter does after one look at the one ahead.
enum Step {
    /// We are first (the only one ahead is gone): take the lock.
    Take,
    /// Our node is gone: queue again with a new one.
    NodeGone,
    /// Something changed: list the children again, after a pause when `pause`.
    Relist { pause: bool },
}

/// The watches set by [`InterProcessMutex::watch_ahead`]: the one on the node ahead, or the step to
/// take instead of waiting.
enum Ahead {
    Watching(OneshotWatch),
    Step(Step),
}

impl InterProcessMutex {
    /// Curator's algorithm: queue up, watch the one ahead, take the lock when first.
    pub(super) async fn attempt_fair(
        &self,
        pending: &mut Pending,
        wait: bool,
    ) -> Result<Option<Acquired>> {
        loop {
            let (node, children) = self
                .core
                .create
                .listed(&self.core.client, Some(&pending.claim))
                .await?;
            match self.wait_in_line(node, children, wait).await? {
                InLine::Done(acquired) => return Ok(acquired),
                InLine::NodeGone => {
                    pending.claim.take(); // gone: nothing to delete
                }
            }
        }
    }

    /// Waits with `node` in line until it is first. `children` is the listing taken right
    /// after its create.
    async fn wait_in_line(
        &self,
        node: ProtectedNode,
        mut children: Vec<String>,
        wait: bool,
    ) -> Result<InLine> {
        let core = &self.core;
        // A data watch on our own node, set once we have to wait: it tells us when the node
        // is deleted under us, and carries over to the guard.
        let mut own: Option<OneshotWatch> = None;
        let mut retry = 0;
        loop {
            let (predecessor, holds_when_gone) =
                match look(&core.names, &children, &node.name, &core.rule) {
                    // Our node is gone (the listing comes after our create, on one session).
                    // If the session ended, the next create says so.
                    Turn::Gone => return Ok(InLine::NodeGone),
                    Turn::Holds => {
                        return Ok(InLine::Done(Some(Acquired {
                            node,
                            own_watch: own,
                        })))
                    }
                    Turn::WaitFor {
                        name,
                        holds_when_gone,
                    } => (
                        child_path(&core.path, &name),
                        holds_when_gone && core.rule.trusts_listing(),
                    ),
                };
            if !wait {
                return Ok(InLine::Done(None));
            }
            let step = match self
                .watch_ahead(&node.path, &predecessor, holds_when_gone, &mut own)
                .await?
            {
                Ahead::Watching(ahead) => wait_for_change(&mut own, ahead, holds_when_gone).await?,
                Ahead::Step(step) => step,
            };
            match step {
                Step::Take => {
                    return Ok(InLine::Done(Some(Acquired {
                        node,
                        own_watch: own,
                    })))
                }
                Step::NodeGone => return Ok(InLine::NodeGone),
                Step::Relist { pause } => {
                    if pause {
                        tokio::time::sleep(retry_delay(retry)).await;
                        retry += 1;
                    }
                    children = self.list().await?;
                }
            }
        }
    }

    /// Sets a data watch on the node ahead, and on our own node unless `own` has one.
    /// getData, not exists: on a node already gone it leaves no watch behind.
    async fn watch_ahead(
        &self,
        own_path: &str,
        predecessor: &str,
        holds_when_gone: bool,
        own: &mut Option<OneshotWatch>,
    ) -> Result<Ahead> {
        let client = &self.core.client;
        let (pred, own_set) = if own.is_none() {
            let (p, o) = tokio::join!(
                data_watch(client, predecessor),
                data_watch(client, own_path)
            );
            (p, Some(o))
        } else {
            (data_watch(client, predecessor).await, None)
        };
        match own_set {
            Some(Ok((_, _, w))) => *own = Some(w),
            Some(Err(Error::Code(ErrorCode::NoNode))) => return Ok(Ahead::Step(Step::NodeGone)),
            Some(Err(e)) if !e.is_retryable() => return Err(e.into()),
            // Connection lost: the predecessor's watch failed too; start over below.
            Some(Err(_)) | None => {}
        }
        Ok(match pred {
            Ok((_, _, w)) if own.is_some() => Ahead::Watching(w),
            Ok(_) => Ahead::Step(Step::Relist { pause: true }),
            Err(Error::Code(ErrorCode::NoNode)) if holds_when_gone && own.is_some() => {
                Ahead::Step(Step::Take)
            }
            Err(Error::Code(ErrorCode::NoNode)) => Ahead::Step(Step::Relist { pause: false }),
            Err(e) if e.is_retryable() => Ahead::Step(Step::Relist { pause: true }),
            Err(e) => return Err(e.into()),
        })
    }

    /// Lists the lock path, retrying while the connection is lost. A missing lock path lists
    /// as empty (our node is then gone too).
    async fn list(&self) -> Result<Vec<String>> {
        let client = &self.core.client;
        let mut retry = 0;
        loop {
            match client.get_children(&self.core.path).await {
                Ok(c) => return Ok(c),
                Err(Error::Code(ErrorCode::NoNode)) => return Ok(Vec::new()),
                Err(e) if e.is_retryable() && may_retry(client) => {
                    tokio::time::sleep(retry_delay(retry)).await;
                    retry += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Waits until our own node (watched by `own`, which must be set) or the one ahead changes.
async fn wait_for_change(
    own: &mut Option<OneshotWatch>,
    ahead: OneshotWatch,
    holds_when_gone: bool,
) -> Result<Step> {
    let own_watch = own.as_mut().expect("set before waiting");
    tokio::select! {
        // Our own deletion first: if both fired, the predecessor's going must not make us
        // take a lock without a node.
        biased;
        ev = own_watch => {
            *own = None;
            match ev {
                Ok(ev) if ev.event_type() == EventType::NodeDeleted => Ok(Step::NodeGone),
                Ok(_) => Ok(Step::Relist { pause: false }),
                Err(e) => Err(e.into()),
            }
        }
        ev = ahead => match ev {
            Ok(ev) if ev.event_type() == EventType::NodeDeleted && holds_when_gone => Ok(Step::Take),
            Ok(_) => Ok(Step::Relist { pause: false }),
            Err(e) => Err(e.into()),
        },
    }
}
