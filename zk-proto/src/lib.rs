//! The ZooKeeper 3.8 client protocol: jute records, opcodes, error codes and framing.
//!
//! This crate does no I/O. Encode requests into a `BytesMut`, decode replies from `Bytes`
//! frames (buffers come back as slices of the frame, not copies), and use [`FrameCodec`] with
//! tokio-util to split a byte stream into frames.

pub mod decode_error;
pub mod error_code;
pub mod frame;
pub mod jute;
pub mod stat;

pub use decode_error::{DecodeError, FrameError};
pub use error_code::ErrorCode;
pub use frame::{FrameCodec, DEFAULT_MAX_FRAME_LEN};
pub use stat::Stat;
