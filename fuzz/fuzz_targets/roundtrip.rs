//! Whatever decodes must re-encode to bytes that decode to an equal value, and encoding that
//! value again must give the same bytes (encode ∘ decode is stable after one step).
#![no_main]

use std::fmt::Debug;

use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use zk_proto::jute::Record;
use zk_proto::{
    decode_notification, decode_reply, ConnectRequest, ConnectResponse, MultiRequest,
    MultiResponse, OpCode, Request,
};
use zk_proto_fuzz::frames_and_raw;

fn encoded(f: impl FnOnce(&mut BytesMut)) -> Bytes {
    let mut buf = BytesMut::new();
    f(&mut buf);
    buf.freeze()
}

fn record<T: Record + PartialEq + Debug>(frame: &Bytes, name: &'static str) {
    let Ok(value) = T::decode_exact(frame.clone(), name) else {
        return;
    };
    let once = encoded(|b| value.encode(b));
    let back = T::decode_exact(once.clone(), name)
        .unwrap_or_else(|e| panic!("re-encoded {name} does not decode: {e}\n{value:?}"));
    assert_eq!(back, value, "{name} changed in a round trip");
    assert_eq!(
        encoded(|b| back.encode(b)),
        once,
        "{name} encoding is not stable"
    );
}

fn request(frame: &Bytes) {
    let Ok((header, req)) = Request::decode(frame.clone()) else {
        return;
    };
    let once = encoded(|b| req.encode(header.xid, b));
    let (header2, req2) = Request::decode(once.clone())
        .unwrap_or_else(|e| panic!("re-encoded request does not decode: {e}\n{req:?}"));
    assert_eq!(header2, header, "RequestHeader changed in a round trip");
    assert_eq!(req2, req, "Request changed in a round trip");
    assert_eq!(
        encoded(|b| req2.encode(header2.xid, b)),
        once,
        "Request encoding is not stable"
    );
}

fn reply(frame: &Bytes, op: OpCode) {
    let Ok((header, body)) = decode_reply(frame.clone(), op) else {
        return;
    };
    let encode = |b: &mut BytesMut| {
        header.encode(b);
        if let Some(body) = &body {
            body.encode(b);
        }
    };
    let once = encoded(encode);
    let back = decode_reply(once.clone(), op).unwrap_or_else(|e| {
        panic!("re-encoded {op:?} reply does not decode: {e}\n{header:?} {body:?}")
    });
    assert_eq!(back, (header, body), "{op:?} reply changed in a round trip");
}

fn notification(frame: &Bytes) {
    let Ok((header, event)) = decode_notification(frame.clone()) else {
        return;
    };
    let once = encoded(|b| {
        header.encode(b);
        event.encode(b);
    });
    let back = decode_notification(once)
        .unwrap_or_else(|e| panic!("re-encoded notification does not decode: {e}\n{event:?}"));
    assert_eq!(
        back,
        (header, event),
        "notification changed in a round trip"
    );
}

fuzz_target!(|data: &[u8]| {
    for frame in frames_and_raw(data) {
        request(&frame);
        for &op in OpCode::ALL {
            reply(&frame, op);
        }
        notification(&frame);
        record::<ConnectRequest>(&frame, "ConnectRequest");
        record::<ConnectResponse>(&frame, "ConnectResponse");
        record::<MultiRequest>(&frame, "MultiRequest");
        record::<MultiResponse>(&frame, "MultiResponse");
    }
});
