//! The [`Supervisor`]: the background task of one selector. It queues on the mutex, checks
//! the node is the current session's, runs the leader's task for a term, and answers the
//! handle's commands (requeue, interrupt, close) throughout.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch};
use zk_session::{Client, ErrorCode};

use super::{Ctl, Leadership, Status, TaskFn};
use crate::plumbing::liveness::raw_session_id;
use crate::value_watch::Derived;
use crate::{
    mutex::InterProcessMutex,
    plumbing::{liveness::Liveness, retry::Pauses},
    InterProcessMutexGuard, LostReason, RecipeError,
};

/// The background task of one selector.
pub(super) struct Supervisor {
    pub(super) client: Client,
    pub(super) mutex: InterProcessMutex,
    pub(super) id: String,
    pub(super) task: Arc<TaskFn>,
    pub(super) auto_requeue: bool,
    pub(super) status: Derived<Status, super::SelectorStatus>,
    pub(super) ctl: mpsc::UnboundedReceiver<Ctl>,
    pub(super) term: u64,
    /// The backoff over failed acquires in a row.
    pub(super) pauses: Pauses,
    /// How the last term's node release went, for a close that ended it.
    pub(super) released: crate::Result<()>,
}

/// How a term ended.
enum TermEnd {
    Returned,
    Lost(LostReason),
    Interrupted,
    Close(Option<oneshot::Sender<crate::Result<()>>>),
}

impl TermEnd {
    /// Why the term ended, as its [`Leadership`] tells it.
    fn reason(&self) -> LostReason {
        match self {
            TermEnd::Returned => LostReason::Released,
            TermEnd::Lost(r) => *r,
            TermEnd::Interrupted => LostReason::Interrupted,
            TermEnd::Close(_) => LostReason::Closed,
        }
    }
}

/// Why the selector ends, and the close call waiting to hear it, if any.
struct Stop {
    reason: RecipeError,
    reply: Option<oneshot::Sender<crate::Result<()>>>,
}

impl Stop {
    fn closed(reply: Option<oneshot::Sender<crate::Result<()>>>) -> Stop {
        Stop {
            reason: RecipeError::Closed,
            reply,
        }
    }

    fn ended(reason: RecipeError) -> Stop {
        Stop {
            reason,
            reply: None,
        }
    }
}

impl Supervisor {
    pub(super) async fn run(mut self) {
        let stop = loop {
            let turn = if self.status.borrow().queued {
                self.take_turn().await
            } else {
                self.wait_for_requeue().await
            };
            if let Err(stop) = turn {
                break stop;
            }
        };
        self.status.send_modify(|s| {
            s.leading = false;
            s.queued = false;
            s.ended = Some(stop.reason);
        });
        if let Some(r) = stop.reply {
            let _ = r.send(std::mem::replace(&mut self.released, Ok(())));
        }
    }

    /// Out of line: waits for a command.
    async fn wait_for_requeue(&mut self) -> Result<(), Stop> {
        match self.ctl.recv().await {
            Some(Ctl::Requeue) => self.status.send_modify(|s| s.queued = true),
            Some(Ctl::Interrupt) => {}
            Some(Ctl::Close(r)) => return Err(Stop::closed(Some(r))),
            None => return Err(Stop::closed(None)),
        }
        Ok(())
    }

    /// In line: waits for the mutex, then leads for one term.
    async fn take_turn(&mut self) -> Result<(), Stop> {
        let guard = match self.acquire().await? {
            Ok(g) => g,
            Err(e) => return self.after_failed_acquire(e).await,
        };
        self.pauses.reset();
        if !self.on_current_session(&guard).await {
            let _ = guard.release().await;
            return Ok(());
        }
        match self.lead(guard).await {
            TermEnd::Close(r) => Err(Stop::closed(r)),
            // The client is over for good: no point queueing with it. (After an expiry
            // with a new session to follow, the term ends like any other.)
            TermEnd::Lost(
                r @ (LostReason::Expired | LostReason::Closed | LostReason::AuthFailed),
            ) if Liveness::now(&self.client).ended().is_some() => {
                Err(Stop::ended(RecipeError::Lost(r)))
            }
            TermEnd::Returned | TermEnd::Interrupted | TermEnd::Lost(_) => {
                let requeue = self.auto_requeue;
                self.status.send_modify(|s| s.queued = requeue);
                Ok(())
            }
        }
    }

