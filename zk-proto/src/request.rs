//! Request records (one per jute record, fields in jute order) and [`Request`], which ties each
//! to its opcode.

use bytes::{Bytes, BytesMut};

use crate::{
    header::RequestHeader,
    jute::{Reader, Record},
    multi::MultiRequest,
    DecodeError, OpCode,
};

// This file holds `Request` and its framing; the records are declared beside it.
mod records;
#[cfg(test)]
mod tests;

pub use self::records::{
    AddWatchRequest, AuthPacket, CheckVersionRequest, CreateRequest, CreateTtlRequest,
    DeleteRequest, ExistsRequest, GetAclRequest, GetAllChildrenNumberRequest, GetChildrenRequest,
    GetDataRequest, GetEphemeralsRequest, GetSaslRequest, ReconfigRequest, RemoveWatchesRequest,
    SetAclRequest, SetDataRequest, SetWatches, SetWatches2, SyncRequest,
};

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
            OpCode::Multi | OpCode::MultiRead => multi(r, op == OpCode::MultiRead)?,
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

/// Decodes a multi (`read` false) or multiRead body, whose operations must all be writes
/// or all reads accordingly.
fn multi(r: &mut Reader, read: bool) -> Result<Request, DecodeError> {
    let offset = r.position();
    let m: MultiRequest = body(r, "MultiRequest")?;
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
    Ok(if read {
        Request::MultiRead(m)
    } else {
        Request::Multi(m)
    })
}

/// Checks that a request without a body has none.
fn empty(r: &mut Reader, record: &'static str, req: Request) -> Result<Request, DecodeError> {
    r.finish(record)?;
    Ok(req)
}
