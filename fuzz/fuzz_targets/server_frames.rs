//! Server→client bytes: whatever a (broken or hostile) server sends must decode to a value or a
//! typed error, never a panic, an overflow or an allocation beyond the frame.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use zk_proto::jute::Record;
use zk_proto::{decode_notification, decode_reply, ConnectResponse, OpCode, Response};
use zk_proto_fuzz::{assert_within, frames_and_raw};

fn server_frame(frame: Bytes) {
    for &op in OpCode::ALL {
        if let Ok((_, Some(Response::GetData(r)))) = decode_reply(frame.clone(), op) {
            if let Some(data) = &r.data {
                assert_within(&frame, data);
            }
        }
    }
    let _ = decode_notification(frame.clone());
    let _ = ConnectResponse::decode_exact(frame, "ConnectResponse");
}

fuzz_target!(|data: &[u8]| {
    for frame in frames_and_raw(data) {
        server_frame(frame);
    }
});
