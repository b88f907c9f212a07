//! Reply records, [`Response`] (a reply body decoded according to the request's opcode), and
//! the functions that decode whole reply and notification frames.

use bytes::{Bytes, BytesMut};

use crate::{
    acl::Acl,
    field::jute_record,
    header::ReplyHeader,
    jute::{Reader, Record},
    multi::MultiResponse,
    watch::WatcherEvent,
    xid, DecodeError, OpCode, Stat,
};

jute_record! {
    /// The reply to create: the path of the created znode (with any sequence suffix).
    pub struct CreateResponse {
        /// The created znode.
        pub path: String = "path",
    }
}

jute_record! {
    /// The reply to create2, createContainer and createTTL.
    pub struct Create2Response {
        /// The created znode.
        pub path: String = "path",
        /// Its `Stat`.
        pub stat: Stat = "stat",
    }
}

jute_record! {
    /// The reply to getData (and to reconfig, with the new configuration as data).
    pub struct GetDataResponse {
        /// The data, a slice of the reply frame; `None` when the znode's data is null.
        pub data: Option<Bytes> = "data",
        /// The znode's `Stat`.
        pub stat: Stat = "stat",
    }
}

jute_record! {
    /// The reply to getACL.
    pub struct GetAclResponse {
        /// The ACL.
        pub acl: Vec<Acl> = "acl",
        /// The znode's `Stat`.
        pub stat: Stat = "stat",
    }
}

jute_record! {
    /// The reply to getChildren.
    pub struct GetChildrenResponse {
        /// The children's names (not paths), unordered.
        pub children: Vec<String> = "children",
    }
}

jute_record! {
    /// The reply to getChildren2.
    pub struct GetChildren2Response {
        /// The children's names (not paths), unordered.
        pub children: Vec<String> = "children",
        /// The parent's `Stat`.
        pub stat: Stat = "stat",
    }
}

jute_record! {
    /// The reply to sync.
    pub struct SyncResponse {
        /// The path the request named.
        pub path: String = "path",
    }
}

jute_record! {
    /// The reply to a SASL request (jute `SetSASLResponse`).
    pub struct GetSaslResponse {
        /// The server's token.
        pub token: Option<Bytes> = "token",
    }
}

jute_record! {
    /// The reply to getEphemerals.
    pub struct GetEphemeralsResponse {
        /// The paths of the session's ephemeral znodes.
        pub ephemerals: Vec<String> = "ephemerals",
    }
}

jute_record! {
    /// The reply to getAllChildrenNumber.
    pub struct GetAllChildrenNumberResponse {
        /// The number of descendants.
        pub total_number: i32 = "totalNumber",
    }
}

jute_record! {
    /// One identity the session is authenticated as.
    pub struct ClientInfo {
        /// The auth scheme.
        pub auth_scheme: String = "authScheme",
        /// The user within the scheme.
        pub user: String = "user",
    }
}

jute_record! {
    /// The reply to whoAmI.
    pub struct WhoAmIResponse {
        /// The session's identities.
        pub client_info: Vec<ClientInfo> = "clientInfo",
    }
}

jute_record! {
    /// An error code as a body: the reply to addWatch, and failed results inside a multi.
    pub struct ErrorResponse {
        /// The error code.
        pub err: i32 = "err",
    }
}

