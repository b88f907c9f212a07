//! Request records (one per jute record, fields in jute order) and [`Request`], which ties each
//! to its opcode.

use bytes::{Bytes, BytesMut};

use crate::{
    acl::Acl,
    field::jute_record,
    header::RequestHeader,
    jute::{Reader, Record},
    multi::MultiRequest,
    watch::{AddWatchMode, WatcherType},
    CreateMode, DecodeError, OpCode,
};

jute_record! {
    /// Creates a znode (opcodes create, create2 and createContainer).
    pub struct CreateRequest {
        /// The znode, or for sequential modes the prefix of its name.
        pub path: String = "path",
        /// The initial data; `None` is stored as null and reads back as null.
        pub data: Option<Bytes> = "data",
        /// The ACL; the server refuses an empty one.
        pub acl: Vec<Acl> = "acl",
        /// The kind of znode (jute field `flags`).
        pub mode: CreateMode = "flags",
    }
}

jute_record! {
    /// Creates a znode with a time-to-live (opcode createTTL).
    pub struct CreateTtlRequest {
        /// The znode, or for sequential modes the prefix of its name.
        pub path: String = "path",
        /// The initial data.
        pub data: Option<Bytes> = "data",
        /// The ACL.
        pub acl: Vec<Acl> = "acl",
        /// A TTL mode (jute field `flags`).
        pub mode: CreateMode = "flags",
        /// Milliseconds without modification (and without children) before deletion.
        pub ttl: i64 = "ttl",
    }
}

jute_record! {
    /// Deletes a znode.
    pub struct DeleteRequest {
        /// The znode.
        pub path: String = "path",
        /// The expected data version, -1 for any.
        pub version: i32 = "version",
    }
}

jute_record! {
    /// Reads a znode's `Stat`.
    pub struct ExistsRequest {
        /// The znode.
        pub path: String = "path",
        /// Leave a data watch (set even when the znode does not exist).
        pub watch: bool = "watch",
    }
}

jute_record! {
    /// Reads a znode's data and `Stat`.
    pub struct GetDataRequest {
        /// The znode.
        pub path: String = "path",
        /// Leave a data watch.
        pub watch: bool = "watch",
    }
}

jute_record! {
    /// Replaces a znode's data.
    pub struct SetDataRequest {
        /// The znode.
        pub path: String = "path",
        /// The new data.
        pub data: Option<Bytes> = "data",
        /// The expected data version, -1 for any.
        pub version: i32 = "version",
    }
}

jute_record! {
    /// Reads a znode's ACL.
    pub struct GetAclRequest {
        /// The znode.
        pub path: String = "path",
    }
}

jute_record! {
    /// Replaces a znode's ACL.
    pub struct SetAclRequest {
        /// The znode.
        pub path: String = "path",
        /// The new ACL.
        pub acl: Vec<Acl> = "acl",
        /// The expected ACL version, -1 for any.
        pub version: i32 = "version",
    }
}

jute_record! {
    /// Lists a znode's children (opcodes getChildren and getChildren2).
    pub struct GetChildrenRequest {
        /// The znode.
        pub path: String = "path",
        /// Leave a child watch.
        pub watch: bool = "watch",
    }
}

jute_record! {
    /// Waits until the connected server has caught up with the leader.
    pub struct SyncRequest {
        /// The znode (the server only echoes it).
        pub path: String = "path",
    }
}

jute_record! {
    /// Checks a znode's data version inside a multi.
    pub struct CheckVersionRequest {
        /// The znode.
        pub path: String = "path",
        /// The expected data version.
        pub version: i32 = "version",
    }
}

jute_record! {
    /// Changes the ensemble membership, incrementally or as a whole (`None` = not given).
    pub struct ReconfigRequest {
        /// Comma-separated server specs to add.
        pub joining_servers: Option<String> = "joiningServers",
        /// Comma-separated server ids to remove.
        pub leaving_servers: Option<String> = "leavingServers",
        /// The complete new membership (non-incremental reconfig).
        pub new_members: Option<String> = "newMembers",
        /// The config version expected, -1 for any.
        pub cur_config_id: i64 = "curConfigId",
    }
}

jute_record! {
    /// Asks about or removes watches (opcodes checkWatches and removeWatches).
    pub struct RemoveWatchesRequest {
        /// The znode.
        pub path: String = "path",
        /// Which watches (jute field `type`).
        pub watcher_type: WatcherType = "type",
    }
}

