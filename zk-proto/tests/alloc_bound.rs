//! A hostile count costs no more than the frame that carries it: decoding a full-size frame
//! whose count claims as many names as its bytes could hold, the first name running far
//! past the end, fails with a typed error right away.
//!
//! How much is reserved up front is unit tested with the bound itself
//! (`jute::initial_capacity`), since counting allocations here would take an `unsafe`
//! global allocator.

use bytes::{BufMut, BytesMut};
use zk_proto::{decode_reply, DecodeError, OpCode, DEFAULT_MAX_FRAME_LEN};

#[test]
fn a_hostile_child_count_fails_with_a_typed_error() {
    // A full-size getChildren reply whose count says as many names as would fit at 4 bytes
    // each (about 262,000), but whose first name has a length far past the end.
    let mut frame = BytesMut::with_capacity(DEFAULT_MAX_FRAME_LEN);
    frame.put_i32(1); // xid
    frame.put_i64(1); // zxid
    frame.put_i32(0); // err
    let count = (DEFAULT_MAX_FRAME_LEN - frame.len() - 4) / 4;
    frame.put_i32(count as i32);
    frame.resize(DEFAULT_MAX_FRAME_LEN, 0x7f);
    let r = decode_reply(frame.freeze(), OpCode::GetChildren);
    assert_eq!(
        r.err(),
        Some(DecodeError::InvalidLength {
            field: "GetChildrenResponse.children",
            offset: 20,
            len: 0x7f7f_7f7f,
            remaining: DEFAULT_MAX_FRAME_LEN - 24,
        })
    );
}
