//! The partitioner's engine: the task that keeps this member in the party, settles, takes
//! the locks of its slice, and releases them. One task owns every node the member makes,
//! so whatever ends it (close, the handle's drop, a dropped start) ends in its cleanup.

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use tokio::sync::{oneshot, watch};
use zk_session::{Client, CreateOptions, Error, ErrorCode, OneshotWatch, Version};

use super::decision::{lock_turn, partition, uuid_hex, Happening, LockTurn, Phase, LOCK_MARKER};
use super::{PartitionStatus, ReleaseMode};
use crate::{
    plumbing::{
        liveness::{client_ended, why_ended, Liveness},
        protected::{child_path, create_parents},
        retry::{retrying, Pauses},
        session_scope::SessionScope,
        watches::{children_watch, exists_watch},
    },
    RecipeError, Result,
};

/// What the engine is given.
#[derive(Debug)]
pub(crate) struct Config {
    pub(crate) client: Client,
    pub(crate) path: String,
    pub(crate) items: Vec<String>,
    pub(crate) identifier: String,
    pub(crate) time_boundary: Duration,
    pub(crate) release: ReleaseMode,
}

/// The ends of the channels between the handle and the engine.
pub(crate) struct Wires {
    pub(crate) status: Arc<watch::Sender<PartitionStatus>>,
    pub(crate) release: watch::Receiver<u64>,
    /// Closed (the handle or the start dropped) or sent (`close`, with where to answer).
    pub(crate) stop: oneshot::Receiver<oneshot::Sender<Result<()>>>,
    pub(crate) joined: oneshot::Sender<Result<()>>,
}

/// Why a round of allocation stopped short.
enum Stop {
    /// Start the round over (the party changed, the connection wavered, a retryable error).
    Again,
    /// The partitioner cannot go on.
    Fatal(RecipeError),
}

type Round<T> = std::result::Result<T, Stop>;

/// The engine's state: what it made on the server, so that it can unmake it.
struct Engine {
    cfg: Config,
    party_dir: String,
    locks_dir: String,
    party_node: String,
    lock_prefix: String,
    /// Our lock nodes (full paths), held or waiting.
    nodes: Vec<String>,
    /// The item directories we created lock nodes in, scanned at the end for a node whose
    /// create was cut off before its answer.
    touched: BTreeSet<String>,
    phase: Phase,
    joined: Option<oneshot::Sender<Result<()>>>,
}

/// Runs the engine until it is stopped or fails, then cleans up and publishes the end.
pub(crate) async fn run(cfg: Config, mut wires: Wires) {
    let party_dir = child_path(&cfg.path, "party");
    let locks_dir = child_path(&cfg.path, "locks");
    let party_node = child_path(&party_dir, &format!("{}-{}", uuid_hex(), cfg.identifier));
    let mut engine = Engine {
        party_dir,
        locks_dir,
        party_node,
        lock_prefix: format!("{}{LOCK_MARKER}", uuid_hex()),
        nodes: Vec::new(),
        touched: BTreeSet::new(),
        phase: Phase::Allocating,
        joined: Some(wires.joined),
        cfg,
    };
    let status = wires.status.clone();
    let (end, reply) = tokio::select! {
        e = engine.rounds(&status, &mut wires.release) => (Err(e), None),
        asked = &mut wires.stop => (Ok(()), asked.ok()),
    };
    let cleaned = engine.cleanup().await;
    engine.phase = engine.phase.next(Happening::End);
    let last = match &end {
        Ok(()) => PartitionStatus::Closed,
        Err(e) => PartitionStatus::Failed(e.clone()),
    };
    status.send_replace(last);
    if let Some(joined) = engine.joined.take() {
        let _ = joined.send(Err(end.clone().err().unwrap_or(RecipeError::Closed)));
    }
    if let Some(reply) = reply {
        let _ = reply.send(end.and(cleaned));
    }
}

impl Engine {
    /// Allocation rounds, one after another, until one fails for good.
    async fn rounds(
        &mut self,
        status: &watch::Sender<PartitionStatus>,
        release: &mut watch::Receiver<u64>,
    ) -> RecipeError {
        let mut pauses = Pauses::default();
        loop {
            publish(status, PartitionStatus::Allocating);
            match self.round(status, release).await {
                Ok(()) => pauses.reset(),
                Err(Stop::Again) => pauses.pause().await,
                Err(Stop::Fatal(e)) => return e,
            }
            if let Err(e) = self.release_all().await {
                return e;
            }
            self.phase = self.phase.next(Happening::Released);
        }
    }

