//! Operation codes (`ZooDefs.OpCode`) and the reserved xids.

/// The operation a request performs, as carried in `RequestHeader.type`.
///
/// ```
/// use zk_proto::OpCode;
/// assert_eq!(OpCode::from_code(4), Some(OpCode::GetData));
/// assert_eq!(OpCode::CloseSession.code(), -11);
/// assert_eq!(OpCode::from_code(10), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum OpCode {
    /// A watch notification (only ever in replies, with xid -1).
    Notification = 0,
    /// Create a znode; the reply carries its path.
    Create = 1,
    /// Delete a znode.
    Delete = 2,
    /// Read a znode's `Stat`, optionally leaving a watch.
    Exists = 3,
    /// Read a znode's data and `Stat`.
    GetData = 4,
    /// Replace a znode's data.
    SetData = 5,
    /// Read a znode's ACL.
    GetAcl = 6,
    /// Replace a znode's ACL.
    SetAcl = 7,
    /// List a znode's children.
    GetChildren = 8,
    /// Catch the connected server up with the leader.
    Sync = 9,
    /// Keep the session alive (xid -2).
    Ping = 11,
    /// List a znode's children together with its `Stat`.
    GetChildren2 = 12,
    /// Check a znode's version (only meaningful inside a multi).
    Check = 13,
    /// An atomic transaction of write operations.
    Multi = 14,
    /// Create a znode; the reply carries its path and `Stat`.
    Create2 = 15,
    /// Change the ensemble membership.
    Reconfig = 16,
    /// Ask whether a watch exists.
    CheckWatches = 17,
    /// Remove watches.
    RemoveWatches = 18,
    /// Create a container znode.
    CreateContainer = 19,
    /// Create a znode with a time-to-live.
    CreateTtl = 21,
    /// A batch of read operations (no atomicity).
    MultiRead = 22,
    /// Add authentication (xid -4).
    Auth = 100,
    /// Re-register watches after a reconnect.
    SetWatches = 101,
    /// A SASL token exchange.
    Sasl = 102,
    /// List the session's ephemeral znodes.
    GetEphemerals = 103,
    /// Count all descendants of a znode.
    GetAllChildrenNumber = 104,
    /// Re-register watches, including persistent ones.
    SetWatches2 = 105,
    /// Add a persistent (optionally recursive) watch.
    AddWatch = 106,
    /// Ask the server who this session is authenticated as.
    WhoAmI = 107,
    /// Close the session.
    CloseSession = -11,
    /// The type of a failed result inside a multi response.
    Error = -1,
}

impl OpCode {
    /// Every opcode, for tests and tools.
    pub const ALL: &'static [OpCode] = &[
        OpCode::Notification,
        OpCode::Create,
        OpCode::Delete,
        OpCode::Exists,
        OpCode::GetData,
        OpCode::SetData,
        OpCode::GetAcl,
        OpCode::SetAcl,
        OpCode::GetChildren,
        OpCode::Sync,
        OpCode::Ping,
        OpCode::GetChildren2,
        OpCode::Check,
        OpCode::Multi,
        OpCode::Create2,
        OpCode::Reconfig,
        OpCode::CheckWatches,
        OpCode::RemoveWatches,
        OpCode::CreateContainer,
        OpCode::CreateTtl,
        OpCode::MultiRead,
        OpCode::Auth,
        OpCode::SetWatches,
        OpCode::Sasl,
        OpCode::GetEphemerals,
        OpCode::GetAllChildrenNumber,
        OpCode::SetWatches2,
        OpCode::AddWatch,
        OpCode::WhoAmI,
        OpCode::CloseSession,
        OpCode::Error,
    ];

    /// The numeric code.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The opcode for a numeric code, or `None` when the protocol defines no such code.
    pub fn from_code(code: i32) -> Option<OpCode> {
        Self::ALL.iter().copied().find(|op| op.code() == code)
    }
}

/// The xids the protocol reserves for messages that are not ordinary requests.
///
/// Ordinary requests use positive xids; replies with these xids are not matched against the
/// queue of pending requests.
pub mod xid {
    /// A watch notification from the server.
    pub const NOTIFICATION: i32 = -1;
    /// A ping and its reply.
    pub const PING: i32 = -2;
    /// An auth packet and its reply.
    pub const AUTH: i32 = -4;
    /// A SetWatches / SetWatches2 request sent after a reconnect and its reply.
    pub const SET_WATCHES: i32 = -8;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_and_codes_are_distinct() {
        for &op in OpCode::ALL {
            assert_eq!(OpCode::from_code(op.code()), Some(op));
        }
        let mut codes: Vec<i32> = OpCode::ALL.iter().map(|o| o.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), OpCode::ALL.len());
        assert_eq!(OpCode::ALL.len(), 31);
    }

    #[test]
    fn unassigned_codes_are_none() {
        for c in [10, 20, 23, 99, 108, -2, -10, -12, i32::MIN, i32::MAX] {
            assert_eq!(OpCode::from_code(c), None, "{c}");
        }
    }
}
