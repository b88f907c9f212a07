//! What the blocking handle reads without touching the session core: the state and its
//! events, the session id and password, why connecting failed. The thread that applies the
//! core's outputs writes it; callers read it, or wait on it for a change.

use std::{
    sync::{
        atomic::{AtomicI64, Ordering},
        mpsc, Condvar, Mutex, MutexGuard,
    },
    time::{Duration, Instant},
};

use bytes::Bytes;

use crate::{session::View, ConnectError, Error, SessionEvent, SessionState};

/// The published side of the session; see the module documentation.
#[derive(Debug)]
pub(crate) struct Board {
    inner: Mutex<Published>,
    changed: Condvar,
    /// The highest zxid seen (on the hot path: one relaxed store, outside the lock).
    pub last_zxid: AtomicI64,
}

#[derive(Debug)]
pub(crate) struct Published {
    pub state: SessionState,
    pub session_id: i64,
    pub passwd: Bytes,
    pub negotiated_timeout: Duration,
    pub server: Option<String>,
    pub ended: bool,
    pub last_connect_error: Option<ConnectError>,
    /// Before any connection, every server failed for a reason retrying will not fix.
    pub hopeless: Option<Error>,
    subscribers: Vec<mpsc::Sender<SessionEvent>>,
}

impl crate::caller_table::Published for Board {
    fn publish(&self, view: View) {
        Board::publish(self, view)
    }

    fn attempt_failed(&self, why: ConnectError) {
        Board::attempt_failed(self, why)
    }

    fn hopeless(&self, e: Error) {
        Board::hopeless(self, e)
    }
}

impl Board {
    pub fn new() -> Self {
        Board {
            inner: Mutex::new(Published {
                state: SessionState::Connecting,
                session_id: 0,
                passwd: Bytes::new(),
                negotiated_timeout: Duration::ZERO,
                server: None,
                ended: false,
                last_connect_error: None,
                hopeless: None,
                subscribers: Vec::new(),
            }),
            changed: Condvar::new(),
            last_zxid: AtomicI64::new(0),
        }
    }

    pub fn read(&self) -> MutexGuard<'_, Published> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes `view`: its fields, then the state and its event to every subscriber.
    pub fn publish(&self, view: View) {
        let mut p = self.read();
        p.session_id = view.session_id;
        if let Some(t) = view.negotiated_timeout {
            p.negotiated_timeout = t;
        }
        p.passwd = view.passwd;
        p.server = view.server;
        p.ended |= view.ended;
        if let Some(event) = view.event {
            p.state = view.state;
            p.subscribers.retain(|s| s.send(event).is_ok());
        }
        self.changed.notify_all();
    }

    pub fn attempt_failed(&self, why: ConnectError) {
        self.read().last_connect_error = Some(why);
    }

    pub fn hopeless(&self, e: Error) {
        self.read().hopeless = Some(e);
        self.changed.notify_all();
    }

    /// A receiver of every event from now on.
    pub fn subscribe(&self) -> mpsc::Receiver<SessionEvent> {
        let (tx, rx) = mpsc::channel();
        self.read().subscribers.push(tx);
        rx
    }

    /// Waits up to `timeout` until `done` says the published side is what the caller waits
    /// for; gives back the guard either way (the caller looks again).
    pub fn wait_until(
        &self,
        timeout: Duration,
        mut done: impl FnMut(&Published) -> bool,
    ) -> MutexGuard<'_, Published> {
        let until = Instant::now().checked_add(timeout);
        let mut p = self.read();
        while !done(&p) {
            let left = match until {
                Some(u) => u.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                break;
            }
            p = self
                .changed
                .wait_timeout(p, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        p
    }

    pub fn zxid_seen(&self, zxid: i64) {
        self.last_zxid.store(zxid, Ordering::Relaxed);
    }
}