    /// Waits for the mutex, answering commands meanwhile; a close ends the wait.
    async fn acquire(&mut self) -> Result<crate::Result<InterProcessMutexGuard>, Stop> {
        // Kept across commands: dropping it would give up our place in line.
        let acquire = self.mutex.acquire();
        tokio::pin!(acquire);
        loop {
            tokio::select! {
                r = &mut acquire => return Ok(r),
                c = self.ctl.recv() => match c {
                    Some(Ctl::Close(r)) => return Err(Stop::closed(Some(r))),
                    None => return Err(Stop::closed(None)),
                    Some(Ctl::Requeue | Ctl::Interrupt) => {}
                },
            }
        }
    }

    /// Ends the selector when the failure is for good; otherwise pauses before queueing again.
    async fn after_failed_acquire(&mut self, e: RecipeError) -> Result<(), Stop> {
        // Over for good; an expiry the client recovers from is not: the next acquire runs
        // on the new session.
        if let Some(reason) = Liveness::now(&self.client).ended() {
            return Err(Stop::ended(RecipeError::Lost(reason)));
        }
        match e {
            RecipeError::Session(s)
                if !s.is_retryable() && s.code() != Some(ErrorCode::SessionExpired) =>
            {
                return Err(Stop::ended(RecipeError::Session(s)))
            }
            _ => self.pauses.pause().await,
        }
        Ok(())
    }

    /// Never lead on a node that is not the current session's (CURATOR-696): read it back
    /// before the term starts. Anything doubtful means queueing again.
    async fn on_current_session(&self, guard: &InterProcessMutexGuard) -> bool {
        tokio::select! {
            r = self.client.exists(guard.path()) => {
                matches!(r, Ok(Some(stat)) if stat.ephemeral_owner == raw_session_id(&self.client))
            }
            _ = guard.lost() => false,
        }
    }

    /// One term: runs the task until it returns, the lock is lost, or a command ends it.
    async fn lead(&mut self, guard: InterProcessMutexGuard) -> TermEnd {
        self.term += 1;
        let (ended_tx, ended) = watch::channel(None);
        let leadership = Leadership {
            client: self.client.clone(),
            id: self.id.clone(),
            node: guard.path().to_owned(),
            term: self.term,
            fencing_token: guard.fencing_token(),
            ended,
        };
        self.status.send_modify(|s| {
            s.leading = true;
            s.queued = false;
        });
        // Spawned, so a panic in the task ends the term instead of the selector.
        let mut job = tokio::spawn((self.task)(leadership));
        let mut returned = false;
        let end = loop {
            tokio::select! {
                _ = &mut job => {
                    returned = true;
                    break TermEnd::Returned;
                }
                reason = guard.lost() => break TermEnd::Lost(reason),
                c = self.ctl.recv() => match c {
                    Some(Ctl::Interrupt) => break TermEnd::Interrupted,
                    Some(Ctl::Close(r)) => break TermEnd::Close(Some(r)),
                    None => break TermEnd::Close(None),
                    Some(Ctl::Requeue) => {}
                },
            }
        };
        if !returned {
            job.abort();
            // Wait until the task is really dropped: only then may the node go and someone
            // else lead.
            let _ = job.await;
        }
        // The flag first: whoever hears that the term ended must not still see it leading.
        self.status.send_modify(|s| s.leading = false);
        let _ = ended_tx.send(Some(end.reason()));
        // A failed delete is retried in the background until the node or the session is gone.
        self.released = guard.release().await;
        end
    }
}
