//! [`RawConnection`]: ZooKeeper's wire protocol by hand, for testing a server.
//!
//! A client library hides the protocol; a test of a ZooKeeper-compatible server (ZooKeeper
//! itself, or a reimplementation such as ClickHouse Keeper) needs it in the open: send the
//! frames a test chooses, built with zk-proto's records or written byte by byte to be
//! deliberately wrong, and look at each frame the server sends back, decoded. Nothing is
//! sent behind the test's back: no pings, no reconnects, no xids but the ones it picks.
//!
//! The connection is blocking (std's `TcpStream`, with a read and write timeout), like the
//! launcher, so a `#[test]` can use it directly; from async code, run it on
//! `tokio::task::spawn_blocking`.
//!
//! ```no_run
//! use bytes::Bytes;
//! use zk_proto::{
//!     Acl, CreateMode, CreateRequest, ErrorCode, GetDataRequest, OpCode, Request, Response,
//! };
//! use zk_testkit::{raw::RawConnection, Standalone};
//!
//! let zk = Standalone::start().unwrap();
//! let mut conn = RawConnection::connect(zk.client_addr()).unwrap();
//! let session = conn.handshake(10_000).unwrap();
//! assert!(!session.is_expired());
//!
//! let create = Request::Create(CreateRequest {
//!     path: "/raw".into(),
//!     data: Some(Bytes::from_static(b"hello")),
//!     acl: Acl::open_unsafe(),
//!     mode: CreateMode::Persistent,
//! });
//! let (header, _) = conn.call(1, &create).unwrap();
//! assert_eq!(header.error_code(), ErrorCode::Ok);
//!
//! let get = Request::GetData(GetDataRequest { path: "/raw".into(), watch: false });
//! let (_, reply) = conn.call(2, &get).unwrap();
//! assert!(matches!(reply, Some(Response::GetData(r)) if r.data.as_deref() == Some(&b"hello"[..])));
//!
//! // A frame no client would send: xid 3, getData, a path of 9 bytes of which 1 is there.
//! conn.send_frame(|b| b.extend_from_slice(&[0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 9, b'/'])).unwrap();
//! let (header, body) = conn.recv_reply(OpCode::GetData).unwrap();
//! assert_eq!(header.error_code(), ErrorCode::MarshallingError); // ZooKeeper 3.8's answer
//! assert!(body.is_none());
//! ```

use std::{
    fmt::Write as _,
    io::{self, Read, Write},
    net::{SocketAddr, TcpStream},
    time::Duration,
};

use bytes::{Bytes, BytesMut};
use zk_proto::{
    decode_notification, decode_reply, jute::Record, xid, ConnectRequest, ConnectResponse,
    DecodeError, FrameCodec, FrameError, OpCode, ReplyHeader, Request, Response, WatcherEvent,
};

/// How long a read or write may block by default.
pub const DEFAULT_IO_TIMEOUT: Duration = Duration::from_secs(10);

/// What went wrong on a [`RawConnection`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RawError {
    /// The socket failed (including a read or write timeout).
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The server's bytes were not a frame, or a frame did not decode as expected.
    #[error("undecodable frame from the server: {0}")]
    Decode(#[from] DecodeError),
    /// A frame to send was larger than the frame limit.
    #[error("cannot frame the request: {0}")]
    Frame(FrameError),
    /// The server answered with an error code where the step needed success.
    #[error("the server answered {0}")]
    Server(zk_proto::ErrorCode),
    /// The server closed the connection where a frame was expected.
    #[error("the server closed the connection")]
    Closed,
}

impl From<FrameError> for RawError {
    fn from(e: FrameError) -> Self {
        match e {
            FrameError::Decode(d) => RawError::Decode(d),
            FrameError::Io(e) => RawError::Io(e),
            other => RawError::Frame(other),
        }
    }
}

/// One TCP connection to a server, spoken to frame by frame; see the
/// [module documentation](self).
#[derive(Debug)]
pub struct RawConnection {
    stream: TcpStream,
    codec: FrameCodec,
    inbuf: BytesMut,
}