jute_record! {
    manual_debug
    /// Adds an authentication identity to the session (xid -4). `Debug` hides the
    /// credentials.
    pub struct AuthPacket {
        /// Always 0.
        pub auth_type: i32 = "type",
        /// The auth scheme, e.g. `digest`.
        pub scheme: String = "scheme",
        /// The scheme-specific credentials, e.g. `user:password`.
        pub auth: Option<Bytes> = "auth",
    }
}

impl std::fmt::Debug for AuthPacket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthPacket")
            .field("auth_type", &self.auth_type)
            .field("scheme", &self.scheme)
            .field("auth", &crate::redact::optional(&self.auth))
            .finish()
    }
}

jute_record! {
    /// Re-registers watches after a reconnect; the server fires those whose znode changed
    /// after `relative_zxid`.
    pub struct SetWatches {
        /// The last zxid the client saw.
        pub relative_zxid: i64 = "relativeZxid",
        /// Paths with data watches.
        pub data_watches: Vec<String> = "dataWatches",
        /// Paths with exists watches.
        pub exist_watches: Vec<String> = "existWatches",
        /// Paths with child watches.
        pub child_watches: Vec<String> = "childWatches",
    }
}

jute_record! {
    /// [`SetWatches`] plus persistent watches.
    pub struct SetWatches2 {
        /// The last zxid the client saw.
        pub relative_zxid: i64 = "relativeZxid",
        /// Paths with data watches.
        pub data_watches: Vec<String> = "dataWatches",
        /// Paths with exists watches.
        pub exist_watches: Vec<String> = "existWatches",
        /// Paths with child watches.
        pub child_watches: Vec<String> = "childWatches",
        /// Paths with persistent watches.
        pub persistent_watches: Vec<String> = "persistentWatches",
        /// Paths with persistent recursive watches.
        pub persistent_recursive_watches: Vec<String> = "persistentRecursiveWatches",
    }
}

jute_record! {
    /// A SASL token for the server.
    pub struct GetSaslRequest {
        /// The token.
        pub token: Option<Bytes> = "token",
    }
}

jute_record! {
    /// Lists the session's ephemeral znodes under a prefix.
    pub struct GetEphemeralsRequest {
        /// The path prefix (`/` for all).
        pub prefix_path: String = "prefixPath",
    }
}

jute_record! {
    /// Counts all descendants of a znode.
    pub struct GetAllChildrenNumberRequest {
        /// The znode.
        pub path: String = "path",
    }
}

jute_record! {
    /// Adds a persistent watch.
    pub struct AddWatchRequest {
        /// The znode.
        pub path: String = "path",
        /// Persistent or persistent recursive.
        pub mode: AddWatchMode = "mode",
    }
}

/// A client request: the body that follows a [`RequestHeader`], tagged by its opcode.
///
/// Several opcodes share a record (create/create2/createContainer, getChildren/getChildren2,
/// checkWatches/removeWatches, multi/multiRead), so the variant, not the record, picks the
/// opcode.
///
/// ```
/// use bytes::BytesMut;
/// use zk_proto::{Acl, CreateMode, CreateRequest, OpCode, Request};
///
/// let req = Request::Create2(CreateRequest {
///     path: "/app".into(),
///     data: Some("hello".into()),
///     acl: Acl::open_unsafe(),
///     mode: CreateMode::Persistent,
/// });
/// assert_eq!(req.op_code(), OpCode::Create2);
/// let mut buf = BytesMut::new();
/// req.encode(7, &mut buf); // header and body, no length prefix
/// let (header, back) = Request::decode(buf.freeze()).unwrap();
/// assert_eq!((header.xid, header.op), (7, 15));
/// assert_eq!(back, req);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// create (1).
    Create(CreateRequest),
    /// create2 (15): like create, and the reply has the `Stat`.
    Create2(CreateRequest),
    /// createContainer (19).
    CreateContainer(CreateRequest),
    /// createTTL (21).
    CreateTtl(CreateTtlRequest),
    /// delete (2).
    Delete(DeleteRequest),
    /// exists (3).
    Exists(ExistsRequest),
    /// getData (4).
    GetData(GetDataRequest),
    /// setData (5).
    SetData(SetDataRequest),
    /// getACL (6).
    GetAcl(GetAclRequest),
    /// setACL (7).
    SetAcl(SetAclRequest),
    /// getChildren (8).
    GetChildren(GetChildrenRequest),
    /// getChildren2 (12): the reply has the `Stat` too.
    GetChildren2(GetChildrenRequest),
    /// sync (9).
    Sync(SyncRequest),
    /// check (13); the server only accepts it inside a multi.
    Check(CheckVersionRequest),
    /// multi (14): write operations, applied atomically.
    Multi(MultiRequest),
    /// multiRead (22): read operations.
    MultiRead(MultiRequest),
    /// reconfig (16).
    Reconfig(ReconfigRequest),
    /// checkWatches (17).
    CheckWatches(RemoveWatchesRequest),
    /// removeWatches (18).
    RemoveWatches(RemoveWatchesRequest),
    /// auth (100), sent with xid -4.
    Auth(AuthPacket),
    /// setWatches (101), sent with xid -8.
    SetWatches(SetWatches),
    /// setWatches2 (105), sent with xid -8.
    SetWatches2(SetWatches2),
    /// sasl (102).
    Sasl(GetSaslRequest),
    /// getEphemerals (103).
    GetEphemerals(GetEphemeralsRequest),
    /// getAllChildrenNumber (104).
    GetAllChildrenNumber(GetAllChildrenNumberRequest),
    /// addWatch (106).
    AddWatch(AddWatchRequest),
    /// whoAmI (107), no body.
    WhoAmI,
    /// ping (11), no body, sent with xid -2.
    Ping,
    /// closeSession (-11), no body.
    CloseSession,
}

