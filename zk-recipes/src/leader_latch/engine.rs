//! The engine behind [`LeaderLatch`](crate::leader_latch::LeaderLatch): one background task
//! per participant that keeps its node in line, watches its predecessor, and claims or drops
//! leadership as the line and the connection change.
//!
//! Every wait of the task also listens to the session state and to the close command, so
//! leadership is dropped the moment the connection is suspended (policy permitting) or lost,
//! even while a request is outstanding. When the session expires and the client goes on with
//! a new one, the task forgets its node (gone with the old session) and takes part again on
//! the new session; it ends only when the client does.

use std::future::Future;

use tokio::sync::{broadcast, mpsc, oneshot, watch};
use zk_session::{Client, Error, ErrorCode, SessionState, StateWatch};

use crate::plumbing::liveness::raw_session_id;
use crate::{
    contender::ContenderNames,
    participant::delete_quietly,
    plumbing::{
        line::{Exclusive, Moved, Turn, Walk},
        liveness::{session_gone, Candidacy, Liveness, SuspendPolicy},
        protected::{ProtectedCreate, ProtectedNode},
        retry::Pauses,
    },
    value_watch::Derived,
    LatchStatus, LostReason, RecipeError, Result,
};

/// A change of leadership, from a latch's change stream.
///
/// ```
/// use zk_recipes::LeadershipEvent;
/// assert_ne!(LeadershipEvent::IsLeader, LeadershipEvent::NotLeader);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LeadershipEvent {
    /// This participant became the leader.
    IsLeader,
    /// This participant is no longer the leader.
    NotLeader,
}

/// The engine's published state.
#[derive(Debug, Clone, Default)]
pub(crate) struct Status {
    pub leader: bool,
    /// Our node's path while we have one.
    pub node: Option<String>,
    /// Counts the nodes created (or adopted), so `start` can wait for the first.
    pub joins: u64,
    /// Why the engine stopped, once it has.
    pub ended: Option<RecipeError>,
}

/// Step down (telling the change stream if `notify`), delete our node, stop.
pub(crate) struct Close {
    pub notify: bool,
    /// How the deletion of our node went.
    pub reply: oneshot::Sender<Result<()>>,
}

/// What the engine is for.
pub(crate) struct Config {
    pub client: Client,
    pub dir: String,
    /// The text between the protected prefix and the sequence (`latch-`).
    pub name: &'static str,
    pub id: String,
    pub policy: SuspendPolicy,
}

/// The caller's side of a running engine.
#[derive(Debug)]
pub(crate) struct Handle {
    cmds: mpsc::UnboundedSender<Close>,
    pub status: watch::Receiver<Status>,
    /// The public status, derived from `status`.
    pub public: watch::Receiver<LatchStatus>,
    pub events: broadcast::Sender<LeadershipEvent>,
}

impl Handle {
    /// Asks the engine to close and waits until it has (or is gone): how the deletion of
    /// our node went.
    pub async fn close(&self, notify: bool) -> Result<()> {
        let (reply, rx) = oneshot::channel();
        if self.cmds.send(Close { notify, reply }).is_err() {
            return Ok(());
        }
        rx.await.unwrap_or(Ok(()))
    }

    /// Waits until the first node exists; the engine's error if it ended first.
    pub async fn joined(&self) -> Result<()> {
        let mut rx = self.status.clone();
        loop {
            {
                let s = rx.borrow_and_update();
                if s.joins > 0 {
                    return Ok(());
                }
                if let Some(e) = &s.ended {
                    return Err(e.clone());
                }
            }
            rx.changed().await.map_err(|_| RecipeError::Closed)?;
        }
    }
}

/// Starts the engine on `rt`; it takes part at once.
pub(crate) fn spawn(rt: &tokio::runtime::Handle, cfg: Config) -> Handle {
    let (cmds_tx, cmds) = mpsc::unbounded_channel();
    let status_tx = Derived::new(Status::default(), latch_status);
    let (status, public) = (status_tx.subscribe(), status_tx.status());
    let (events, _) = broadcast::channel(64);
    let inputs = Inputs {
        state: cfg.client.watch_state(),
        cmds,
    };
    let create = ProtectedCreate::new(cfg.dir.clone(), cfg.name).data(cfg.id.as_bytes());
    let engine = Engine {
        cfg,
        create,
        status: status_tx,
        events: events.clone(),
        node: None,
        pauses: Pauses::default(),
    };
    rt.spawn(engine.run(inputs));
    Handle {
        cmds: cmds_tx,
        status,
        public,
        events,
    }
}

struct Inputs {
    state: StateWatch,
    cmds: mpsc::UnboundedReceiver<Close>,
}

/// Why a wait was cut short.
enum Stop {
    /// The session state changed: look again.
    State,
    Close(Close),
    /// Every handle is gone: close silently.
    Orphaned,
    /// The engine cannot go on.
    End(RecipeError),
}

impl From<RecipeError> for Stop {
    fn from(e: RecipeError) -> Self {
        Stop::End(e)
    }
}