impl RawConnection {
    /// Connects to `addr` with [`DEFAULT_IO_TIMEOUT`] for the connect, each read and each
    /// write. Sends nothing: the first frame, normally a [`ConnectRequest`], is the test's.
    pub fn connect(addr: SocketAddr) -> Result<RawConnection, RawError> {
        let stream = TcpStream::connect_timeout(&addr, DEFAULT_IO_TIMEOUT)?;
        stream.set_nodelay(true)?;
        let conn = RawConnection {
            stream,
            codec: FrameCodec::new(),
            inbuf: BytesMut::new(),
        };
        conn.set_timeout(DEFAULT_IO_TIMEOUT)?;
        Ok(conn)
    }

    /// Sets how long each later read and write may block.
    pub fn set_timeout(&self, timeout: Duration) -> Result<(), RawError> {
        self.stream.set_read_timeout(Some(timeout))?;
        self.stream.set_write_timeout(Some(timeout))?;
        Ok(())
    }

    /// The socket, for what this type does not offer (half-closing it, for example).
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Sends `bytes` as they are: no length prefix, no checks. For byte-level abuse such as a
    /// negative or huge length prefix, or half a frame.
    pub fn send_bytes(&mut self, bytes: &[u8]) -> Result<(), RawError> {
        self.stream.write_all(bytes)?;
        Ok(())
    }

    /// Sends one frame whose body `body` writes; the length prefix is added. Returns the
    /// bytes sent, prefix included.
    pub fn send_frame(&mut self, body: impl FnOnce(&mut BytesMut)) -> Result<Bytes, RawError> {
        let mut out = BytesMut::new();
        self.codec.encode_with(&mut out, body)?;
        self.stream.write_all(&out)?;
        Ok(out.freeze())
    }

    /// Sends a connect request (the first frame of a connection).
    pub fn send_connect(&mut self, request: &ConnectRequest) -> Result<Bytes, RawError> {
        self.send_frame(|b| request.encode(b))
    }

    /// Sends `request` with request header `xid`.
    pub fn send_request(&mut self, xid: i32, request: &Request) -> Result<Bytes, RawError> {
        self.send_frame(|b| request.encode(xid, b))
    }

    /// The body of the next frame from the server (without its length prefix), or `None`
    /// when the server closed the connection between frames. A connection closed in the
    /// middle of a frame, or reset, is an error.
    pub fn recv_frame(&mut self) -> Result<Option<Bytes>, RawError> {
        loop {
            if let Some(frame) = self.codec.decode_frame(&mut self.inbuf)? {
                return Ok(Some(frame));
            }
            let mut chunk = [0u8; 8192];
            let n = match self.stream.read(&mut chunk) {
                Ok(n) => n,
                // A server that closes a connection with unread bytes in it resets it.
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => 0,
                Err(e) => return Err(e.into()),
            };
            if n == 0 {
                if self.inbuf.is_empty() {
                    return Ok(None);
                }
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
            }
            self.inbuf.extend_from_slice(&chunk[..n]);
        }
    }

    /// The next frame, which must be there.
    fn next_frame(&mut self) -> Result<Bytes, RawError> {
        self.recv_frame()?.ok_or(RawError::Closed)
    }

    /// Reads the server's answer to a connect request.
    pub fn recv_connect(&mut self) -> Result<ConnectResponse, RawError> {
        let frame = self.next_frame()?;
        Ok(ConnectResponse::decode_exact(frame, "ConnectResponse")?)
    }

    /// Reads the next frame as the reply to a request with opcode `op`: its header, and its
    /// body when the header's error code is 0.
    pub fn recv_reply(&mut self, op: OpCode) -> Result<(ReplyHeader, Option<Response>), RawError> {
        Ok(decode_reply(self.next_frame()?, op)?)
    }

