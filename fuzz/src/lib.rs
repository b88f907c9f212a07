//! Helpers shared by the zk-proto fuzz targets.

use bytes::{Bytes, BytesMut};
use tokio_util::codec::Decoder;
use zk_proto::FrameCodec;

/// The frame limit the targets use: small, so that the "frame too large" path is reached too.
pub const MAX_FRAME_LEN: usize = 4096;

/// What each target feeds its decoders: every frame the [`FrameCodec`] splits off `data` (with
/// a small maximum, until it needs more bytes or reports an error), then `data` itself as one
/// raw frame body, so that bodies longer than the frame limit are decoded too.
pub fn frames_and_raw(data: &[u8]) -> Vec<Bytes> {
    let mut codec = FrameCodec::with_max_frame_len(MAX_FRAME_LEN);
    let mut src = BytesMut::from(data);
    let mut out = Vec::new();
    while let Ok(Some(frame)) = codec.decode(&mut src) {
        assert!(frame.len() <= MAX_FRAME_LEN, "FrameCodec ignored its limit");
        out.push(frame);
    }
    out.push(Bytes::copy_from_slice(data));
    out
}

/// Asserts that `part` is a slice of `frame`'s memory (zero-copy decoding), unless it is empty.
pub fn assert_within(frame: &Bytes, part: &Bytes) {
    if part.is_empty() {
        return;
    }
    let lo = frame.as_ptr() as usize;
    let p = part.as_ptr() as usize;
    assert!(
        p >= lo && p + part.len() <= lo + frame.len(),
        "a decoded buffer was copied instead of sliced from the frame"
    );
}