/// Runs `fut` unless the session state changes or a command arrives first. Dropping `fut`
/// is safe for everything the engine runs: a protected create that is cut short removes
/// its node in the background, and a dropped watch is removed from the server.
async fn guard<T>(inp: &mut Inputs, fut: impl Future<Output = T>) -> Result<T, Stop> {
    tokio::select! {
        biased;
        r = inp.state.changed() => Err(match r {
            Ok(_) => Stop::State,
            Err(_) => Stop::End(RecipeError::Lost(LostReason::Closed)),
        }),
        c = inp.cmds.recv() => Err(c.map_or(Stop::Orphaned, Stop::Close)),
        v = fut => Ok(v),
    }
}

struct Engine {
    cfg: Config,
    create: ProtectedCreate,
    status: Derived<Status, LatchStatus>,
    events: broadcast::Sender<LeadershipEvent>,
    node: Option<ProtectedNode>,
    /// The backoff over retryable errors in a row.
    pauses: Pauses,
}

impl Engine {
    async fn run(mut self, mut inp: Inputs) {
        let end = loop {
            match self.step(&mut inp).await {
                Ok(()) | Err(Stop::State) => {}
                Err(Stop::Close(Close { notify, reply })) => {
                    let left = self.leave(&mut inp, notify).await;
                    // Published before the reply, so `close` returns to a settled status.
                    self.status
                        .send_modify(|s| s.ended = Some(RecipeError::Closed));
                    let _ = reply.send(left);
                    return;
                }
                Err(Stop::Orphaned) => {
                    let _ = self.leave(&mut inp, false).await;
                    break RecipeError::Closed;
                }
                Err(Stop::End(e)) => break e,
            }
        };
        self.set_leader(false, true);
        self.node = None;
        self.status.send_modify(|s| {
            s.node = None;
            s.ended = Some(end);
        });
    }

    fn set_leader(&mut self, leader: bool, notify: bool) {
        let changed = self.status.send_if_modified(|s| {
            let changed = s.leader != leader;
            s.leader = leader;
            changed
        });
        if changed && notify {
            let _ = self.events.send(if leader {
                LeadershipEvent::IsLeader
            } else {
                LeadershipEvent::NotLeader
            });
        }
    }

    /// Forgets our node (it is gone, or not ours): not leader any more, and queue again.
    fn drop_node(&mut self) {
        self.set_leader(false, true);
        self.node = None;
        self.status.send_modify(|s| s.node = None);
    }

    /// Applies the session state; true when requests can go ahead.
    fn apply_state(&mut self, state: SessionState) -> Result<bool> {
        let now = Liveness::seen(&self.cfg.client, state);
        match now.candidacy(self.cfg.policy) {
            Candidacy::Go => Ok(true),
            Candidacy::Wait => Ok(false),
            Candidacy::StepDown => {
                self.set_leader(false, true);
                Ok(false)
            }
            // Our node went with the old session: take part again once the new one is there.
            Candidacy::Forget => {
                if self.node.is_some() {
                    self.drop_node();
                }
                self.set_leader(false, true);
                Ok(false)
            }
            Candidacy::End(reason) => Err(RecipeError::Lost(reason)),
        }
    }

    /// Turns an operation's error into a pause-and-retry or the engine's end.
    async fn on_error(&mut self, inp: &mut Inputs, e: Error) -> Result<(), Stop> {
        if !(e.is_retryable() || e.code() == Some(ErrorCode::SessionExpired)) {
            return Err(Stop::End(e.into()));
        }
        // The state change that usually follows ends the pause early.
        let pause = self.pauses.next_delay();
        guard(inp, tokio::time::sleep(pause)).await
    }

    /// One look at the line, then one wait: for the predecessor, for our own node while
    /// leader, or for the connection.
    async fn step(&mut self, inp: &mut Inputs) -> Result<(), Stop> {
        let state = inp.state.get_and_update();
        if !self.apply_state(state)? {
            return guard(inp, std::future::pending::<()>()).await;
        }
        let client = self.cfg.client.clone();
        let Some((node, children)) = self.node_and_line(inp, &client).await? else {
            return Ok(());
        };
        self.pauses.reset();
        // A node of an earlier session is not ours any more, whatever its name says.
        if node.stat.ephemeral_owner != raw_session_id(&client) {
            return self.forget_stale(inp, &client, &node).await;
        }
        // The recipes' one walk of a line: look, then wait for the node ahead or our own.
        let (dir, names) = (self.cfg.dir.clone(), ContenderNames::new());
        let mut walk = Walk::new(&client, &dir, &names, &Exclusive, &node);
        let moved = match walk.look(&children) {
            Turn::Holds => Moved::Holds,
            Turn::Gone => Moved::Gone,
            turn => {
                // Not first in line: not leader while we wait.
                self.set_leader(false, true);
                match guard(inp, walk.wait(turn)).await? {
                    Ok(moved) => moved,
                    Err(e) => return self.on_error(inp, e).await,
                }
            }
        };
        match moved {
            Moved::Holds => self.lead(inp, &client, &node).await,
            // Deleted under us (by someone else, or with an earlier session): queue again.
            Moved::Gone => {
                self.drop_node();
                Ok(())
            }
            Moved::Relist { after_error: true } => {
                self.on_error(inp, Error::Code(ErrorCode::ConnectionLoss))
                    .await
            }
            // Something changed: the next step lists again.
            _ => Ok(()),
        }
    }

