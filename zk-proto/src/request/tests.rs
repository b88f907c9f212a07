//! Unit tests of request encoding and decoding: byte layouts, and the errors for bodies and
//! opcodes that are not requests.

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