    /// One round: join (again), settle, take the slice's locks, hold them until the party
    /// or the connection changes, then wait to be told to release.
    async fn round(
        &mut self,
        status: &watch::Sender<PartitionStatus>,
        release: &mut watch::Receiver<u64>,
    ) -> Round<()> {
        self.phase = Phase::Allocating;
        let scope = self.session().await?;
        self.join().await?;
        if let Some(joined) = self.joined.take() {
            let _ = joined.send(Ok(()));
        }
        let (party, mut changed) = self.settle(&scope).await?;
        let Some(slice) = partition(&self.cfg.items, &party, name_of(&self.party_node)) else {
            return Err(Stop::Again); // our node is gone (an expiry): join again
        };
        for item in &slice {
            self.take_lock(&scope, item, &mut changed).await?;
        }
        if changed.fired_now().await || scope.ended().is_some() || !connected(&self.cfg.client) {
            return Err(Stop::Again);
        }
        self.phase = self.phase.next(Happening::AllHeld);
        debug_assert!(self.phase.owns());
        publish(status, PartitionStatus::Acquired(slice));
        let why = tokio::select! {
            _ = changed.fired() => Happening::PartyChanged,
            _ = doubt(&self.cfg.client, &scope) => Happening::SessionDoubt,
        };
        self.phase = self.phase.next(why);
        publish(status, PartitionStatus::Release);
        release.borrow_and_update();
        if self.cfg.release == ReleaseMode::WhenAsked && release.changed().await.is_err() {
            // The handle is gone: the stop branch ends the engine.
            std::future::pending::<()>().await;
        }
        Ok(())
    }

    /// The session to work in: the current one, or the next once there is one.
    async fn session(&self) -> Round<SessionScope> {
        let client = &self.cfg.client;
        loop {
            match SessionScope::enter(client).await {
                Ok(scope) => return Ok(scope),
                Err(r) if client_ended(client) => return Err(Stop::Fatal(RecipeError::Lost(r))),
                Err(_) => {
                    let mut state = client.watch_state();
                    state.get_and_update();
                    if state.changed().await.is_err() {
                        return Err(Stop::Fatal(RecipeError::Lost(why_ended(client))));
                    }
                }
            }
        }
    }

    /// Makes sure our party node exists (kazoo's `ShallowParty.join`), with its parents.
    async fn join(&self) -> Round<()> {
        let c = &self.cfg.client;
        create_parents(c, &self.locks_dir)
            .await
            .map_err(|e| self.judge_recipe(e))?;
        create_parents(c, &self.party_dir)
            .await
            .map_err(|e| self.judge_recipe(e))?;
        let data = self.cfg.identifier.as_bytes();
        match c
            .create(&self.party_node, data, CreateOptions::ephemeral())
            .await
        {
            Ok(_) | Err(Error::Code(ErrorCode::NodeExists)) => Ok(()),
            Err(e) => Err(self.judge(e)),
        }
    }

    /// kazoo's PatientChildrenWatch: the party's children once they stayed the same for
    /// `time_boundary`, with a watch set on that listing.
    async fn settle(&self, scope: &SessionScope) -> Round<(Vec<String>, PartyWatch)> {
        loop {
            let (children, w) = children_watch(&self.cfg.client, &self.party_dir)
                .await
                .map_err(|e| self.judge(e))?;
            let mut w = PartyWatch(Some(w));
            tokio::select! {
                _ = tokio::time::sleep(self.cfg.time_boundary) => return Ok((children, w)),
                _ = w.fired() => {}
                _ = doubt(&self.cfg.client, scope) => return Err(Stop::Again),
            }
        }
    }

    /// Takes kazoo's Lock at `locks/<item>`: our node in its line, then waiting for the one
    /// ahead to go; the round starts over if the party changes meanwhile.
    async fn take_lock(
        &mut self,
        scope: &SessionScope,
        item: &str,
        party: &mut PartyWatch,
    ) -> Round<()> {
        let c = self.cfg.client.clone();
        let dir = child_path(&self.locks_dir, item);
        create_parents(&c, &dir)
            .await
            .map_err(|e| self.judge_recipe(e))?;
        self.touched.insert(dir.clone());
        let node = self.create_lock_node(&dir).await?;
        let name = name_of(&node).to_owned();
        loop {
            let children = c.get_children(&dir).await.map_err(|e| self.judge(e))?;
            let ahead = match lock_turn(&children, &name) {
                LockTurn::Held => return Ok(()),
                LockTurn::Missing => return Err(Stop::Again),
                LockTurn::WaitFor(ahead) => ahead,
            };
            let (stat, mut w) = exists_watch(&c, &child_path(&dir, &ahead))
                .await
                .map_err(|e| self.judge(e))?;
            if stat.is_none() {
                continue;
            }
            tokio::select! {
                _ = &mut w => {}
                _ = party.fired() => return Err(Stop::Again),
                _ = doubt(&c, scope) => return Err(Stop::Again),
            }
        }
    }