    /// Our node and the line: creates the node (listing in the same round trip) when we
    /// have none, lists the line otherwise. `None` after an error, once paused for it.
    async fn node_and_line(
        &mut self,
        inp: &mut Inputs,
        client: &Client,
    ) -> Result<Option<(ProtectedNode, Vec<String>)>, Stop> {
        let listed = match self.node.clone() {
            None => match guard(inp, self.create.listed(client, None)).await? {
                Ok((node, children)) => {
                    self.status.send_modify(|s| {
                        s.node = Some(node.path.clone());
                        s.joins += 1;
                    });
                    self.node = Some(node.clone());
                    Ok((node, children))
                }
                Err(e) => Err(e),
            },
            Some(node) => match guard(inp, client.get_children(&self.cfg.dir)).await? {
                Ok(c) => Ok((node, c)),
                Err(Error::Code(ErrorCode::NoNode)) => Ok((node, Vec::new())),
                Err(e) => Err(e),
            },
        };
        match listed {
            Ok(found) => Ok(Some(found)),
            Err(e) => self.on_error(inp, e).await.map(|()| None),
        }
    }

    /// Forgets a node of an earlier session and deletes it, unless it went with its session.
    async fn forget_stale(
        &mut self,
        inp: &mut Inputs,
        client: &Client,
        node: &ProtectedNode,
    ) -> Result<(), Stop> {
        self.drop_node();
        // Gone with its session (the client has moved on to a new one): nothing to delete.
        if session_gone(client, node.stat.ephemeral_owner) {
            return Ok(());
        }
        match guard(inp, delete_quietly(client, &node.path)).await? {
            Ok(()) => Ok(()),
            Err(RecipeError::Session(e)) => self.on_error(inp, e).await,
            Err(e) => Err(Stop::End(e)),
        }
    }

    /// First in line. Claims only after checking, on the server, that the node is there
    /// and belongs to the session we have now (CURATOR-696), and keeps a watch on it: its
    /// deletion ends our term.
    async fn lead(
        &mut self,
        inp: &mut Inputs,
        client: &Client,
        node: &ProtectedNode,
    ) -> Result<(), Stop> {
        let (stat, watch) = match guard(inp, client.get_data_watch(&node.path)).await? {
            Ok((_, stat, w)) => (stat, w),
            Err(Error::Code(ErrorCode::NoNode)) => {
                self.drop_node();
                return Ok(());
            }
            Err(e) => return self.on_error(inp, e).await,
        };
        if stat.ephemeral_owner != raw_session_id(client) {
            self.drop_node();
            return Ok(());
        }
        // The state may have changed while the reply was on its way; `guard` sees that next.
        if Liveness::seen(client, inp.state.get()) == Liveness::Serving {
            self.set_leader(true, true);
        }
        let _ = guard(inp, watch).await?;
        Ok(())
    }

    /// Steps down, then deletes our node, retrying until it is gone or the session is; the
    /// server's refusal of the deletion, if it refused.
    async fn leave(&mut self, inp: &mut Inputs, notify: bool) -> Result<()> {
        // Before the delete: nobody else can lead while our node exists, so we must stop
        // claiming first.
        self.set_leader(false, notify);
        let client = self.cfg.client.clone();
        let mut pauses = Pauses::default();
        let mut left = Ok(());
        while let Some(node) = self.node.clone() {
            let now = Liveness::seen(&client, inp.state.get_and_update());
            if now.session_over() {
                // The session is over, and its ephemeral nodes with it.
                break;
            }
            if now == Liveness::Serving {
                match delete_quietly(&client, &node.path).await {
                    Ok(()) => break,
                    Err(RecipeError::Session(e)) if e.is_retryable() => {
                        pauses.pause().await;
                        continue;
                    }
                    // Nothing more we can do (e.g. no permission): the session's end will.
                    Err(e) => {
                        left = Err(e);
                        break;
                    }
                }
            }
            if inp.state.changed().await.is_err() {
                break;
            }
        }
        self.node = None;
        self.status.send_modify(|s| s.node = None);
        left
    }
}

/// The public status of a latch in the engine's `state`.
fn latch_status(state: &Status) -> LatchStatus {
    match &state.ended {
        Some(RecipeError::Closed) => LatchStatus::Closed,
        Some(e) => LatchStatus::Ended(e.clone()),
        None if state.leader => LatchStatus::Leader,
        None => LatchStatus::InLine,
    }
}