/// A reply body, decoded according to the opcode of the request it answers.
///
/// | opcodes | variant |
/// |---|---|
/// | delete, ping, auth, setWatches, setWatches2, checkWatches, removeWatches, check, closeSession | `Empty` |
/// | create | `Create` |
/// | create2, createContainer, createTTL | `Create2` |
/// | exists, setData, setACL | `Stat` |
/// | getData, reconfig | `GetData` |
/// | multi, multiRead | `Multi` |
/// | addWatch, error | `Error` |
///
/// and the obvious one for the rest.
///
/// ```
/// use bytes::{BufMut, BytesMut};
/// use zk_proto::{decode_reply, jute::Record, OpCode, Response, Stat};
///
/// let mut frame = BytesMut::new();
/// frame.put_i32(5); // xid
/// frame.put_i64(0x100); // zxid
/// frame.put_i32(0); // err
/// Stat { version: 2, ..Stat::default() }.encode(&mut frame);
/// let (header, body) = decode_reply(frame.freeze(), OpCode::Exists).unwrap();
/// assert_eq!(header.xid, 5);
/// assert!(matches!(body, Some(Response::Stat(s)) if s.version == 2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// No body.
    Empty,
    /// create.
    Create(CreateResponse),
    /// create2, createContainer, createTTL.
    Create2(Create2Response),
    /// exists, setData, setACL.
    Stat(Stat),
    /// getData, reconfig.
    GetData(GetDataResponse),
    /// getACL.
    GetAcl(GetAclResponse),
    /// getChildren.
    GetChildren(GetChildrenResponse),
    /// getChildren2.
    GetChildren2(GetChildren2Response),
    /// sync.
    Sync(SyncResponse),
    /// multi, multiRead.
    Multi(MultiResponse),
    /// sasl.
    Sasl(GetSaslResponse),
    /// getEphemerals.
    GetEphemerals(GetEphemeralsResponse),
    /// getAllChildrenNumber.
    GetAllChildrenNumber(GetAllChildrenNumberResponse),
    /// whoAmI.
    WhoAmI(WhoAmIResponse),
    /// addWatch.
    Error(ErrorResponse),
}

impl Response {
    /// Decodes the body of a successful reply to a request with opcode `op`; the body must
    /// take up the rest of `r`.
    ///
    /// [`OpCode::Notification`] is an [`DecodeError::InvalidValue`]: notifications are
    /// decoded by [`decode_notification`].
    pub fn decode(op: OpCode, r: &mut Reader) -> Result<Response, DecodeError> {
        let resp = match op {
            OpCode::Delete
            | OpCode::Ping
            | OpCode::Auth
            | OpCode::SetWatches
            | OpCode::SetWatches2
            | OpCode::CheckWatches
            | OpCode::RemoveWatches
            | OpCode::Check
            | OpCode::CloseSession => Response::Empty,
            OpCode::Create => Response::Create(CreateResponse::decode(r)?),
            OpCode::Create2 | OpCode::CreateContainer | OpCode::CreateTtl => {
                Response::Create2(Create2Response::decode(r)?)
            }
            OpCode::Exists | OpCode::SetData | OpCode::SetAcl => Response::Stat(Stat::decode(r)?),
            OpCode::GetData | OpCode::Reconfig => Response::GetData(GetDataResponse::decode(r)?),
            OpCode::GetAcl => Response::GetAcl(GetAclResponse::decode(r)?),
            OpCode::GetChildren => Response::GetChildren(GetChildrenResponse::decode(r)?),
            OpCode::GetChildren2 => Response::GetChildren2(GetChildren2Response::decode(r)?),
            OpCode::Sync => Response::Sync(SyncResponse::decode(r)?),
            OpCode::Multi | OpCode::MultiRead => Response::Multi(MultiResponse::decode(r)?),
            OpCode::Sasl => Response::Sasl(GetSaslResponse::decode(r)?),
            OpCode::GetEphemerals => Response::GetEphemerals(GetEphemeralsResponse::decode(r)?),
            OpCode::GetAllChildrenNumber => {
                Response::GetAllChildrenNumber(GetAllChildrenNumberResponse::decode(r)?)
            }
            OpCode::WhoAmI => Response::WhoAmI(WhoAmIResponse::decode(r)?),
            OpCode::AddWatch | OpCode::Error => Response::Error(ErrorResponse::decode(r)?),
            OpCode::Notification => {
                return Err(DecodeError::InvalidValue {
                    field: "Response.op",
                    offset: r.position(),
                    value: op.code().into(),
                })
            }
        };
        r.finish(resp.record_name())?;
        Ok(resp)
    }