impl Request {
    /// The opcode that goes in the request header.
    pub fn op_code(&self) -> OpCode {
        match self {
            Request::Create(_) => OpCode::Create,
            Request::Create2(_) => OpCode::Create2,
            Request::CreateContainer(_) => OpCode::CreateContainer,
            Request::CreateTtl(_) => OpCode::CreateTtl,
            Request::Delete(_) => OpCode::Delete,
            Request::Exists(_) => OpCode::Exists,
            Request::GetData(_) => OpCode::GetData,
            Request::SetData(_) => OpCode::SetData,
            Request::GetAcl(_) => OpCode::GetAcl,
            Request::SetAcl(_) => OpCode::SetAcl,
            Request::GetChildren(_) => OpCode::GetChildren,
            Request::GetChildren2(_) => OpCode::GetChildren2,
            Request::Sync(_) => OpCode::Sync,
            Request::Check(_) => OpCode::Check,
            Request::Multi(_) => OpCode::Multi,
            Request::MultiRead(_) => OpCode::MultiRead,
            Request::Reconfig(_) => OpCode::Reconfig,
            Request::CheckWatches(_) => OpCode::CheckWatches,
            Request::RemoveWatches(_) => OpCode::RemoveWatches,
            Request::Auth(_) => OpCode::Auth,
            Request::SetWatches(_) => OpCode::SetWatches,
            Request::SetWatches2(_) => OpCode::SetWatches2,
            Request::Sasl(_) => OpCode::Sasl,
            Request::GetEphemerals(_) => OpCode::GetEphemerals,
            Request::GetAllChildrenNumber(_) => OpCode::GetAllChildrenNumber,
            Request::AddWatch(_) => OpCode::AddWatch,
            Request::WhoAmI => OpCode::WhoAmI,
            Request::Ping => OpCode::Ping,
            Request::CloseSession => OpCode::CloseSession,
        }
    }

    /// Appends the body (without header).
    pub fn encode_body(&self, buf: &mut BytesMut) {
        match self {
            Request::Create(r) | Request::Create2(r) | Request::CreateContainer(r) => r.encode(buf),
            Request::CreateTtl(r) => r.encode(buf),
            Request::Delete(r) => r.encode(buf),
            Request::Exists(r) => r.encode(buf),
            Request::GetData(r) => r.encode(buf),
            Request::SetData(r) => r.encode(buf),
            Request::GetAcl(r) => r.encode(buf),
            Request::SetAcl(r) => r.encode(buf),
            Request::GetChildren(r) | Request::GetChildren2(r) => r.encode(buf),
            Request::Sync(r) => r.encode(buf),
            Request::Check(r) => r.encode(buf),
            Request::Multi(r) | Request::MultiRead(r) => r.encode(buf),
            Request::Reconfig(r) => r.encode(buf),
            Request::CheckWatches(r) | Request::RemoveWatches(r) => r.encode(buf),
            Request::Auth(r) => r.encode(buf),
            Request::SetWatches(r) => r.encode(buf),
            Request::SetWatches2(r) => r.encode(buf),
            Request::Sasl(r) => r.encode(buf),
            Request::GetEphemerals(r) => r.encode(buf),
            Request::GetAllChildrenNumber(r) => r.encode(buf),
            Request::AddWatch(r) => r.encode(buf),
            Request::WhoAmI | Request::Ping | Request::CloseSession => {}
        }
    }

