//! Watch notifications and the watch kinds requests refer to.

use bytes::BytesMut;

use crate::{
    jute::{Reader, Record, WriteJute},
    DecodeError,
};

/// What happened to a watched znode (`Watcher.Event.EventType`).
///
/// Only the node events 1–4 come over the wire; the rest are produced by clients. Codes this
/// crate does not know are kept as [`EventType::Unknown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventType {
    /// A change of connection state, not of a znode.
    None,
    /// The znode was created.
    NodeCreated,
    /// The znode was deleted.
    NodeDeleted,
    /// The znode's data changed.
    NodeDataChanged,
    /// The znode's children changed.
    NodeChildrenChanged,
    /// A data watch was removed.
    DataWatchRemoved,
    /// A child watch was removed.
    ChildWatchRemoved,
    /// A persistent watch was removed.
    PersistentWatchRemoved,
    /// A code this crate does not know.
    Unknown(i32),
}

impl EventType {
    /// The numeric code.
    pub fn code(self) -> i32 {
        match self {
            EventType::None => -1,
            EventType::NodeCreated => 1,
            EventType::NodeDeleted => 2,
            EventType::NodeDataChanged => 3,
            EventType::NodeChildrenChanged => 4,
            EventType::DataWatchRemoved => 5,
            EventType::ChildWatchRemoved => 6,
            EventType::PersistentWatchRemoved => 7,
            EventType::Unknown(c) => c,
        }
    }

    /// The event type for a numeric code.
    pub fn from_code(code: i32) -> Self {
        match code {
            -1 => EventType::None,
            1 => EventType::NodeCreated,
            2 => EventType::NodeDeleted,
            3 => EventType::NodeDataChanged,
            4 => EventType::NodeChildrenChanged,
            5 => EventType::DataWatchRemoved,
            6 => EventType::ChildWatchRemoved,
            7 => EventType::PersistentWatchRemoved,
            c => EventType::Unknown(c),
        }
    }
}

/// The state of the connection (`Watcher.Event.KeeperState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeeperState {
    /// Not connected to any server.
    Disconnected,
    /// Connected to a server that accepts writes.
    SyncConnected,
    /// Authentication failed.
    AuthFailed,
    /// Connected to a read-only server.
    ConnectedReadOnly,
    /// SASL authentication succeeded.
    SaslAuthenticated,
    /// The client closed the session.
    Closed,
    /// The session expired.
    Expired,
    /// A code this crate does not know.
    Unknown(i32),
}

impl KeeperState {
    /// The numeric code.
    pub fn code(self) -> i32 {
        match self {
            KeeperState::Disconnected => 0,
            KeeperState::SyncConnected => 3,
            KeeperState::AuthFailed => 4,
            KeeperState::ConnectedReadOnly => 5,
            KeeperState::SaslAuthenticated => 6,
            KeeperState::Closed => 7,
            KeeperState::Expired => -112,
            KeeperState::Unknown(c) => c,
        }
    }

    /// The state for a numeric code.
    pub fn from_code(code: i32) -> Self {
        match code {
            0 => KeeperState::Disconnected,
            3 => KeeperState::SyncConnected,
            4 => KeeperState::AuthFailed,
            5 => KeeperState::ConnectedReadOnly,
            6 => KeeperState::SaslAuthenticated,
            7 => KeeperState::Closed,
            -112 => KeeperState::Expired,
            c => KeeperState::Unknown(c),
        }
    }
}

/// A watch notification, sent by the server with reply header `(-1, -1, 0)`.
///
/// ```
/// use bytes::BytesMut;
/// use zk_proto::{jute::Record, EventType, KeeperState, WatcherEvent};
///
/// let ev = WatcherEvent {
///     event_type: EventType::NodeDataChanged,
///     state: KeeperState::SyncConnected,
///     path: "/a".into(),
/// };
/// let mut buf = BytesMut::new();
/// ev.encode(&mut buf);
/// assert_eq!(WatcherEvent::decode_exact(buf.freeze(), "WatcherEvent").unwrap(), ev);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WatcherEvent {
    /// What happened (jute field `type`).
    pub event_type: EventType,
    /// The connection state.
    pub state: KeeperState,
    /// The znode concerned, as the server sees it (chroot included).
    pub path: String,
}

impl Record for WatcherEvent {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_jute_int(self.event_type.code());
        buf.put_jute_int(self.state.code());
        buf.put_jute_string(Some(&self.path));
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        Ok(WatcherEvent {
            event_type: EventType::from_code(r.read_i32("WatcherEvent.type")?),
            state: KeeperState::from_code(r.read_i32("WatcherEvent.state")?),
            path: r.read_string("WatcherEvent.path")?,
        })
    }
}

/// The kind of watch an addWatch request sets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum AddWatchMode {
    /// A data and child watch that stays after it fires.
    #[default]
    Persistent,
    /// Like `Persistent`, for the znode and all its descendants.
    PersistentRecursive,
}

impl AddWatchMode {
    /// The wire value.
    pub fn code(self) -> i32 {
        match self {
            AddWatchMode::Persistent => 0,
            AddWatchMode::PersistentRecursive => 1,
        }
    }

    /// The mode for a wire value, or `None` when it is not one.
    pub fn from_code(code: i32) -> Option<Self> {
        match code {
            0 => Some(AddWatchMode::Persistent),
            1 => Some(AddWatchMode::PersistentRecursive),
            _ => None,
        }
    }
}

/// The kind of watch a checkWatches or removeWatches request refers to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum WatcherType {
    /// Child watches.
    Children,
    /// Data (and exists) watches.
    Data,
    /// Both.
    #[default]
    Any,
}

impl WatcherType {
    /// The wire value.
    pub fn code(self) -> i32 {
        match self {
            WatcherType::Children => 1,
            WatcherType::Data => 2,
            WatcherType::Any => 3,
        }
    }

    /// The type for a wire value, or `None` when it is not one.
    pub fn from_code(code: i32) -> Option<Self> {
        match code {
            1 => Some(WatcherType::Children),
            2 => Some(WatcherType::Data),
            3 => Some(WatcherType::Any),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn event_and_state_codes_round_trip() {
        for c in -200..200 {
            assert_eq!(EventType::from_code(c).code(), c);
            assert_eq!(KeeperState::from_code(c).code(), c);
        }
        assert_eq!(EventType::from_code(4), EventType::NodeChildrenChanged);
        assert_eq!(KeeperState::from_code(-112), KeeperState::Expired);
        assert_eq!(KeeperState::from_code(1), KeeperState::Unknown(1));
    }

    #[test]
    fn watch_kinds_reject_unknown_codes() {
        assert_eq!(
            AddWatchMode::from_code(1),
            Some(AddWatchMode::PersistentRecursive)
        );
        assert_eq!(AddWatchMode::from_code(2), None);
        for t in [WatcherType::Children, WatcherType::Data, WatcherType::Any] {
            assert_eq!(WatcherType::from_code(t.code()), Some(t));
        }
        assert_eq!(WatcherType::from_code(0), None);
    }

    #[test]
    fn null_event_path_is_rejected() {
        let b = Bytes::from_static(&[0, 0, 0, 1, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(
            WatcherEvent::decode_exact(b, "WatcherEvent"),
            Err(DecodeError::UnexpectedNull {
                field: "WatcherEvent.path",
                offset: 8
            })
        );
    }
}
