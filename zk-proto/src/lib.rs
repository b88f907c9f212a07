//! The ZooKeeper 3.8 client protocol: jute records, opcodes, error codes and framing.
//!
//! This crate does no I/O. Encode requests into a `BytesMut`, decode replies from `Bytes`
//! frames (buffers come back as slices of the frame, not copies), and use [`FrameCodec`] to
//! split a byte stream into frames (also a tokio-util codec with the `codec` feature, on by
//! default; without it the crate depends on no async runtime).
//!
//! - [`Request`] and [`Response`] tie each record to its [`OpCode`];
//!   [`decode_reply`] and [`decode_notification`] decode whole server frames.
//! - [`ConnectRequest`] and [`ConnectResponse`] are the handshake (no header).
//! - [`MultiRequest`] and [`MultiResponse`] are transactions and batched reads.
//! - [`validate_path`] applies the Java client's path rules.
//!
//! Decoders never panic on malformed input, never allocate more than the frame can justify,
//! and report what was wrong and where as a [`DecodeError`].

#![warn(missing_docs)]

pub mod acl;
pub mod connect;
pub mod create_mode;
pub mod decode_error;
pub mod error_code;
mod field;
pub mod frame;
pub mod header;
pub mod jute;
pub mod multi;
pub mod opcode;
pub mod path;
mod redact;
pub mod reply_body;
pub mod request;
pub mod response;
pub mod stat;
pub mod watch;

pub use acl::{Acl, Id, Perms};
pub use connect::{ConnectRequest, ConnectResponse};
pub use create_mode::CreateMode;
pub use decode_error::{DecodeError, FrameError};
pub use error_code::ErrorCode;
pub use frame::{FrameCodec, DEFAULT_MAX_FRAME_LEN};
pub use header::{MultiHeader, ReplyHeader, RequestHeader};
pub use multi::{MultiOp, MultiRequest, MultiResponse, MultiResult};
pub use opcode::{xid, OpCode};
pub use path::{validate_path, PathError, PathKind};
pub use reply_body::ReplyBody;
pub use request::{
    AddWatchRequest, AuthPacket, CheckVersionRequest, CreateRequest, CreateTtlRequest,
    DeleteRequest, ExistsRequest, GetAclRequest, GetAllChildrenNumberRequest, GetChildrenRequest,
    GetDataRequest, GetEphemeralsRequest, GetSaslRequest, ReconfigRequest, RemoveWatchesRequest,
    Request, SetAclRequest, SetDataRequest, SetWatches, SetWatches2, SyncRequest,
};
pub use response::{
    decode_notification, decode_reply, ClientInfo, Create2Response, CreateResponse, ErrorResponse,
    GetAclResponse, GetAllChildrenNumberResponse, GetChildren2Response, GetChildrenResponse,
    GetDataResponse, GetEphemeralsResponse, GetSaslResponse, Response, SyncResponse,
    WhoAmIResponse,
};
pub use stat::Stat;
pub use watch::{AddWatchMode, EventType, KeeperState, WatcherEvent, WatcherType};