    /// Appends the body (nothing for [`Response::Empty`]).
    pub fn encode(&self, buf: &mut BytesMut) {
        match self {
            Response::Empty => {}
            Response::Create(v) => v.encode(buf),
            Response::Create2(v) => v.encode(buf),
            Response::Stat(v) => v.encode(buf),
            Response::GetData(v) => v.encode(buf),
            Response::GetAcl(v) => v.encode(buf),
            Response::GetChildren(v) => v.encode(buf),
            Response::GetChildren2(v) => v.encode(buf),
            Response::Sync(v) => v.encode(buf),
            Response::Multi(v) => v.encode(buf),
            Response::Sasl(v) => v.encode(buf),
            Response::GetEphemerals(v) => v.encode(buf),
            Response::GetAllChildrenNumber(v) => v.encode(buf),
            Response::WhoAmI(v) => v.encode(buf),
            Response::Error(v) => v.encode(buf),
        }
    }

    /// The record's name, for errors.
    ///
    /// ```
    /// assert_eq!(zk_proto::Response::Empty.record_name(), "Empty");
    /// ```
    pub fn record_name(&self) -> &'static str {
        match self {
            Response::Empty => "Empty",
            Response::Create(_) => "CreateResponse",
            Response::Create2(_) => "Create2Response",
            Response::Stat(_) => "Stat",
            Response::GetData(_) => "GetDataResponse",
            Response::GetAcl(_) => "GetAclResponse",
            Response::GetChildren(_) => "GetChildrenResponse",
            Response::GetChildren2(_) => "GetChildren2Response",
            Response::Sync(_) => "SyncResponse",
            Response::Multi(_) => "MultiResponse",
            Response::Sasl(_) => "GetSaslResponse",
            Response::GetEphemerals(_) => "GetEphemeralsResponse",
            Response::GetAllChildrenNumber(_) => "GetAllChildrenNumberResponse",
            Response::WhoAmI(_) => "WhoAmIResponse",
            Response::Error(_) => "ErrorResponse",
        }
    }
}

/// Decodes a reply frame (after the length prefix) to a request with opcode `op`.
///
/// The body is decoded only when the header's `err` is 0; otherwise it is `None` and any bytes
/// after the header are ignored, as the Java client does.
pub fn decode_reply(
    frame: Bytes,
    op: OpCode,
) -> Result<(ReplyHeader, Option<Response>), DecodeError> {
    let mut r = Reader::new(frame);
    let header = ReplyHeader::decode(&mut r)?;
    if header.err != 0 {
        return Ok((header, None));
    }
    Ok((header, Some(Response::decode(op, &mut r)?)))
}