    /// Appends the [`RequestHeader`] and the body. The caller adds the frame's length prefix
    /// (see [`FrameCodec::encode_with`](crate::FrameCodec::encode_with)).
    pub fn encode(&self, xid: i32, buf: &mut BytesMut) {
        RequestHeader {
            xid,
            op: self.op_code().code(),
        }
        .encode(buf);
        self.encode_body(buf);
    }

    /// Decodes the body of a request with opcode `op`, which must take up the rest of `r`.
    ///
    /// Fails with [`DecodeError::InvalidValue`] for opcodes that are not requests
    /// (notification, error), and with [`DecodeError::MalformedMulti`] for a multi whose
    /// operations do not match its opcode (reads in a multi, writes in a multiRead).
    pub fn decode_body(op: OpCode, r: &mut Reader) -> Result<Request, DecodeError> {
        let req = match op {
            OpCode::Create => Request::Create(body(r, "CreateRequest")?),
            OpCode::Create2 => Request::Create2(body(r, "CreateRequest")?),
            OpCode::CreateContainer => Request::CreateContainer(body(r, "CreateRequest")?),
            OpCode::CreateTtl => Request::CreateTtl(body(r, "CreateTtlRequest")?),
            OpCode::Delete => Request::Delete(body(r, "DeleteRequest")?),
            OpCode::Exists => Request::Exists(body(r, "ExistsRequest")?),
            OpCode::GetData => Request::GetData(body(r, "GetDataRequest")?),
            OpCode::SetData => Request::SetData(body(r, "SetDataRequest")?),
            OpCode::GetAcl => Request::GetAcl(body(r, "GetAclRequest")?),
            OpCode::SetAcl => Request::SetAcl(body(r, "SetAclRequest")?),
            OpCode::GetChildren => Request::GetChildren(body(r, "GetChildrenRequest")?),
            OpCode::GetChildren2 => Request::GetChildren2(body(r, "GetChildrenRequest")?),
            OpCode::Sync => Request::Sync(body(r, "SyncRequest")?),
            OpCode::Check => Request::Check(body(r, "CheckVersionRequest")?),
            OpCode::Multi | OpCode::MultiRead => {
                let offset = r.position();
                let m: MultiRequest = body(r, "MultiRequest")?;
                let read = op == OpCode::MultiRead;
                if m.ops.iter().any(|o| o.is_read() != read) {
                    return Err(DecodeError::MalformedMulti {
                        field: "MultiRequest",
                        offset,
                        reason: if read {
                            "write operation in a multiRead"
                        } else {
                            "read operation in a multi transaction"
                        },
                    });
                }
                if read {
                    Request::MultiRead(m)
                } else {
                    Request::Multi(m)
                }
            }
            OpCode::Reconfig => Request::Reconfig(body(r, "ReconfigRequest")?),
            OpCode::CheckWatches => Request::CheckWatches(body(r, "RemoveWatchesRequest")?),
            OpCode::RemoveWatches => Request::RemoveWatches(body(r, "RemoveWatchesRequest")?),
            OpCode::Auth => Request::Auth(body(r, "AuthPacket")?),
            OpCode::SetWatches => Request::SetWatches(body(r, "SetWatches")?),
            OpCode::SetWatches2 => Request::SetWatches2(body(r, "SetWatches2")?),
            OpCode::Sasl => Request::Sasl(body(r, "GetSaslRequest")?),
            OpCode::GetEphemerals => Request::GetEphemerals(body(r, "GetEphemeralsRequest")?),
            OpCode::GetAllChildrenNumber => {
                Request::GetAllChildrenNumber(body(r, "GetAllChildrenNumberRequest")?)
            }
            OpCode::AddWatch => Request::AddWatch(body(r, "AddWatchRequest")?),
            OpCode::WhoAmI => empty(r, "WhoAmI", Request::WhoAmI)?,
            OpCode::Ping => empty(r, "Ping", Request::Ping)?,
            OpCode::CloseSession => empty(r, "CloseSession", Request::CloseSession)?,
            OpCode::Notification | OpCode::Error => {
                return Err(DecodeError::InvalidValue {
                    field: "RequestHeader.type",
                    offset: r.position(),
                    value: op.code().into(),
                })
            }
        };
        Ok(req)
    }

