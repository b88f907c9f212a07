//! The identity of a ZooKeeper session.

use std::{fmt, num::NonZeroI64};

/// The id the ensemble gave a session. Never zero: ZooKeeper uses 0 for "no session" (a
/// connect request for a new session, a znode that is not ephemeral), which is `None` here.
///
/// It prints in hex, as the server logs it. With the default
/// [`OnExpiry::NewSession`](crate::OnExpiry::NewSession) a client's session id changes when
/// the ensemble expires its session: the new id comes with
/// [`SessionEvent::Connected`](crate::SessionEvent::Connected).
///
/// ```no_run
/// # async fn f(client: zk_session::Client) {
/// use zk_session::{SessionEvent, SessionId};
///
/// let mut events = client.session_events();
/// while let Some(event) = events.next().await {
///     if let SessionEvent::Connected { session_id } = event {
///         println!("now in session {session_id}"); // e.g. "now in session 0x100a3b2c4d0001"
///     }
/// }
/// # }
/// ```
///
/// ```rust
/// use zk_session::SessionId;
///
/// let id = SessionId::new(0x1000_0a2b_3c4d_0001).unwrap();
/// assert_eq!(id.to_string(), "0x10000a2b3c4d0001");
/// assert_eq!(id.get(), 0x1000_0a2b_3c4d_0001);
/// assert_eq!(SessionId::new(0), None); // "no session"
/// // A znode's ephemeral owner, compared with a session.
/// let ephemeral_owner: i64 = 0x1000_0a2b_3c4d_0001;
/// assert_eq!(SessionId::new(ephemeral_owner), Some(id));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(NonZeroI64);

impl SessionId {
    /// The session with id `raw`, or `None` for 0, which names no session.
    ///
    /// See the example on [`SessionId`].
    pub const fn new(raw: i64) -> Option<SessionId> {
        match NonZeroI64::new(raw) {
            Some(n) => Some(SessionId(n)),
            None => None,
        }
    }

    /// The id as the protocol carries it (as in [`Stat::ephemeral_owner`](crate::Stat)).
    ///
    /// See the example on [`SessionId`].
    pub const fn get(self) -> i64 {
        self.0.get()
    }
}

impl From<SessionId> for i64 {
    fn from(id: SessionId) -> i64 {
        id.get()
    }
}

/// `0x…`, as ZooKeeper logs session ids.
impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.get())
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({self})")
    }
}

impl fmt::LowerHex for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.get(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_no_session_and_the_rest_round_trip() {
        assert_eq!(SessionId::new(0), None);
        for raw in [1, -1, i64::MAX, i64::MIN, 0x1000_0a2b_3c4d_0001] {
            let id = SessionId::new(raw).unwrap();
            assert_eq!(id.get(), raw);
            assert_eq!(i64::from(id), raw);
        }
    }

    #[test]
    fn it_prints_in_hex_as_the_server_logs_it() {
        let id = SessionId::new(0x100_0a2b_0001).unwrap();
        assert_eq!(id.to_string(), "0x1000a2b0001");
        assert_eq!(format!("{id:?}"), "SessionId(0x1000a2b0001)");
        assert_eq!(format!("{id:x}"), "1000a2b0001");
        // Negative ids (a server id of 128 or more) print as the server's unsigned hex.
        assert_eq!(
            SessionId::new(-1).unwrap().to_string(),
            "0xffffffffffffffff"
        );
    }

    #[test]
    fn option_of_it_is_as_small_as_an_i64() {
        assert_eq!(std::mem::size_of::<Option<SessionId>>(), 8);
    }
}