    /// Reads the next frame as a watch notification (xid -1).
    pub fn recv_notification(&mut self) -> Result<WatcherEvent, RawError> {
        Ok(decode_notification(self.next_frame()?)?.1)
    }

    /// Starts a new session: a connect request with session id 0, a zero password and
    /// `timeout_ms`, and the server's answer.
    pub fn handshake(&mut self, timeout_ms: i32) -> Result<ConnectResponse, RawError> {
        self.resume(0, &[0; 16], timeout_ms)
    }

    /// Asks to resume session `session_id` with `password` (from an earlier
    /// [`ConnectResponse`] or a client's session); the answer
    /// [`is_expired`](ConnectResponse::is_expired) when the server refuses.
    pub fn resume(
        &mut self,
        session_id: i64,
        password: &[u8],
        timeout_ms: i32,
    ) -> Result<ConnectResponse, RawError> {
        self.send_connect(&connect_request(session_id, password, timeout_ms))?;
        self.recv_connect()
    }

    /// Sends `request` with `xid` and reads frames until its reply (same xid), which it
    /// decodes. Notifications and pings met on the way are skipped; any other frame is a
    /// [`RawError::Decode`] for a mismatched xid.
    pub fn call(
        &mut self,
        xid: i32,
        request: &Request,
    ) -> Result<(ReplyHeader, Option<Response>), RawError> {
        self.send_request(xid, request)?;
        loop {
            let frame = self.next_frame()?;
            let got = frame
                .get(..4)
                .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            match got {
                Some(x) if x == xid => return Ok(decode_reply(frame, request.op_code())?),
                Some(xid::NOTIFICATION | xid::PING) => continue,
                _ => {
                    return Err(RawError::Decode(DecodeError::InvalidValue {
                        field: "ReplyHeader.xid",
                        offset: 0,
                        value: got.unwrap_or_default().into(),
                    }))
                }
            }
        }
    }
}

/// The connect request a client sends to resume session `session_id` with `password` (0
/// and 16 zero bytes for a new session): lastZxidSeen 0, readOnly false. Change other
/// fields with struct update syntax, for a request no client would send.
///
/// ```
/// use zk_proto::ConnectRequest;
/// use zk_testkit::raw::connect_request;
///
/// let ahead = ConnectRequest { last_zxid_seen: i64::MAX, ..connect_request(0, &[0; 16], 10_000) };
/// assert_eq!((ahead.session_id, ahead.passwd.len()), (0, 16));
/// ```
pub fn connect_request(session_id: i64, password: &[u8], timeout_ms: i32) -> ConnectRequest {
    ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout: timeout_ms,
        session_id,
        passwd: Bytes::copy_from_slice(password),
        read_only: false,
    }
}

/// `bytes` in hex, four bytes to a group and 32 to a line, continuation lines indented by
/// `indent` spaces: how the demo shows frames.
pub fn hex(bytes: &[u8], indent: usize) -> String {
    let mut s = String::new();
    for (i, x) in bytes.iter().enumerate() {
        if i > 0 && i % 32 == 0 {
            s.push('\n');
            s.extend(std::iter::repeat_n(' ', indent));
        } else if i > 0 && i % 4 == 0 {
            s.push(' ');
        }
        let _ = write!(s, "{x:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_groups_words_and_lines() {
        assert_eq!(hex(&[0, 0, 0, 1, 0xff], 2), "00000001 ff");
        let long = hex(&[0xab; 33], 2);
        assert_eq!(long.lines().count(), 2);
        assert!(long.ends_with("\n  ab"));
    }

    #[test]
    fn frame_errors_keep_their_kind() {
        let io = RawError::from(FrameError::Io(io::ErrorKind::TimedOut.into()));
        assert!(matches!(io, RawError::Io(e) if e.kind() == io::ErrorKind::TimedOut));
        let big = RawError::from(FrameError::EncodeTooLarge { len: 2, max: 1 });
        assert!(matches!(big, RawError::Frame(_)));
    }
}
