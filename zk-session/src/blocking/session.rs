//! The session shared by the blocking handle's callers and its I/O thread: the core behind
//! one Mutex, the callers' reply slots by the keys the core knows, and the write path.
//!
//! Every thread that gives the core an input (a caller's command, the I/O thread's bytes or
//! timer) then settles: applies the outputs (filling reply slots), hands the actions to the
//! I/O thread, and writes what the core has to send. Writes are combined: one thread at a
//! time writes, outside the lock, everything queued until then; whoever queues bytes while a
//! write is under way leaves them to that writer, which looks again before it stops. So the
//! bytes go out in xid order, a caller's request goes out without waiting for the I/O thread
//! to wake, and no thread holds the lock while it blocks on the socket.

use std::{
    collections::VecDeque,
    sync::{Arc, Condvar, Mutex, MutexGuard},
};

use super::{
    board::Board,
    slot::{SlotTx, Wake},
    stream::Stream,
    watch::{OneshotTx, StreamTx},
};
use crate::{
    caller_table::CallerTable,
    command,
    session::{Action, Output, SessionCore, WatchId},
    Error,
};
use zk_proto::Response;

/// The core's clock.
pub(crate) type CoreInstant = std::time::Instant;

/// The time now, as the core takes it.
pub(crate) fn now() -> CoreInstant {
    CoreInstant::now()
}

/// The callers whose replies were filled under the lock, to wake once it is let go: woken
/// under it, a caller would run only to wait for the lock.
pub(crate) type Wakes = Vec<Wake>;

/// Wakes every caller in `wakes`.
pub(crate) fn wake_all(wakes: &mut Wakes) {
    wakes.drain(..).for_each(Wake::wake);
}

/// A request's reply slot.
pub(crate) type ReplyTx = SlotTx<Result<Response, Error>>;

/// A command as the blocking handle gives it: slots instead of keys.
#[derive(Debug)]
pub(crate) enum Slots {}

impl command::Callers for Slots {
    type Reply = ReplyTx;
    type Auth = SlotTx<Result<(), Error>>;
    type Oneshot = OneshotTx;
    type Stream = StreamTx;
    type Done = SlotTx<()>;
}

/// A command of the blocking handle.
pub(crate) type Command = command::Command<Slots>;

/// One session: see the module documentation.
pub(crate) struct Session {
    locked: Mutex<Locked>,
    /// Wakes the I/O thread when it waits without a connection to read.
    pub wake: Condvar,
    pub board: Board,
    next_watch_id: std::sync::atomic::AtomicU64,
}

/// What the Mutex guards.
pub(crate) struct Locked {
    pub core: SessionCore,
    callers: Callers,
    /// Actions taken from the core, for the I/O thread, in order.
    pub actions: VecDeque<Action>,
    /// The stream of the current connection (the I/O thread reads it, writers write it).
    pub stream: Option<Arc<Stream>>,
    /// Counts streams opened and dropped: an I/O result for an older one is stale.
    pub conn_gen: u64,
    /// A thread is writing (outside the lock): others leave their bytes to it.
    writing: bool,
    /// The I/O thread waits on [`Session::wake`] (it reads nothing).
    pub io_sleeping: bool,
    /// Every handle is gone.
    pub handles_gone: bool,
}

/// The callers' slots by the keys the core names them by.
type Callers = CallerTable<Slots>;

