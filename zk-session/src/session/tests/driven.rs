//! The core under test as a driver would run it: its outputs taken as values after every
//! call ([`Driven`]) into an [`Outbox`] that tests read through [`Slot`]s, and SASL work run
//! the way the driver runs it.

use std::{
    cell::RefCell,
    collections::{HashMap, HashSet, VecDeque},
    hash::Hash,
    rc::Rc,
    sync::Arc,
};

use bytes::BytesMut;
use std::time::Instant;
use zk_proto::Response;

use crate::{
    connect_error::ConnectFailure,
    session::{Action, Command, Key, Output, Phase, SessionCore, WatchId},
    shared::Shared,
    state::SessionState,
    Error, WatchedEvent,
};

/// What the core said to callers, as values: each answer with the state published when it
/// came (what a caller looking at the state on getting it would see).
#[derive(Default)]
pub struct Outbox {
    pub(super) replies: HashMap<Key, (Result<Response, Error>, SessionState)>,
    pub(super) auths: HashMap<Key, (Result<(), Error>, SessionState)>,
    pub(super) done: HashMap<Key, ((), SessionState)>,
    pub(super) watches: HashMap<WatchId, (Result<WatchedEvent, Error>, SessionState)>,
    pub(super) streams: HashMap<WatchId, VecDeque<WatchedEvent>>,
    pub(super) ended: HashSet<WatchId>,
    /// Every caller answered so far: a second answer fails the test.
    pub(super) answered: HashSet<(u8, u64)>,
    /// Callers of requests who gave up (as a dropped reply channel tells the driver).
    pub(super) gone: HashSet<Key>,
}

impl Outbox {
    fn once(&mut self, what: u8, key: u64) {
        assert!(
            self.answered.insert((what, key)),
            "caller {what}/{key} answered twice"
        );
    }

    /// Takes in one output of the core; `state` is the state published so far.
    fn take(&mut self, o: Output, state: SessionState) {
        match o {
            Output::Reply { to, result } => {
                self.once(0, to.0.into());
                self.replies.insert(to, (result, state));
            }
            Output::Auth { to, result } => {
                self.once(1, to.0.into());
                self.auths.insert(to, (result, state));
            }
            Output::Done { to } => {
                self.once(2, to.0.into());
                self.done.insert(to, ((), state));
            }
            Output::Watch { to, result } => {
                self.once(3, to.0);
                self.watches.insert(to, (result, state));
            }
            Output::Stream { to, event } => self.streams.entry(to).or_default().push_back(event),
            Output::WatchEnded { to } => {
                self.ended.insert(to);
            }
            Output::Publish(_)
            | Output::AttemptFailed(_)
            | Output::Hopeless(_)
            | Output::Established { .. } => {
                unreachable!("applied to the handle's state")
            }
        }
    }
}

/// Nothing came for this caller yet.
#[derive(Debug, PartialEq, Eq)]
pub struct Empty;

/// Where one caller's answer lands, read as a value from the [`Outbox`].
pub struct Slot<K, T> {
    pub(super) key: K,
    pub(super) record: Rc<RefCell<Outbox>>,
    pub(super) pick: fn(&mut Outbox) -> &mut HashMap<K, (T, SessionState)>,
}

impl<K: Hash + Eq + Copy, T> Slot<K, T> {
    /// The answer, taken (a second call finds nothing).
    pub fn try_recv(&mut self) -> Result<T, Empty> {
        let mut r = self.record.borrow_mut();
        (self.pick)(&mut r)
            .remove(&self.key)
            .map(|(v, _)| v)
            .ok_or(Empty)
    }

    /// Another view of the same caller's answer.
    pub fn follow(&self) -> Self {
        Slot {
            key: self.key,
            record: self.record.clone(),
            pick: self.pick,
        }
    }

    /// The state published when the answer came, if it came (the answer stays).
    pub fn state_at_answer(&self) -> Option<SessionState> {
        let mut r = self.record.borrow_mut();
        (self.pick)(&mut r).get(&self.key).map(|(_, s)| *s)
    }
}

