//! Typed errors for frames and records that cannot be decoded.

use thiserror::Error;

/// Why a frame or record could not be decoded, and where.
///
/// `field` names the record and field being read (for example `"CreateRequest.path"`);
/// `offset` is the byte offset inside the frame (after the 4-byte length prefix).
///
/// ```
/// use bytes::Bytes;
/// use zk_proto::{jute::Reader, DecodeError};
///
/// let mut r = Reader::new(Bytes::from_static(&[0, 0]));
/// assert!(matches!(r.read_i32("Stat.version"), Err(DecodeError::Truncated { .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The frame ended before the field was complete.
    #[error("truncated {field} at offset {offset}: needs {needed} bytes, {remaining} left")]
    Truncated {
        field: &'static str,
        offset: usize,
        needed: usize,
        remaining: usize,
    },
    /// A buffer or string length below -1, or larger than the bytes left in the frame.
    #[error("invalid length {len} for {field} at offset {offset} ({remaining} bytes left)")]
    InvalidLength {
        field: &'static str,
        offset: usize,
        len: i32,
        remaining: usize,
    },
    /// A vector count below -1, or more elements than the bytes left could hold.
    #[error("invalid count {count} for {field} at offset {offset} ({remaining} bytes left)")]
    InvalidCount {
        field: &'static str,
        offset: usize,
        count: i32,
        remaining: usize,
    },
    /// A string that is not valid UTF-8.
    #[error("invalid UTF-8 in {field} at offset {offset}")]
    InvalidUtf8 { field: &'static str, offset: usize },
    /// A null (-1 length) where the protocol requires a value.
    #[error("unexpected null {field} at offset {offset}")]
    UnexpectedNull { field: &'static str, offset: usize },
    /// Bytes left over after a complete record.
    #[error("{len} trailing bytes after {record} at offset {offset}")]
    TrailingBytes {
        record: &'static str,
        offset: usize,
        len: usize,
    },
    /// A value outside the set the protocol allows (an opcode, a create mode, a flag…).
    #[error("invalid value {value} for {field} at offset {offset}")]
    InvalidValue {
        field: &'static str,
        offset: usize,
        value: i64,
    },
    /// A frame length prefix above the configured maximum.
    #[error("frame length {len} exceeds the maximum of {max} bytes")]
    FrameTooLarge { len: usize, max: usize },
    /// A negative frame length prefix.
    #[error("negative frame length {len}")]
    NegativeFrameLength { len: i32 },
    /// Multi results nested deeper than the protocol allows, or a multi without its end marker.
    #[error("malformed multi in {field} at offset {offset}: {reason}")]
    MalformedMulti {
        field: &'static str,
        offset: usize,
        reason: &'static str,
    },
}

/// The framing codec surfaces I/O errors through the same type as decode errors,
/// as tokio-util's `Decoder` requires `From<io::Error>`.
#[derive(Debug, Error)]
pub enum FrameError {
    /// The bytes did not form a valid frame.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// An encoded frame is larger than the configured maximum.
    #[error("encoded frame of {len} bytes exceeds the maximum of {max} bytes")]
    EncodeTooLarge { len: usize, max: usize },
    /// The underlying transport failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}