/// Decodes a notification frame: reply header with xid -1, then a [`WatcherEvent`].
///
/// ```
/// use bytes::{BufMut, BytesMut};
/// use zk_proto::{decode_notification, jute::Record, EventType, KeeperState, WatcherEvent};
///
/// let ev = WatcherEvent {
///     event_type: EventType::NodeDeleted,
///     state: KeeperState::SyncConnected,
///     path: "/x".into(),
/// };
/// let mut frame = BytesMut::new();
/// frame.put_i32(-1);
/// frame.put_i64(-1);
/// frame.put_i32(0);
/// ev.encode(&mut frame);
/// assert_eq!(decode_notification(frame.freeze()).unwrap().1, ev);
/// ```
pub fn decode_notification(frame: Bytes) -> Result<(ReplyHeader, WatcherEvent), DecodeError> {
    let mut r = Reader::new(frame);
    let header = ReplyHeader::decode(&mut r)?;
    if header.xid != xid::NOTIFICATION {
        return Err(DecodeError::InvalidValue {
            field: "ReplyHeader.xid",
            offset: 0,
            value: header.xid.into(),
        });
    }
    let event = WatcherEvent::decode(&mut r)?;
    r.finish("WatcherEvent")?;
    Ok((header, event))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EventType, KeeperState};
    use bytes::BufMut;

    fn reply(xid: i32, err: i32, body: &[u8]) -> Bytes {
        let mut b = BytesMut::new();
        b.put_i32(xid);
        b.put_i64(7);
        b.put_i32(err);
        b.put_slice(body);
        b.freeze()
    }

    #[test]
    fn error_replies_have_no_body_and_ignore_trailing_bytes() {
        let (h, body) = decode_reply(reply(3, -101, &[1, 2, 3]), OpCode::GetData).unwrap();
        assert_eq!(h.error_code(), crate::ErrorCode::NoNode);
        assert_eq!(body, None);
    }

    #[test]
    fn empty_replies_reject_trailing_bytes() {
        assert_eq!(
            decode_reply(reply(3, 0, &[]), OpCode::Delete).unwrap().1,
            Some(Response::Empty)
        );
        assert_eq!(
            decode_reply(reply(3, 0, &[0]), OpCode::Delete),
            Err(DecodeError::TrailingBytes {
                record: "Empty",
                offset: 16,
                len: 1
            })
        );
    }

    #[test]
    fn get_data_keeps_null_apart_from_empty_and_does_not_copy() {
        let mut body = BytesMut::new();
        body.put_i32(-1);
        Stat::default().encode(&mut body);
        let (_, r) = decode_reply(reply(1, 0, &body), OpCode::GetData).unwrap();
        assert!(matches!(
            r,
            Some(Response::GetData(GetDataResponse { data: None, .. }))
        ));

        let mut body = BytesMut::new();
        body.put_i32(3);
        body.put_slice(b"abc");
        Stat::default().encode(&mut body);
        let frame = reply(1, 0, &body);
        let Some(Response::GetData(g)) = decode_reply(frame.clone(), OpCode::GetData).unwrap().1
        else {
            panic!("not GetData")
        };
        assert_eq!(g.data.as_deref(), Some(&b"abc"[..]));
        assert_eq!(g.data.unwrap().as_ptr(), frame[20..].as_ptr());
    }

    #[test]
    fn add_watch_reply_is_an_error_response() {
        let (_, r) = decode_reply(reply(1, 0, &[0, 0, 0, 0]), OpCode::AddWatch).unwrap();
        assert_eq!(r, Some(Response::Error(ErrorResponse { err: 0 })));
    }

    #[test]
    fn notification_opcode_is_not_a_reply() {
        assert!(matches!(
            decode_reply(reply(1, 0, &[]), OpCode::Notification),
            Err(DecodeError::InvalidValue { .. })
        ));
    }

    #[test]
    fn notification_layout() {
        let mut body = BytesMut::new();
        body.put_i32(4);
        body.put_i32(3);
        body.put_i32(2);
        body.put_slice(b"/q");
        let (h, ev) = decode_notification(reply(-1, 0, &body)).unwrap();
        assert_eq!(h.xid, -1);
        assert_eq!(ev.event_type, EventType::NodeChildrenChanged);
        assert_eq!(ev.state, KeeperState::SyncConnected);
        assert_eq!(ev.path, "/q");
        assert!(matches!(
            decode_notification(reply(1, 0, &body)),
            Err(DecodeError::InvalidValue {
                field: "ReplyHeader.xid",
                value: 1,
                ..
            })
        ));
    }

    #[test]
    fn who_am_i_layout() {
        let v = WhoAmIResponse {
            client_info: vec![ClientInfo {
                auth_scheme: "ip".into(),
                user: "127.0.0.1".into(),
            }],
        };
        let mut b = BytesMut::new();
        v.encode(&mut b);
        assert_eq!(&b[..10], &[0, 0, 0, 1, 0, 0, 0, 2, b'i', b'p']);
        let mut r = Reader::new(b.freeze());
        assert_eq!(
            Response::decode(OpCode::WhoAmI, &mut r),
            Ok(Response::WhoAmI(v))
        );
    }
}
