//! The session handshake: the first frame each way on a new connection (no request header).

use std::fmt;

use bytes::{Bytes, BytesMut};

use crate::{
    jute::{Reader, Record, WriteJute},
    redact::Redacted,
    DecodeError,
};

/// The client's first frame: which session to create or resume.
///
/// The jute record has five fields; the client appends a bare `readOnly` byte after them, as
/// the Java `ClientCnxn` does. Decoding accepts the byte missing (older clients) as `false`.
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use zk_proto::{jute::Record, ConnectRequest};
///
/// let req = ConnectRequest {
///     protocol_version: 0,
///     last_zxid_seen: 0,
///     timeout: 30_000,
///     session_id: 0,
///     passwd: Bytes::from_static(&[0; 16]),
///     read_only: false,
/// };
/// let mut buf = BytesMut::new();
/// req.encode(&mut buf);
/// assert_eq!(buf.len(), 45); // 49 bytes framed
/// assert_eq!(ConnectRequest::decode_exact(buf.freeze(), "ConnectRequest").unwrap(), req);
/// ```
/// `Debug` hides the session password.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct ConnectRequest {
    /// Always 0.
    pub protocol_version: i32,
    /// The last zxid the client saw; a server that is behind it refuses the connection.
    pub last_zxid_seen: i64,
    /// The requested session timeout in milliseconds.
    pub timeout: i32,
    /// 0 for a new session, else the session to resume.
    pub session_id: i64,
    /// The session password (16 zero bytes for a new session).
    pub passwd: Bytes,
    /// Whether a read-only (minority) server may accept the session.
    pub read_only: bool,
}

impl fmt::Debug for ConnectRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectRequest")
            .field("protocol_version", &self.protocol_version)
            .field("last_zxid_seen", &self.last_zxid_seen)
            .field("timeout", &self.timeout)
            .field("session_id", &self.session_id)
            .field("passwd", &Redacted)
            .field("read_only", &self.read_only)
            .finish()
    }
}

impl Record for ConnectRequest {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_jute_int(self.protocol_version);
        buf.put_jute_long(self.last_zxid_seen);
        buf.put_jute_int(self.timeout);
        buf.put_jute_long(self.session_id);
        buf.put_jute_buffer(Some(&self.passwd));
        buf.put_jute_bool(self.read_only);
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        let protocol_version = r.read_i32("ConnectRequest.protocolVersion")?;
        let last_zxid_seen = r.read_i64("ConnectRequest.lastZxidSeen")?;
        let timeout = r.read_i32("ConnectRequest.timeOut")?;
        let session_id = r.read_i64("ConnectRequest.sessionId")?;
        let passwd = r.read_buffer("ConnectRequest.passwd")?;
        let read_only = read_optional_flag(r, "ConnectRequest.readOnly")?;
        Ok(ConnectRequest {
            protocol_version,
            last_zxid_seen,
            timeout,
            session_id,
            passwd,
            read_only,
        })
    }
}

/// The server's answer to a [`ConnectRequest`].
///
/// The `readOnly` byte after the record is optional (36- or 37-byte bodies with a 16-byte
/// password); encoding always writes it.
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use zk_proto::{jute::Record, ConnectResponse};
///
/// let mut body = BytesMut::new();
/// ConnectResponse { timeout: 0, ..Default::default() }.encode(&mut body);
/// let resp = ConnectResponse::decode_exact(body.freeze(), "ConnectResponse").unwrap();
/// assert!(resp.is_expired());
/// ```
/// `Debug` hides the session password.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct ConnectResponse {
    /// Always 0.
    pub protocol_version: i32,
    /// The negotiated session timeout in milliseconds; `<= 0` means the session is expired.
    pub timeout: i32,
    /// The session id.
    pub session_id: i64,
    /// The session password, needed to resume the session elsewhere.
    pub passwd: Bytes,
    /// Whether the server is read-only.
    pub read_only: bool,
}

impl ConnectResponse {
    /// True when the server refused to resume the session (expired, or a wrong password).
    pub fn is_expired(&self) -> bool {
        self.timeout <= 0
    }
}