    /// Decodes a whole request frame body (after the length prefix): header, then body.
    ///
    /// Unknown opcodes and bytes after the body are errors.
    pub fn decode(frame: Bytes) -> Result<(RequestHeader, Request), DecodeError> {
        let mut r = Reader::new(frame);
        let header = RequestHeader::decode(&mut r)?;
        let invalid = DecodeError::InvalidValue {
            field: "RequestHeader.type",
            offset: 4,
            value: header.op.into(),
        };
        let op = OpCode::from_code(header.op).ok_or_else(|| invalid.clone())?;
        if matches!(op, OpCode::Notification | OpCode::Error) {
            return Err(invalid);
        }
        Ok((header, Request::decode_body(op, &mut r)?))
    }
}

/// Decodes a record that must take up the rest of the frame.
fn body<T: Record>(r: &mut Reader, record: &'static str) -> Result<T, DecodeError> {
    let v = T::decode(r)?;
    r.finish(record)?;
    Ok(v)
}

/// Checks that a request without a body has none.
fn empty(r: &mut Reader, record: &'static str, req: Request) -> Result<Request, DecodeError> {
    r.finish(record)?;
    Ok(req)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multi::MultiOp;
    use bytes::BufMut;

    fn frame(xid: i32, op: i32, body: &[u8]) -> Bytes {
        let mut b = BytesMut::new();
        b.put_i32(xid);
        b.put_i32(op);
        b.put_slice(body);
        b.freeze()
    }

    #[test]
    fn delete_layout() {
        let mut b = BytesMut::new();
        Request::Delete(DeleteRequest {
            path: "/a".into(),
            version: -1,
        })
        .encode(3, &mut b);
        assert_eq!(
            &b[..],
            &[0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 2, b'/', b'a', 0xff, 0xff, 0xff, 0xff]
        );
    }

    #[test]
    fn bodiless_requests_have_only_a_header() {
        for (req, xid) in [
            (Request::Ping, crate::xid::PING),
            (Request::WhoAmI, 5),
            (Request::CloseSession, 6),
        ] {
            let mut b = BytesMut::new();
            req.encode(xid, &mut b);
            assert_eq!(b.len(), RequestHeader::LEN);
            assert_eq!(Request::decode(b.freeze()).unwrap().1, req);
        }
        let e = Request::decode(frame(5, 107, &[0]));
        assert!(matches!(
            e,
            Err(DecodeError::TrailingBytes {
                record: "WhoAmI",
                offset: 8,
                len: 1
            })
        ));
    }

    #[test]
    fn unknown_and_non_request_opcodes_are_rejected() {
        for op in [10, 0, -1, 1000] {
            assert_eq!(
                Request::decode(frame(1, op, &[])),
                Err(DecodeError::InvalidValue {
                    field: "RequestHeader.type",
                    offset: 4,
                    value: op.into()
                })
            );
        }
    }

    #[test]
    fn invalid_create_flags_are_rejected() {
        let mut body = BytesMut::new();
        body.put_i32(2);
        body.put_slice(b"/a");
        body.put_i32(-1);
        body.put_i32(0);
        body.put_i32(42);
        assert_eq!(
            Request::decode(frame(1, 1, &body)),
            Err(DecodeError::InvalidValue {
                field: "CreateRequest.flags",
                offset: 22,
                value: 42
            })
        );
    }

    #[test]
    fn invalid_watcher_type_and_add_watch_mode_are_rejected() {
        let e = Request::decode(frame(1, 18, &[0, 0, 0, 0, 0, 0, 0, 9]));
        assert!(matches!(
            e,
            Err(DecodeError::InvalidValue {
                field: "RemoveWatchesRequest.type",
                value: 9,
                ..
            })
        ));
        let e = Request::decode(frame(1, 106, &[0, 0, 0, 0, 0, 0, 0, 2]));
        assert!(matches!(
            e,
            Err(DecodeError::InvalidValue {
                field: "AddWatchRequest.mode",
                value: 2,
                ..
            })
        ));
    }

    #[test]
    fn multi_kind_must_match_the_opcode() {
        let reads = MultiRequest {
            ops: vec![MultiOp::GetData(GetDataRequest {
                path: "/a".into(),
                watch: false,
            })],
        };
        let mut b = BytesMut::new();
        Request::Multi(reads.clone()).encode(1, &mut b);
        assert!(matches!(
            Request::decode(b.freeze()),
            Err(DecodeError::MalformedMulti { offset: 8, .. })
        ));
        let mut b = BytesMut::new();
        Request::MultiRead(reads.clone()).encode(1, &mut b);
        assert_eq!(
            Request::decode(b.freeze()).unwrap().1,
            Request::MultiRead(reads)
        );
    }
}
