//! Length-prefixed framing: every message is an `i32` length and that many bytes.

use bytes::{Buf, BufMut, Bytes, BytesMut};
#[cfg(feature = "codec")]
use tokio_util::codec::{Decoder, Encoder};

#[cfg(feature = "codec")]
use crate::jute::Record;
use crate::{jute::WriteJute, DecodeError, FrameError};

/// The Java client's and server's default maximum frame length (`jute.maxbuffer`).
pub const DEFAULT_MAX_FRAME_LEN: usize = 0xfffff;

/// ZooKeeper's length-prefixed frames: split a byte stream into frames and write them.
///
/// Decoding yields each frame's body as [`Bytes`] (without the prefix); a length above the
/// maximum or below zero is a typed error, and nothing is buffered beyond one frame's worth.
/// [`decode_frame`](Self::decode_frame) and [`encode_with`](Self::encode_with) work with any
/// I/O; with the `codec` feature (on by default) the same logic is also a tokio-util
/// `Decoder` and `Encoder`.
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use zk_proto::FrameCodec;
///
/// let codec = FrameCodec::new();
/// let mut wire = BytesMut::new();
/// codec.encode_frame(b"hi", &mut wire).unwrap();
/// assert_eq!(&wire[..], &[0, 0, 0, 2, b'h', b'i']);
/// assert_eq!(codec.decode_frame(&mut wire).unwrap().unwrap(), Bytes::from_static(b"hi"));
/// ```
///
/// The same with the tokio-util traits:
///
/// ```
/// # #[cfg(feature = "codec")] {
/// use bytes::{Bytes, BytesMut};
/// use tokio_util::codec::{Decoder, Encoder};
/// use zk_proto::FrameCodec;
///
/// let mut codec = FrameCodec::new();
/// let mut wire = BytesMut::new();
/// codec.encode(Bytes::from_static(b"hi"), &mut wire).unwrap();
/// assert_eq!(codec.decode(&mut wire).unwrap().unwrap(), Bytes::from_static(b"hi"));
/// # }
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
        dst.put_jute_int(0);
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

    /// Appends one frame with the body `body` to `dst`.
    pub fn encode_frame(&self, body: &[u8], dst: &mut BytesMut) -> Result<(), FrameError> {
        self.encode_with(dst, |b| b.put_slice(body))
    }

    /// Splits the next whole frame's body off the front of `src`, or returns `None` when `src`
    /// does not hold a whole frame yet (reserving only the room that frame still needs).
    pub fn decode_frame(&self, src: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
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

#[cfg(feature = "codec")]
impl Decoder for FrameCodec {
    type Item = Bytes;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        self.decode_frame(src)
    }
}

#[cfg(feature = "codec")]
impl Encoder<Bytes> for FrameCodec {
    type Error = FrameError;

    fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> Result<(), FrameError> {
        self.encode_frame(&item, dst)
    }
}

#[cfg(feature = "codec")]
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
        let c = FrameCodec::new();
        let mut src = BytesMut::from(&[0u8, 0, 0, 3, 1, 2][..]);
        assert_eq!(c.decode_frame(&mut src).unwrap(), None);
        src.put_u8(3);
        assert_eq!(
            c.decode_frame(&mut src).unwrap().unwrap(),
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
        let c = FrameCodec::with_max_frame_len(16);
        let mut src = BytesMut::from(&[0xffu8, 0xff, 0xff, 0xff][..]);
        assert!(matches!(
            c.decode_frame(&mut src),
            Err(FrameError::Decode(DecodeError::NegativeFrameLength {
                len: -1
            }))
        ));
        let mut src = BytesMut::from(&[0u8, 0, 0, 17][..]);
        assert!(matches!(
            c.decode_frame(&mut src),
            Err(FrameError::Decode(DecodeError::FrameTooLarge {
                len: 17,
                max: 16
            }))
        ));
    }

    #[test]
    fn encode_refuses_oversized_frames_and_leaves_dst_alone() {
        let c = FrameCodec::with_max_frame_len(2);
        let mut dst = BytesMut::new();
        assert!(c.encode_frame(b"abc", &mut dst).is_err());
        assert!(dst.is_empty());
    }

    /// The tokio-util traits are the same framing as the inherent methods.
    #[cfg(feature = "codec")]
    #[test]
    fn the_tokio_util_codec_frames_like_the_inherent_methods() {
        let mut c = FrameCodec::with_max_frame_len(16);
        let mut traits = BytesMut::new();
        c.encode(Bytes::from_static(b"abc"), &mut traits).unwrap();
        c.encode(&crate::Stat::default(), &mut traits).unwrap_err();
        let mut inherent = BytesMut::new();
        c.encode_frame(b"abc", &mut inherent).unwrap();
        assert_eq!(traits, inherent);
        let stat = crate::Stat::default();
        let mut body = BytesMut::new();
        stat.encode(&mut body);
        let mut big = FrameCodec::new();
        big.encode(&stat, &mut traits).unwrap();
        assert_eq!(&traits[11..], &body[..]);
        assert_eq!(c.decode(&mut traits).unwrap().unwrap(), &b"abc"[..]);
        let mut short = BytesMut::from(&[0u8, 0, 0, 1][..]);
        assert_eq!(c.decode(&mut short).unwrap(), None);
    }
}