impl fmt::Debug for ConnectResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectResponse")
            .field("protocol_version", &self.protocol_version)
            .field("timeout", &self.timeout)
            .field("session_id", &self.session_id)
            .field("passwd", &Redacted)
            .field("read_only", &self.read_only)
            .finish()
    }
}

impl Record for ConnectResponse {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_jute_int(self.protocol_version);
        buf.put_jute_int(self.timeout);
        buf.put_jute_long(self.session_id);
        buf.put_jute_buffer(Some(&self.passwd));
        buf.put_jute_bool(self.read_only);
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        let protocol_version = r.read_i32("ConnectResponse.protocolVersion")?;
        let timeout = r.read_i32("ConnectResponse.timeOut")?;
        let session_id = r.read_i64("ConnectResponse.sessionId")?;
        let passwd = r.read_buffer("ConnectResponse.passwd")?;
        let read_only = read_optional_flag(r, "ConnectResponse.readOnly")?;
        Ok(ConnectResponse {
            protocol_version,
            timeout,
            session_id,
            passwd,
            read_only,
        })
    }
}

/// Reads the trailing `readOnly` byte, which peers older than 3.4 do not send.
fn read_optional_flag(r: &mut Reader, field: &'static str) -> Result<bool, DecodeError> {
    if r.remaining() == 0 {
        Ok(false)
    } else {
        r.read_bool(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BufMut;

    fn request_body(read_only: Option<u8>) -> BytesMut {
        let mut b = BytesMut::new();
        b.put_i32(0);
        b.put_i64(0x1122);
        b.put_i32(30_000);
        b.put_i64(0);
        b.put_i32(16);
        b.put_slice(&[0; 16]);
        if let Some(v) = read_only {
            b.put_u8(v);
        }
        b
    }

    #[test]
    fn request_layout_matches_the_notes() {
        let req = ConnectRequest {
            last_zxid_seen: 0x1122,
            timeout: 30_000,
            passwd: Bytes::from_static(&[0; 16]),
            ..Default::default()
        };
        let mut b = BytesMut::new();
        req.encode(&mut b);
        assert_eq!(b, request_body(Some(0)));
        assert_eq!(b.len() + 4, 49);
    }

    #[test]
    fn request_without_read_only_byte_decodes_as_false() {
        let r = ConnectRequest::decode_exact(request_body(None).freeze(), "ConnectRequest");
        assert!(!r.unwrap().read_only);
        let r = ConnectRequest::decode_exact(request_body(Some(1)).freeze(), "ConnectRequest");
        assert!(r.unwrap().read_only);
    }

    #[test]
    fn request_with_two_extra_bytes_is_rejected() {
        let mut b = request_body(Some(1));
        b.put_u8(0);
        let e = ConnectRequest::decode_exact(b.freeze(), "ConnectRequest");
        assert!(matches!(e, Err(DecodeError::TrailingBytes { len: 1, .. })));
    }

    #[test]
    fn response_accepts_36_and_37_byte_bodies() {
        let mut b = BytesMut::new();
        b.put_i32(0);
        b.put_i32(4000);
        b.put_i64(0x0123_4567_89ab_cdef);
        b.put_i32(16);
        b.put_slice(&[7; 16]);
        assert_eq!(b.len(), 36);
        let r = ConnectResponse::decode_exact(b.clone().freeze(), "ConnectResponse").unwrap();
        assert_eq!(r.timeout, 4000);
        assert_eq!(r.session_id, 0x0123_4567_89ab_cdef);
        assert!(!r.read_only && !r.is_expired());
        b.put_u8(1);
        let r = ConnectResponse::decode_exact(b.freeze(), "ConnectResponse").unwrap();
        assert!(r.read_only);
    }

    #[test]
    fn null_password_is_rejected() {
        let mut b = BytesMut::new();
        b.put_slice(&[0; 16]);
        b.put_i32(-1);
        assert_eq!(
            ConnectResponse::decode_exact(b.freeze(), "ConnectResponse"),
            Err(DecodeError::UnexpectedNull {
                field: "ConnectResponse.passwd",
                offset: 16
            })
        );
    }
}