/// The core under test, with a driver's bookkeeping: after every call, its outputs are
/// taken as values, the handle's state applied to [`Shared`], answers into the [`Outbox`].
/// Calls that change the core go through here; the rest through `Deref`.
pub(crate) struct Driven {
    pub(super) core: SessionCore,
    pub shared: Arc<Shared>,
    pub record: Rc<RefCell<Outbox>>,
    /// Run the SASL mechanism's work as soon as the core asks (as the driver does with a
    /// mechanism that does not block); off, it waits in [`sasl_work`](Self::sasl_work).
    #[cfg(feature = "sasl")]
    pub auto_sasl: bool,
    /// The core's actions other than SASL work, for [`poll_action`](Self::poll_action).
    pub(super) kept: VecDeque<Action>,
    /// SASL work held back while `auto_sasl` is off.
    #[cfg(feature = "sasl")]
    pub sasl_work: VecDeque<(u64, crate::sasl::SaslWork)>,
}

impl std::ops::Deref for Driven {
    type Target = SessionCore;
    fn deref(&self) -> &SessionCore {
        &self.core
    }
}

impl Driven {
    /// Applies the outputs, and runs SASL work the way a driver does.
    #[cfg_attr(not(feature = "sasl"), allow(unused_variables))]
    pub(super) fn settle(&mut self, now: Instant) {
        self.drain();
        while let Some(a) = self.core.poll_action() {
            match a {
                #[cfg(feature = "sasl")]
                Action::Sasl { attempt, work } if self.auto_sasl => {
                    self.core.handle_sasl_done(attempt, work.run(), now);
                    self.drain();
                }
                #[cfg(feature = "sasl")]
                Action::Sasl { attempt, work } => self.sasl_work.push_back((attempt, work)),
                other => self.kept.push_back(other),
            }
        }
    }

    /// Runs the oldest SASL work held back, now.
    #[cfg(feature = "sasl")]
    pub fn run_sasl_work(&mut self, now: Instant) {
        let (attempt, work) = self.sasl_work.pop_front().expect("SASL work");
        self.core.handle_sasl_done(attempt, work.run(), now);
        self.settle(now);
    }

    pub(super) fn drain(&mut self) {
        while let Some(o) = self.core.poll_output() {
            match o {
                Output::Publish(view) => self.shared.publish(view),
                Output::AttemptFailed(why) => self.shared.attempt_failed(why),
                Output::Hopeless(e) => {
                    self.shared.hopeless.send_replace(Some(e));
                }
                Output::Established { .. } => {}
                o => {
                    let state = self.shared.publisher.state();
                    self.record.borrow_mut().take(o, state)
                }
            }
        }
    }

    pub fn handle_command(&mut self, cmd: Command, now: Instant) {
        self.core.handle_command(cmd, now);
        self.settle(now);
    }
    /// As the driver does: before an input of the handshake (whose end sends the waiting
    /// requests), the requests of callers who gave up are dropped.
    pub fn handle_input(&mut self, rbuf: &mut BytesMut, now: Instant) {
        if matches!(self.core.phase(), Phase::Handshaking { .. }) && self.core.has_waiting() {
            let gone = self.record.borrow().gone.clone();
            self.core.prune_waiting(|k| gone.contains(&k));
        }
        self.core.handle_input(rbuf, now);
        self.settle(now);
    }
    pub fn handle_timeout(&mut self, now: Instant) {
        self.core.handle_timeout(now);
        self.settle(now);
    }
    pub fn handle_stream_opened(&mut self, host: usize, now: Instant) {
        self.core.handle_stream_opened(host, now);
        self.settle(now);
    }
    pub fn handle_connect_failed(&mut self, host: usize, f: ConnectFailure, now: Instant) {
        self.core.handle_connect_failed(host, f, now);
        self.settle(now);
    }
    pub fn handle_disconnected(&mut self, now: Instant) {
        self.core.handle_disconnected(now);
        self.settle(now);
    }
    pub fn handle_read_write_found(&mut self, host: usize, now: Instant) {
        self.core.handle_read_write_found(host, now);
        self.settle(now);
    }
    pub fn handle_tls_probe(&mut self, host: usize, plain: Option<bool>, now: Instant) {
        self.core.handle_tls_probe(host, plain, now);
        self.settle(now);
    }
    pub fn handle_handles_gone(&mut self, now: Instant) {
        self.core.handle_handles_gone(now);
        self.settle(now);
    }
    pub fn handle_written(&mut self, now: Instant) {
        self.core.handle_written(now);
    }
    pub fn poll_action(&mut self) -> Option<Action> {
        self.kept.pop_front()
    }
    pub fn transmit(&mut self) -> &mut BytesMut {
        self.core.transmit()
    }
}
