//! The headers in front of requests, replies and multi operations.

use bytes::BytesMut;

use crate::{
    jute::{Reader, Record, WriteJute},
    DecodeError, ErrorCode,
};

/// Precedes every client request except the connect request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RequestHeader {
    /// The request id; see [`crate::xid`] for the reserved ones.
    pub xid: i32,
    /// The [`OpCode`](crate::OpCode) as a number (jute field `type`).
    pub op: i32,
}

impl RequestHeader {
    /// The encoded length.
    pub const LEN: usize = 8;
}

impl Record for RequestHeader {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_jute_int(self.xid);
        buf.put_jute_int(self.op);
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        Ok(RequestHeader {
            xid: r.read_i32("RequestHeader.xid")?,
            op: r.read_i32("RequestHeader.type")?,
        })
    }
}

/// Precedes every server reply; the reply body is present only when `err` is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ReplyHeader {
    /// The xid of the request this answers, or a reserved xid.
    pub xid: i32,
    /// The zxid of the server's last committed transaction (-1 in notifications).
    pub zxid: i64,
    /// The error code, 0 on success.
    pub err: i32,
}

impl ReplyHeader {
    /// The encoded length.
    pub const LEN: usize = 16;

    /// The error as an [`ErrorCode`].
    pub fn error_code(&self) -> ErrorCode {
        ErrorCode::from_code(self.err)
    }
}

impl Record for ReplyHeader {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_jute_int(self.xid);
        buf.put_jute_long(self.zxid);
        buf.put_jute_int(self.err);
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        Ok(ReplyHeader {
            xid: r.read_i32("ReplyHeader.xid")?,
            zxid: r.read_i64("ReplyHeader.zxid")?,
            err: r.read_i32("ReplyHeader.err")?,
        })
    }
}

/// Precedes each operation in a multi request and each result in a multi response.
///
/// The list ends with [`MultiHeader::END`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct MultiHeader {
    /// The operation's [`OpCode`](crate::OpCode) as a number, -1 for an error result.
    pub op: i32,
    /// True only in the end marker.
    pub done: bool,
    /// -1 in requests; 0 or the error code in responses.
    pub err: i32,
}

impl MultiHeader {
    /// The encoded length.
    pub const LEN: usize = 9;

    /// The marker that ends a multi request or response.
    pub const END: MultiHeader = MultiHeader {
        op: -1,
        done: true,
        err: -1,
    };
}

impl Record for MultiHeader {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_jute_int(self.op);
        buf.put_jute_bool(self.done);
        buf.put_jute_int(self.err);
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        Ok(MultiHeader {
            op: r.read_i32("MultiHeader.type")?,
            done: r.read_bool("MultiHeader.done")?,
            err: r.read_i32("MultiHeader.err")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn reply_header_layout() {
        let h = ReplyHeader {
            xid: 1,
            zxid: 0x0102_0304_0506_0708,
            err: -101,
        };
        let mut b = BytesMut::new();
        h.encode(&mut b);
        assert_eq!(
            &b[..],
            &[0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xff, 0xff, 0x9b]
        );
        assert_eq!(h.error_code(), ErrorCode::NoNode);
        assert_eq!(ReplyHeader::decode_exact(b.freeze(), "ReplyHeader"), Ok(h));
    }

    #[test]
    fn multi_end_marker_layout() {
        let mut b = BytesMut::new();
        MultiHeader::END.encode(&mut b);
        assert_eq!(&b[..], &[0xff, 0xff, 0xff, 0xff, 1, 0xff, 0xff, 0xff, 0xff]);
    }

    #[test]
    fn truncated_request_header_names_the_field() {
        let e = RequestHeader::decode_exact(Bytes::from_static(&[0, 0, 0, 1, 0]), "RequestHeader");
        assert!(matches!(
            e,
            Err(DecodeError::Truncated {
                field: "RequestHeader.type",
                offset: 4,
                ..
            })
        ));
    }
}
