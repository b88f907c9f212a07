//! Log events through the `tracing` crate when the `tracing` feature is on; without it the
//! macros expand to nothing and the spans ([`Spans`]) are empty, so call sites need no `cfg`
//! and cost nothing.
//!
//! Fields use ZooKeeper's words: `session_id` (hex, as the server logs it), `server`
//! (`host:port`), `xid`, `zxid`, `op`, `path` (the znode path as the caller gave it, under
//! the chroot), `err`. What is never logged: znode data, ACLs, passwords, auth data,
//! certificates and keys, session passwords. Levels: `info` for state changes, expiry and new
//! sessions, `warn` for refused credentials and a pass over every server that all failed,
//! `debug` for each attempt, each failed attempt and each failed request. The events go in a
//! `session` span and, while a connection is tried or up, its `connection` span (see
//! [`Spans`]); the crate documentation lists them all.

#[cfg(feature = "tracing")]
macro_rules! debug {
    ($($event:tt)*) => { ::tracing::debug!($($event)*) };
}
#[cfg(not(feature = "tracing"))]
macro_rules! debug {
    ($($event:tt)*) => {};
}

#[cfg(feature = "tracing")]
macro_rules! info {
    ($($event:tt)*) => { ::tracing::info!($($event)*) };
}
#[cfg(not(feature = "tracing"))]
macro_rules! info {
    ($($event:tt)*) => {};
}

#[cfg(feature = "tracing")]
macro_rules! warn_event {
    ($($event:tt)*) => { ::tracing::warn!($($event)*) };
}
#[cfg(not(feature = "tracing"))]
macro_rules! warn_event {
    ($($event:tt)*) => {};
}

// The session and connection spans are the async driver's.
#[cfg(feature = "tokio")]
mod spans;

#[cfg(feature = "tokio")]
pub(crate) use spans::Spans;

// `warn` alone would be ambiguous with the built-in attribute.
pub(crate) use {debug, info, warn_event as warn};

/// The znode path `request` is about, as the server sees it (chroot included); `None` for
/// requests without one (multi, reconfig, the session's own). Never data or ACLs.
#[cfg(feature = "tracing")]
pub(crate) fn znode_path(request: &zk_proto::Request) -> Option<&str> {
    use zk_proto::Request as R;
    match request {
        R::Create(r) | R::Create2(r) | R::CreateContainer(r) => Some(&r.path),
        R::CreateTtl(r) => Some(&r.path),
        R::Delete(r) => Some(&r.path),
        R::Exists(r) => Some(&r.path),
        R::GetData(r) => Some(&r.path),
        R::SetData(r) => Some(&r.path),
        R::GetAcl(r) => Some(&r.path),
        R::SetAcl(r) => Some(&r.path),
        R::GetChildren(r) | R::GetChildren2(r) => Some(&r.path),
        R::Sync(r) => Some(&r.path),
        R::Check(r) => Some(&r.path),
        R::CheckWatches(r) | R::RemoveWatches(r) => Some(&r.path),
        R::GetEphemerals(r) => Some(&r.prefix_path),
        R::GetAllChildrenNumber(r) => Some(&r.path),
        R::AddWatch(r) => Some(&r.path),
        R::Multi(_)
        | R::MultiRead(_)
        | R::Reconfig(_)
        | R::Auth(_)
        | R::SetWatches(_)
        | R::SetWatches2(_)
        | R::Sasl(_)
        | R::WhoAmI
        | R::Ping
        | R::CloseSession => None,
    }
}

/// A session id as ZooKeeper logs it: `0x1000a2b3c4d0001`.
#[cfg(feature = "tracing")]
pub(crate) struct SessionId(pub i64);

#[cfg(feature = "tracing")]
impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// A session event by its name (`Connected`, `Ended(Closed)`): the session id it carries is
/// the event's `session_id` field already.
#[cfg(feature = "tracing")]
pub(crate) struct EventName(pub crate::SessionEvent);

#[cfg(feature = "tracing")]
impl std::fmt::Display for EventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let full = format!("{:?}", self.0);
        f.write_str(full.split(" {").next().unwrap_or(&full))
    }
}

/// A server of the connect string as `host:port`.
#[cfg(feature = "tracing")]
pub(crate) struct Server<'a>(pub &'a (String, u16));

#[cfg(feature = "tracing")]
impl std::fmt::Display for Server<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.0 .0, self.0 .1)
    }
}

#[cfg(all(test, feature = "tracing"))]
mod tests {
    use super::*;

    #[test]
    fn a_session_id_is_hex_and_a_server_is_host_colon_port() {
        assert_eq!(
            SessionId(0x1000_0a2b_3c4d_0001).to_string(),
            "0x10000a2b3c4d0001"
        );
        assert_eq!(Server(&("zk1".into(), 2181)).to_string(), "zk1:2181");
    }
}
