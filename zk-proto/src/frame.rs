//! Length-prefixed framing: every message is an `i32` length and that many bytes.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use crate::{jute::Record, DecodeError, FrameError};

/// The Java client's and server's default maximum frame length (`jute.maxbuffer`).
pub const DEFAULT_MAX_FRAME_LEN: usize = 0xfffff;

/// A tokio-util codec for ZooKeeper's length-prefixed frames.
///
/// Decoding yields each frame's body as [`Bytes`] (without the prefix); a length above the
/// maximum or below zero is a typed error, and nothing is buffered beyond one frame's worth.
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use tokio_util::codec::{Decoder, Encoder};
/// use zk_proto::FrameCodec;
///
/// let mut codec = FrameCodec::new();
/// let mut wire = BytesMut::new();
/// codec.encode(Bytes::from_static(b"hi"), &mut wire).unwrap();
/// assert_eq!(&wire[..], &[0, 0, 0, 2, b'h', b'i']);
/// assert_eq!(codec.decode(&mut wire).unwrap().unwrap(), Bytes::from_static(b"hi"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct FrameCodec {
    max_frame_len: usize,
}

impl Default for FrameCodec {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameCodec {
    /// A codec with the default maximum frame length of 0xfffff bytes.
    pub fn new() -> Self {
        Self::with_max_frame_len(DEFAULT_MAX_FRAME_LEN)
    }

    /// A codec that refuses frames longer than `max_frame_len` bytes (at most `i32::MAX`,
    /// the largest length the prefix can carry).
    pub fn with_max_frame_len(max_frame_len: usize) -> Self {
        FrameCodec {
            max_frame_len: max_frame_len.min(i32::MAX as usize),
        }
    }

    /// The configured maximum frame length.
    pub fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }

    /// Checks a length prefix against the limits.
    pub fn check_len(&self, len: i32) -> Result<usize, DecodeError> {
        if len < 0 {
            return Err(DecodeError::NegativeFrameLength { len });
        }
        if len as usize > self.max_frame_len {
            return Err(DecodeError::FrameTooLarge {
                len: len as usize,
                max: self.max_frame_len,
            });
        }
        Ok(len as usize)
    }

    /// Appends one frame to `dst` whose body is written by `body`, patching the length prefix
    /// afterwards so the body is encoded straight into the output buffer.
    pub fn encode_with(
        &self,
        dst: &mut BytesMut,
        body: impl FnOnce(&mut BytesMut),
    ) -> Result<(), FrameError> {
        let start = dst.len();
        dst.put_i32(0);
        body(dst);
        let len = dst.len() - start - 4;
        if len > self.max_frame_len {
            dst.truncate(start);
            return Err(FrameError::EncodeTooLarge {
                len,
                max: self.max_frame_len,
            });
        }
        dst[start..start + 4].copy_from_slice(&(len as i32).to_be_bytes());
        Ok(())
    }
}

impl Decoder for FrameCodec {
    type Item = Bytes;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        if src.len() < 4 {
            return Ok(None);
        }
        let len = self.check_len(i32::from_be_bytes([src[0], src[1], src[2], src[3]]))?;
        if src.len() < 4 + len {
            // Reserve only what this frame still needs: the length was checked above.
            src.reserve(4 + len - src.len());
            return Ok(None);
        }
        src.advance(4);
        Ok(Some(src.split_to(len).freeze()))
    }
}

impl Encoder<Bytes> for FrameCodec {
    type Error = FrameError;

    fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> Result<(), FrameError> {
        self.encode_with(dst, |b| b.put_slice(&item))
    }
}

impl<T: Record> Encoder<&T> for FrameCodec {
    type Error = FrameError;

    fn encode(&mut self, item: &T, dst: &mut BytesMut) -> Result<(), FrameError> {
        self.encode_with(dst, |b| item.encode(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_for_a_whole_frame() {
        let mut c = FrameCodec::new();
        let mut src = BytesMut::from(&[0u8, 0, 0, 3, 1, 2][..]);
        assert_eq!(c.decode(&mut src).unwrap(), None);
        src.put_u8(3);
        assert_eq!(
            c.decode(&mut src).unwrap().unwrap(),
            Bytes::from_static(&[1, 2, 3])
        );
        assert!(src.is_empty());
    }

    #[test]
    fn the_limit_never_exceeds_what_the_prefix_can_carry() {
        assert_eq!(
            FrameCodec::with_max_frame_len(usize::MAX).max_frame_len(),
            i32::MAX as usize
        );
    }

    #[test]
    fn rejects_negative_and_oversized_lengths() {
        let mut c = FrameCodec::with_max_frame_len(16);
        let mut src = BytesMut::from(&[0xffu8, 0xff, 0xff, 0xff][..]);
        assert!(matches!(
            c.decode(&mut src),
            Err(FrameError::Decode(DecodeError::NegativeFrameLength {
                len: -1
            }))
        ));
        let mut src = BytesMut::from(&[0u8, 0, 0, 17][..]);
        assert!(matches!(
            c.decode(&mut src),
            Err(FrameError::Decode(DecodeError::FrameTooLarge {
                len: 17,
                max: 16
            }))
        ));
    }

    #[test]
    fn encode_refuses_oversized_frames_and_leaves_dst_alone() {
        let mut c = FrameCodec::with_max_frame_len(2);
        let mut dst = BytesMut::new();
        assert!(c.encode(Bytes::from_static(b"abc"), &mut dst).is_err());
        assert!(dst.is_empty());
    }
}
