//! The task behind a cache: it reads what the tree asks for, in batches (multiRead), several
//! batches in flight, and turns the persistent watch's events and the session's reconnects
//! into reads.
//!
//! Costs: one getData per znode, and a getChildren only for znodes whose Stat says they have
//! children; the reads of one batch share one request. After every reconnect or new session
//! every cached znode is read again (a persistent watch does not replay what happened while
//! the client was away), and getChildren only where the cversion moved.

use std::{
    collections::{HashSet, VecDeque},
    sync::{Arc, Mutex, MutexGuard},
};

use tokio::sync::watch;
use zk_session::{
    Client, Error, ErrorCode, PersistentWatch, ReadOp, ReadResult, SessionEvent, SessionEvents,
};

use super::CacheStatus;
use super::{
    connection::Connection,
    event::{CacheEvent, ResyncReason},
    fan_out::FanOut,
    in_order::InOrder,
    tree::{Tree, Want},
};
use crate::plumbing::liveness::{why_ended, Liveness};

/// Reads per multiRead at most; fewer after a batch was lost with its connection (a reply
/// larger than the frame limit ends the connection: smaller batches get through).
const MAX_BATCH: usize = 256;
/// Batches in flight at once.
const WINDOW: usize = 8;

/// What the cache handle and its task share: the view and the subscribers, under one lock,
/// so that an event is queued in the same step as the change it reports.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) tree: Tree,
    pub(crate) fan_out: FanOut,
}

#[derive(Debug)]
pub(crate) struct Shared {
    state: Mutex<State>,
    /// The cache's public status.
    pub(crate) status: watch::Sender<CacheStatus>,
}

