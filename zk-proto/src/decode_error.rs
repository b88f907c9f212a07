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
        /// The record and field being read, e.g. `"CreateRequest.path"`.
        field: &'static str,
        /// Byte offset in the frame where the field starts.
        offset: usize,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A buffer or string length below -1, or larger than the bytes left in the frame.
    #[error("invalid length {len} for {field} at offset {offset} ({remaining} bytes left)")]
    InvalidLength {
        /// The record and field being read, e.g. `"CreateRequest.path"`.
        field: &'static str,
        /// Byte offset in the frame where the field starts.
        offset: usize,
        /// The length read.
        len: i32,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A vector count below -1, or more elements than the bytes left could hold.
    #[error("invalid count {count} for {field} at offset {offset} ({remaining} bytes left)")]
    InvalidCount {
        /// The record and field being read, e.g. `"CreateRequest.path"`.
        field: &'static str,
        /// Byte offset in the frame where the field starts.
        offset: usize,
        /// The count read.
        count: i32,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A string that is not valid UTF-8.
    #[error("invalid UTF-8 in {field} at offset {offset}")]
    InvalidUtf8 {
        /// The record and field being read, e.g. `"CreateRequest.path"`.
        field: &'static str,
        /// Byte offset in the frame where the field starts.
        offset: usize,
    },
    /// A null (-1 length) where the protocol requires a value.
    #[error("unexpected null {field} at offset {offset}")]
    UnexpectedNull {
        /// The record and field being read, e.g. `"CreateRequest.path"`.
        field: &'static str,
        /// Byte offset in the frame where the field starts.
        offset: usize,
    },
    /// Bytes left over after a complete record.
    #[error("{len} trailing bytes after {record} at offset {offset}")]
    TrailingBytes {
        /// The record that was complete.
        record: &'static str,
        /// Byte offset of the first left-over byte.
        offset: usize,
        /// How many bytes were left over.
        len: usize,
    },
    /// A value outside the set the protocol allows (an opcode, a create mode, a flag…).
    #[error("invalid value {value} for {field} at offset {offset}")]
    InvalidValue {
        /// The record and field being read, e.g. `"CreateRequest.path"`.
        field: &'static str,
        /// Byte offset in the frame where the field starts.
        offset: usize,
        /// The value read.
        value: i64,
    },
    /// A frame length prefix above the configured maximum.
    #[error("frame length {len} exceeds the maximum of {max} bytes")]
    FrameTooLarge {
        /// The length prefix.
        len: usize,
        /// The configured maximum.
        max: usize,
    },
    /// A negative frame length prefix.
    #[error("negative frame length {len}")]
    NegativeFrameLength {
        /// The length prefix.
        len: i32,
    },
    /// A multi that breaks the rules: a missing or malformed end marker, or reads and writes
    /// mixed in one request.
    #[error("malformed multi in {field} at offset {offset}: {reason}")]
    MalformedMulti {
        /// The record and field being read, e.g. `"CreateRequest.path"`.
        field: &'static str,
        /// Byte offset in the frame where the field starts.
        offset: usize,
        /// What was wrong.
        reason: &'static str,
    },
}

/// The framing codec surfaces I/O errors through the same type as decode errors,
/// as tokio-util's `Decoder` requires `From<io::Error>`.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The bytes did not form a valid frame.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// An encoded frame is larger than the configured maximum.
    #[error("encoded frame of {len} bytes exceeds the maximum of {max} bytes")]
    EncodeTooLarge {
        /// The encoded body length.
        len: usize,
        /// The configured maximum.
        max: usize,
    },
    /// The underlying transport failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}
