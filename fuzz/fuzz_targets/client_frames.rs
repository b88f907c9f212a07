//! Client→server bytes, as a server (or a test double) would decode them: requests with their
//! header, the connect request, and multi bodies must never panic.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use zk_proto::jute::{Reader, Record};
use zk_proto::{ConnectRequest, MultiRequest, Request};
use zk_proto_fuzz::frames_and_raw;

fn client_frame(frame: Bytes) {
    if let Ok((header, request)) = Request::decode(frame.clone()) {
        assert_eq!(header.op, request.op_code().code());
    }
    let _ = ConnectRequest::decode_exact(frame.clone(), "ConnectRequest");
    let _ = MultiRequest::decode(&mut Reader::new(frame));
}

fuzz_target!(|data: &[u8]| {
    for frame in frames_and_raw(data) {
        client_frame(frame);
    }
});