    /// Creates our lock node in `dir` (`<uuid4hex>__lock__<seq10>`, as kazoo's Lock), finding
    /// it by its prefix when the answer to the create was lost.
    async fn create_lock_node(&mut self, dir: &str) -> Round<String> {
        let c = &self.cfg.client;
        let prefix = child_path(dir, &self.lock_prefix);
        let data = self.cfg.identifier.as_bytes();
        match c
            .create(&prefix, data, CreateOptions::ephemeral_sequential())
            .await
        {
            Ok(path) => {
                self.nodes.push(path.clone());
                Ok(path)
            }
            Err(e) if e.is_retryable() => {
                // The create may have happened: whatever it made is removed with the round.
                Err(Stop::Again)
            }
            Err(e) => Err(self.judge(e)),
        }
    }

    /// Deletes our lock nodes (a deleted or expired one is released already), and any the
    /// cut-off creates left in the directories we used.
    async fn release_all(&mut self) -> Result<(), RecipeError> {
        let c = self.cfg.client.clone();
        for dir in std::mem::take(&mut self.touched) {
            let listed = retrying(&c, || c.get_children(&dir)).await;
            if let Ok(children) = listed {
                for name in children.iter().filter(|n| n.starts_with(&self.lock_prefix)) {
                    let path = child_path(&dir, name);
                    if !self.nodes.contains(&path) {
                        self.nodes.push(path);
                    }
                }
            }
        }
        for node in std::mem::take(&mut self.nodes) {
            match retrying(&c, || c.delete(&node, Version::Any)).await {
                Ok(()) | Err(Error::Code(ErrorCode::NoNode | ErrorCode::SessionExpired)) => {}
                Err(_) if client_ended(&c) => return Err(RecipeError::Lost(why_ended(&c))),
                Err(e) if e.is_retryable() => {} // the session is presumed lost: so are its nodes
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Releases everything and leaves the party.
    async fn cleanup(&mut self) -> Result<()> {
        let released = self.release_all().await;
        let c = &self.cfg.client;
        let left = match retrying(c, || c.delete(&self.party_node, Version::Any)).await {
            Ok(()) | Err(Error::Code(ErrorCode::NoNode | ErrorCode::SessionExpired)) => Ok(()),
            Err(_) if client_ended(c) => Ok(()), // the session's end removed it
            Err(e) => Err(e.into()),
        };
        released.and(left)
    }

    /// What a failed request means for the round.
    fn judge(&self, e: Error) -> Stop {
        let client = &self.cfg.client;
        if client_ended(client) {
            return Stop::Fatal(RecipeError::Lost(why_ended(client)));
        }
        match e.code() {
            _ if e.is_retryable() => Stop::Again,
            Some(ErrorCode::SessionExpired | ErrorCode::SessionMoved | ErrorCode::NoNode) => {
                Stop::Again
            }
            _ => Stop::Fatal(e.into()),
        }
    }

    fn judge_recipe(&self, e: RecipeError) -> Stop {
        match e {
            RecipeError::Session(e) => self.judge(e),
            e => Stop::Fatal(e),
        }
    }
}

/// The one-shot watch on the party's children, polled only until it fires.
struct PartyWatch(Option<OneshotWatch>);

impl PartyWatch {
    /// Resolves when the party changes (or the watch fails with the session).
    async fn fired(&mut self) {
        if let Some(w) = self.0.as_mut() {
            let _ = w.await;
            self.0 = None;
        }
    }

    /// Whether it has fired, without waiting.
    async fn fired_now(&mut self) -> bool {
        tokio::select! {
            biased;
            _ = self.fired() => true,
            _ = std::future::ready(()) => false,
        }
    }
}

/// Resolves when the scope's session can no longer be trusted to hold our nodes: the
/// connection is not serving writes, or the session is over.
async fn doubt(client: &Client, scope: &SessionScope) {
    let mut state = client.watch_state();
    loop {
        state.get_and_update();
        if scope.ended().is_some() || !connected(client) {
            return;
        }
        if state.changed().await.is_err() {
            return;
        }
    }
}

fn connected(client: &Client) -> bool {
    matches!(Liveness::now(client), Liveness::Serving)
}

fn publish(status: &watch::Sender<PartitionStatus>, now: PartitionStatus) {
    status.send_if_modified(|s| {
        let changed = !s.same_as(&now);
        *s = now;
        changed
    });
}

/// The last component of a path.
fn name_of(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, n)| n)
}