impl Session {
    pub fn new(core: SessionCore) -> Self {
        Session {
            locked: Mutex::new(Locked {
                core,
                callers: Callers::default(),
                actions: VecDeque::new(),
                stream: None,
                conn_gen: 0,
                writing: false,
                io_sleeping: false,
                handles_gone: false,
            }),
            wake: Condvar::new(),
            board: Board::new(),
            next_watch_id: std::sync::atomic::AtomicU64::new(1),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, Locked> {
        self.locked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new watch's id.
    pub fn watch_id(&self) -> WatchId {
        WatchId(
            self.next_watch_id
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// Gives the core one command from a handle, then settles.
    pub fn submit(&self, cmd: Command) {
        let mut g = self.lock();
        let cmd = g.callers.take(cmd);
        let now = now();
        g.core.handle_command(cmd, now);
        if g.core.wants_prune() {
            let Locked { core, callers, .. } = &mut *g;
            core.prune_waiting(|k| callers.take_if_gone(k));
        }
        self.settle_and_unlock(g);
    }

    /// Every handle is gone: the core closes the session.
    pub fn handles_gone(&self) {
        let mut g = self.lock();
        g.handles_gone = true;
        g.core.handle_handles_gone(now());
        self.settle_and_unlock(g);
    }

    /// [`settle`](Self::settle)s, lets go of the lock, and wakes the callers answered.
    pub fn settle_and_unlock(&self, g: MutexGuard<'_, Locked>) {
        let mut wakes = Wakes::new();
        drop(self.settle(g, &mut wakes));
        wake_all(&mut wakes);
    }

    /// After an input: applies the outputs, hands the actions to the I/O thread, and writes
    /// what the core has to send (see the module documentation). Gives the lock back held;
    /// the callers answered are in `wakes`, to wake once it is let go.
    pub fn settle<'s>(
        &'s self,
        mut g: MutexGuard<'s, Locked>,
        wakes: &mut Wakes,
    ) -> MutexGuard<'s, Locked> {
        loop {
            g.apply_outputs(&self.board, wakes);
            if g.take_actions() || g.io_sleeping {
                self.wake.notify_one();
            }
            if g.writing || g.core.transmit().is_empty() {
                return g;
            }
            let Some(stream) = g.stream.clone() else {
                return g;
            };
            // Between handshake and connected the core may hold bytes for a stream not open
            // yet; `stream` is only set once it is.
            let bytes = g.core.transmit().split().freeze();
            let (gen, t) = (g.conn_gen, now());
            g.core.handle_written(t);
            g.writing = true;
            drop(g);
            wake_all(wakes);
            let r = stream.write_all(&bytes);
            g = self.lock();
            g.writing = false;
            if let Err(e) = r {
                if g.conn_gen == gen {
                    g.core.handle_io_error(e, now());
                }
            }
        }
    }

    /// Before a handshake's input: drops the waiting requests whose callers gave up.
    pub fn prune_if_handshaking(&self, g: &mut Locked) {
        use crate::session::Phase;
        if matches!(g.core.phase(), Phase::Handshaking { .. }) && g.core.has_waiting() {
            // The end of the handshake sends the waiting requests: not those of callers who
            // gave up meanwhile.
            let Locked { core, callers, .. } = g;
            core.prune_waiting(|k| callers.take_if_gone(k));
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("state", &self.board.read().state)
            .finish_non_exhaustive()
    }
}

impl Locked {
    fn apply_outputs(&mut self, board: &Board, wakes: &mut Wakes) {
        while let Some(o) = self.core.poll_output() {
            match o {
                // The hot path: filled now, in order, woken once the lock is let go.
                Output::Reply { to, result } => {
                    if let Some(tx) = self.callers.take_reply(to) {
                        wakes.push(tx.fill(result));
                    }
                }
                o => self.callers.apply(o, board),
            }
        }
        board.zxid_seen(self.core.last_zxid());
    }

    /// Moves the core's actions to the I/O thread's queue; a disconnect drops the stream
    /// at once (shut down, so that a read under way on the I/O thread returns). Whether
    /// there were any.
    fn take_actions(&mut self) -> bool {
        let mut any = false;
        while let Some(a) = self.core.poll_action() {
            if a == Action::Disconnect {
                self.drop_stream();
            }
            self.actions.push_back(a);
            any = true;
        }
        any
    }

    /// Drops the current stream, if any: older I/O results are stale from now on.
    pub fn drop_stream(&mut self) {
        self.conn_gen += 1;
        if let Some(s) = self.stream.take() {
            s.shutdown();
        }
    }
}
