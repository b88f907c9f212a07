//! What the handle reads without asking the session task: the state, the session id and
//! password, the last zxid. The driver owns the writing side and applies what the core says
//! ([`Output::Publish`](crate::session::Output::Publish) and the rest); the core never sees
//! it.

use std::sync::{
    atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering},
    Mutex,
};

use bytes::Bytes;

use crate::{session::View, state_watch::StatePublisher};

/// What the handle can read without asking the task. `Debug` (in redact.rs) hides the
/// password.
pub(crate) struct Shared {
    pub publisher: StatePublisher,
    pub session_id: AtomicI64,
    pub negotiated_timeout_ms: AtomicU64,
    pub last_zxid: AtomicI64,
    pub passwd: Mutex<Bytes>,
    /// Why the last connection attempt failed, for the error of a first connect that fails.
    pub last_connect_error: Mutex<Option<crate::ConnectError>>,
    /// The server of the current connection, `host:port`.
    pub server: Mutex<Option<String>>,
    /// Set when, before any connection, every server failed for a reason retrying will not
    /// fix (or refused, with [`OnRefusal::FailFast`](crate::OnRefusal::FailFast)): `connect`
    /// stops waiting then, with this error.
    pub hopeless: tokio::sync::watch::Sender<Option<crate::Error>>,
    /// True once the session is over for good (set before the final state is published).
    pub ended: AtomicBool,
    /// The id of the next watch a handle sets (see [`WatchId`](crate::session::WatchId)).
    pub next_watch_id: AtomicU64,
}

impl Shared {
    pub fn new() -> Self {
        Shared {
            publisher: StatePublisher::new(),
            session_id: AtomicI64::new(0),
            negotiated_timeout_ms: AtomicU64::new(0),
            last_zxid: AtomicI64::new(0),
            passwd: Mutex::new(Bytes::new()),
            last_connect_error: Mutex::new(None),
            server: Mutex::new(None),
            hopeless: tokio::sync::watch::Sender::new(None),
            ended: AtomicBool::new(false),
            next_watch_id: AtomicU64::new(1),
        }
    }

    /// Publishes `view`: the handle's fields first, then the state and its event, so that
    /// whoever sees the state also sees the rest.
    pub fn publish(&self, view: View) {
        self.session_id.store(view.session_id, Ordering::Release);
        if let Some(t) = view.negotiated_timeout {
            let ms = t.as_millis().min(u64::MAX as u128) as u64;
            self.negotiated_timeout_ms.store(ms, Ordering::Release);
        }
        lock_set(&self.passwd, view.passwd);
        lock_set(&self.server, view.server);
        if view.ended {
            // Before the state: whoever sees the final state must also see that it is final.
            self.ended.store(true, Ordering::Release);
        }
        if let Some(event) = view.event {
            self.publisher.publish(view.state, event);
        }
    }

    /// The highest zxid seen so far (on the hot path: one relaxed store).
    pub fn zxid_seen(&self, zxid: i64) {
        self.last_zxid.store(zxid, Ordering::Relaxed);
    }

    /// Why the last connection attempt failed.
    pub fn attempt_failed(&self, why: crate::ConnectError) {
        lock_set(&self.last_connect_error, Some(why));
    }

    /// A new watch's id.
    pub fn watch_id(&self) -> crate::session::WatchId {
        crate::session::WatchId(self.next_watch_id.fetch_add(1, Ordering::Relaxed))
    }
}

fn lock_set<T>(m: &Mutex<T>, v: T) {
    *m.lock().unwrap_or_else(|e| e.into_inner()) = v;
}