impl Shared {
    pub(crate) fn new(tree: Tree) -> Self {
        Shared {
            state: Mutex::new(State {
                tree,
                fan_out: FanOut::default(),
            }),
            status: watch::channel(CacheStatus::Loading).0,
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // The tree is only changed through methods that finish before anything can panic.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

type BatchOutput = (Vec<Want>, Result<Vec<ReadResult>, Error>);

pub(crate) struct Loader {
    client: Client,
    shared: Arc<Shared>,
    queue: VecDeque<Want>,
    /// What is in `queue`, so that a burst of events on one znode costs one read.
    queued: HashSet<Want>,
    in_flight: InOrder<BatchOutput>,
    batch: usize,
    initialized: bool,
    resync: Option<ResyncReason>,
    connection: Connection,
}

impl Loader {
    pub(crate) fn new(client: Client, shared: Arc<Shared>, root: &str) -> Self {
        let mut loader = Loader {
            connection: Connection::new(client.session_id()),
            client,
            shared,
            queue: VecDeque::new(),
            queued: HashSet::new(),
            in_flight: InOrder::new(),
            batch: MAX_BATCH,
            initialized: false,
            resync: None,
        };
        loader.want(Want::Data(root.to_owned()));
        loader
    }

    /// Runs until the watch ends (the session is over) or the task is dropped.
    pub(crate) async fn run(mut self, mut watch: PersistentWatch, mut session: SessionEvents) {
        loop {
            self.fill();
            self.announce_if_complete();
            tokio::select! {
                biased;
                out = self.in_flight.next(), if !self.in_flight.is_empty() => self.apply(out),
                ev = watch.next() => match ev {
                    Some(Ok(ev)) => self.on_change(ev.path()),
                    Some(Err(Error::WatchLagged { .. })) => self.start_resync(ResyncReason::WatchLagged),
                    Some(Err(_)) => {}
                    None => return,
                },
                ev = session.next() => match ev {
                    Some(ev) => self.on_session(ev),
                    None => return,
                },
            }
        }
    }

    fn want(&mut self, w: Want) {
        if self.queued.insert(w.clone()) {
            self.queue.push_back(w);
        }
    }

    fn on_change(&mut self, path: &str) {
        // A server that reports paths outside the watched subtree is not believed.
        if self.shared.lock().tree.covers(path) {
            self.want(Want::Data(path.to_owned()));
        }
    }

    fn on_session(&mut self, ev: SessionEvent) {
        if let Some(reason) = self.connection.on_event(ev) {
            self.start_resync(reason);
        }
    }

    /// Reads every cached znode again (the root whether cached or not).
    fn start_resync(&mut self, reason: ResyncReason) {
        // A new session outranks a reconnect when both happened before the resync ended.
        if self.resync != Some(ResyncReason::NewSession) {
            self.resync = Some(reason);
        }
        let paths = self.shared.lock().tree.all_paths();
        for p in paths {
            self.want(Want::Data(p));
        }
    }

    /// Sends batches while there is room, and only while connected: requests made while
    /// disconnected would fail and be sent again anyway.
    fn fill(&mut self) {
        while self.in_flight.len() < WINDOW
            && !self.queue.is_empty()
            && Liveness::now(&self.client).connected()
        {
            let n = self.batch.min(self.queue.len());
            let wants: Vec<Want> = self.queue.drain(..n).collect();
            for w in &wants {
                self.queued.remove(w);
            }
            let ops: Vec<ReadOp> = wants
                .iter()
                .map(|w| match w {
                    Want::Data(p) => ReadOp::GetData(p.clone()),
                    Want::Children(p) => ReadOp::GetChildren(p.clone()),
                })
                .collect();
            let client = self.client.clone();
            self.in_flight.push(async move {
                let r = client.multi_read(ops).await;
                (wants, r)
            });
        }
    }

    fn apply(&mut self, (wants, result): BatchOutput) {
        let results = match result {
            Ok(r) => r,
            Err(e) => return self.batch_failed(wants, &e),
        };
        self.batch = (self.batch * 2).min(MAX_BATCH);
        let mut events = Vec::new();
        let mut more = Vec::new();
        {
            let mut st = self.shared.lock();
            let State { tree, fan_out } = &mut *st;
            for (want, r) in wants.iter().zip(results) {
                match (want, r) {
                    (Want::Data(p), ReadResult::Data(Ok((data, stat)))) => {
                        tree.apply_data(p, Some((&data, stat)), &mut events, &mut more)
                    }
                    (Want::Data(p), ReadResult::Data(Err(ErrorCode::NoNode))) => {
                        tree.apply_data(p, None, &mut events, &mut more)
                    }
                    (Want::Children(p), ReadResult::Children(Ok(names))) => {
                        tree.apply_children(p, Some(names), &mut events, &mut more)
                    }
                    (Want::Children(p), ReadResult::Children(Err(ErrorCode::NoNode))) => {
                        tree.apply_children(p, None, &mut events, &mut more)
                    }
                    // Unreadable (NoAuth...): left out of the view, as if absent.
                    _ => {}
                }
            }
            fan_out.send(&events);
        }
        for w in more {
            self.want(w);
        }
    }

    /// A batch that never got its answer is sent again, in front, once connected; the
    /// reconnect's resync reads everything anyway, but a pending listing must not be lost.
    fn batch_failed(&mut self, wants: Vec<Want>, e: &Error) {
        if !e.is_retryable() && e.code() != Some(ErrorCode::SessionExpired) {
            // Not a connection matter (the client is closed, or the server refused the batch):
            // nothing to retry.
            return;
        }
        self.batch = (self.batch / 4).max(1);
        for w in wants.into_iter().rev() {
            if self.queued.insert(w.clone()) {
                self.queue.push_front(w);
            }
        }
    }

    /// Once every read is answered, tells the subscribers that the view is complete.
    fn announce_if_complete(&mut self) {
        if !self.queue.is_empty() || !self.in_flight.is_empty() {
            return;
        }
        // A load queued thousands of reads (a read per child): give that room back.
        if self.queue.capacity() > 64 {
            self.queue.shrink_to_fit();
            self.queued.shrink_to_fit();
        }
        let marker = if !self.initialized {
            self.initialized = true;
            self.resync = None;
            self.shared.status.send_replace(CacheStatus::Initialized);
            CacheEvent::Initialized
        } else if let Some(reason) = self.resync.take() {
            CacheEvent::Resynced(reason)
        } else {
            return;
        };
        self.shared.lock().fan_out.send(&[marker]);
    }
}

impl Drop for Loader {
    /// The task ended or was dropped with the cache: the subscribers' streams end.
    fn drop(&mut self) {
        self.shared.lock().fan_out.close();
        // Unless closed: then the handle has said so.
        let why = why_ended(&self.client);
        self.shared.status.send_if_modified(|s| {
            let open = !s.has_ended();
            if open {
                *s = CacheStatus::Ended(why);
            }
            open
        });
    }
}
