//! What the core gives back besides bytes and actions: answers to callers, watch events and
//! what the handle reads, as values the driver applies (it owns every channel and the
//! handle's shared state; the core holds none).

use std::time::Duration;

use bytes::Bytes;
use zk_proto::Response;

use crate::{
    state::{SessionEvent, SessionState},
    ConnectError, Error, WatchedEvent,
};

/// A caller the driver keeps waiting: the key of its channel in the driver's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Key(pub u32);

/// A watch, named by the id its handle gave it (its drop notice names the same id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct WatchId(pub u64);

/// One thing the core says; see [`SessionCore::poll_output`](super::SessionCore::poll_output).
#[derive(Debug)]
pub(crate) enum Output {
    /// The answer to a request.
    Reply {
        to: Key,
        result: Result<Response, Error>,
    },
    /// The answer to an auth packet.
    Auth { to: Key, result: Result<(), Error> },
    /// A one-shot watch fired, or ended with an error; either way it is over.
    Watch {
        to: WatchId,
        result: Result<WatchedEvent, Error>,
    },
    /// An event for a persistent watch.
    Stream { to: WatchId, event: WatchedEvent },
    /// A watch is over without an event (a persistent watch removed, a registration the
    /// reply did not make): its channel closes.
    WatchEnded { to: WatchId },
    /// A close, or a change of the server list, is done.
    Done { to: Key },
    /// A handshake is over: connected with this session id (for the driver's log spans).
    Established {
        #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
        session_id: i64,
    },
    /// A change of state, with what the handle reads beside it.
    Publish(View),
    /// Why the last connection attempt failed, for the error of a first connect that fails.
    AttemptFailed(ConnectError),
    /// Before any connection, every server failed for a reason retrying will not fix:
    /// `connect` stops waiting.
    Hopeless(Error),
}

/// What the core publishes on a change of state: everything here is derived from the core's
/// own fields, which alone decide. `Debug` (in redact.rs) hides the password.
pub(crate) struct View {
    pub state: SessionState,
    /// `None` when the state did not change (an expired session that ends as expired).
    pub event: Option<SessionEvent>,
    pub session_id: i64,
    pub passwd: Bytes,
    pub negotiated_timeout: Option<Duration>,
    pub server: Option<String>,
    /// The session is over for good.
    pub ended: bool,
}
