//! Jute primitives: big-endian ints, booleans, length-prefixed buffers, strings and vectors.
//!
//! [`Reader`] decodes from a [`Bytes`] frame without copying buffers (they are slices of the
//! frame) and checks every length against the bytes that are really left before allocating.

use bytes::{Bytes, BytesMut};

use crate::DecodeError;

/// A jute record: something with a fixed field layout that encodes and decodes itself.
///
/// ```
/// use bytes::BytesMut;
/// use zk_proto::{jute::{Reader, Record}, Stat};
///
/// let stat = Stat { version: 3, ..Stat::default() };
/// let mut buf = BytesMut::new();
/// stat.encode(&mut buf);
/// assert_eq!(buf.len(), 68);
/// let back = Stat::decode(&mut Reader::new(buf.freeze())).unwrap();
/// assert_eq!(back, stat);
/// ```
pub trait Record: Sized {
    /// Appends the record's fields to `buf`.
    fn encode(&self, buf: &mut BytesMut);
    /// Reads the record's fields from `r`.
    fn decode(r: &mut Reader) -> Result<Self, DecodeError>;

    /// Decodes a record that must take up all of `frame`.
    fn decode_exact(frame: Bytes, name: &'static str) -> Result<Self, DecodeError> {
        let mut r = Reader::new(frame);
        let v = Self::decode(&mut r)?;
        r.finish(name)?;
        Ok(v)
    }
}

/// Reads jute primitives from a frame, tracking the offset for error messages.
#[derive(Debug, Clone)]
pub struct Reader {
    buf: Bytes,
    pos: usize,
}

impl Reader {
    /// Starts reading at the beginning of `buf`.
    pub fn new(buf: Bytes) -> Self {
        Reader { buf, pos: 0 }
    }

    /// The offset of the next byte to read.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The bytes not read yet, without consuming them.
    pub fn rest(&self) -> Bytes {
        self.buf.slice(self.pos..)
    }

    /// Fails with [`DecodeError::TrailingBytes`] unless everything was read.
    pub fn finish(&self, record: &'static str) -> Result<(), DecodeError> {
        if self.remaining() != 0 {
            return Err(DecodeError::TrailingBytes {
                record,
                offset: self.pos,
                len: self.remaining(),
            });
        }
        Ok(())
    }

    fn take(&mut self, n: usize, field: &'static str) -> Result<&[u8], DecodeError> {
        if self.remaining() < n {
            return Err(DecodeError::Truncated {
                field,
                offset: self.pos,
                needed: n,
                remaining: self.remaining(),
            });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Reads a byte.
    pub fn read_u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        Ok(self.take(1, field)?[0])
    }

    /// Reads a jute `boolean`: one byte, non-zero is true.
    pub fn read_bool(&mut self, field: &'static str) -> Result<bool, DecodeError> {
        Ok(self.read_u8(field)? != 0)
    }

    /// Reads a jute `int`.
    pub fn read_i32(&mut self, field: &'static str) -> Result<i32, DecodeError> {
        let b = self.take(4, field)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Reads a jute `long`.
    pub fn read_i64(&mut self, field: &'static str) -> Result<i64, DecodeError> {
        let b = self.take(8, field)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    /// Reads a length prefix: `None` for -1, an error below -1 or beyond the frame.
    fn read_len(&mut self, field: &'static str) -> Result<Option<usize>, DecodeError> {
        let offset = self.pos;
        let len = self.read_i32(field)?;
        if len == -1 {
            return Ok(None);
        }
        if len < -1 || len as usize > self.remaining() {
            return Err(DecodeError::InvalidLength {
                field,
                offset,
                len,
                remaining: self.remaining(),
            });
        }
        Ok(Some(len as usize))
    }

    /// Reads a jute `buffer`; `None` is the null buffer (length -1). The result is a slice of
    /// the frame, not a copy.
    pub fn read_buffer_opt(&mut self, field: &'static str) -> Result<Option<Bytes>, DecodeError> {
        match self.read_len(field)? {
            None => Ok(None),
            Some(n) => {
                let b = self.buf.slice(self.pos..self.pos + n);
                self.pos += n;
                Ok(Some(b))
            }
        }
    }

    /// Reads a jute `buffer` that must not be null.
    pub fn read_buffer(&mut self, field: &'static str) -> Result<Bytes, DecodeError> {
        let offset = self.pos;
        self.read_buffer_opt(field)?
            .ok_or(DecodeError::UnexpectedNull { field, offset })
    }

    /// Reads a jute `ustring`; `None` is the null string (length -1).
    pub fn read_string_opt(&mut self, field: &'static str) -> Result<Option<String>, DecodeError> {
        let offset = self.pos;
        match self.read_len(field)? {
            None => Ok(None),
            Some(n) => {
                let start = self.pos;
                let s = std::str::from_utf8(&self.buf[start..start + n])
                    .map_err(|_| DecodeError::InvalidUtf8 { field, offset })?
                    .to_owned();
                self.pos += n;
                Ok(Some(s))
            }
        }
    }

    /// Reads a jute `ustring` that must not be null.
    pub fn read_string(&mut self, field: &'static str) -> Result<String, DecodeError> {
        let offset = self.pos;
        self.read_string_opt(field)?
            .ok_or(DecodeError::UnexpectedNull { field, offset })
    }

    /// Reads a jute `vector`; `None` is the null vector (count -1).
    ///
    /// `min_elem_len` is the smallest encoding of one element: the count is refused when that
    /// many elements could not fit in the bytes left, so no allocation exceeds the frame.
    pub fn read_vec_opt<T>(
        &mut self,
        field: &'static str,
        min_elem_len: usize,
        mut elem: impl FnMut(&mut Reader) -> Result<T, DecodeError>,
    ) -> Result<Option<Vec<T>>, DecodeError> {
        let offset = self.pos;
        let count = self.read_i32(field)?;
        if count == -1 {
            return Ok(None);
        }
        let fits =
            count >= 0 && (count as usize).saturating_mul(min_elem_len.max(1)) <= self.remaining();
        if !fits {
            return Err(DecodeError::InvalidCount {
                field,
                offset,
                count,
                remaining: self.remaining(),
            });
        }
        let mut v = Vec::with_capacity(initial_capacity::<T>(count as usize, self.remaining()));
        for _ in 0..count {
            v.push(elem(self)?);
        }
        Ok(Some(v))
    }

    /// Reads a jute `vector` that must not be null.
    pub fn read_vec<T>(
        &mut self,
        field: &'static str,
        min_elem_len: usize,
        elem: impl FnMut(&mut Reader) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let offset = self.pos;
        self.read_vec_opt(field, min_elem_len, elem)?
            .ok_or(DecodeError::UnexpectedNull { field, offset })
    }
}

/// How many `T`s to reserve for a vector whose count says `count` with `remaining` bytes left
/// in the frame: no more than those bytes could fill were each element as large in memory as
/// on the wire. A hostile count then costs no more than the frame, and the vector grows only
/// with elements actually read.
pub(crate) fn initial_capacity<T>(count: usize, remaining: usize) -> usize {
    count.min(remaining / std::mem::size_of::<T>().max(1))
}

/// Writes jute primitives to a [`BytesMut`].
///
/// Through `extend_from_slice`, which inlines: `BufMut::put_i32` and friends reach bytes'
/// `put_slice`, which does not, and paid a call and a `memcpy` for every 4 bytes of every
/// request.
pub trait WriteJute {
    /// Writes a jute `int`.
    fn put_jute_int(&mut self, v: i32);
    /// Writes a jute `long`.
    fn put_jute_long(&mut self, v: i64);
    /// Writes a jute `boolean`.
    fn put_jute_bool(&mut self, v: bool);
    /// Writes a jute `buffer` (`None` as length -1).
    fn put_jute_buffer(&mut self, v: Option<&[u8]>);
    /// Writes a jute `ustring` (`None` as length -1).
    fn put_jute_string(&mut self, v: Option<&str>);
    /// Writes a jute `vector` (`None` as count -1).
    fn put_jute_vec<T>(&mut self, v: Option<&[T]>, elem: impl FnMut(&mut Self, &T));
}

impl WriteJute for BytesMut {
    #[inline]
    fn put_jute_int(&mut self, v: i32) {
        self.extend_from_slice(&v.to_be_bytes());
    }

    #[inline]
    fn put_jute_long(&mut self, v: i64) {
        self.extend_from_slice(&v.to_be_bytes());
    }

    #[inline]
    fn put_jute_bool(&mut self, v: bool) {
        self.extend_from_slice(&[v as u8]);
    }

    fn put_jute_buffer(&mut self, v: Option<&[u8]>) {
        match v {
            None => self.put_jute_int(-1),
            Some(b) => {
                self.put_jute_int(b.len() as i32);
                self.extend_from_slice(b);
            }
        }
    }

    fn put_jute_string(&mut self, v: Option<&str>) {
        self.put_jute_buffer(v.map(str::as_bytes));
    }

    fn put_jute_vec<T>(&mut self, v: Option<&[T]>, mut elem: impl FnMut(&mut Self, &T)) {
        match v {
            None => self.put_jute_int(-1),
            Some(items) => {
                self.put_jute_int(items.len() as i32);
                for it in items {
                    elem(self, it);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_and_empty_buffers_differ() {
        let mut b = BytesMut::new();
        b.put_jute_buffer(None);
        b.put_jute_buffer(Some(b""));
        let mut r = Reader::new(b.freeze());
        assert_eq!(r.read_buffer_opt("a").unwrap(), None);
        assert_eq!(r.read_buffer_opt("b").unwrap(), Some(Bytes::new()));
        r.finish("t").unwrap();
    }

    #[test]
    fn length_below_minus_one_is_rejected() {
        let mut r = Reader::new(Bytes::from_static(&[0xff, 0xff, 0xff, 0xfe]));
        assert_eq!(
            r.read_buffer_opt("X.data"),
            Err(DecodeError::InvalidLength {
                field: "X.data",
                offset: 0,
                len: -2,
                remaining: 0
            })
        );
    }

    #[test]
    fn huge_count_is_rejected_before_allocating() {
        let mut r = Reader::new(Bytes::from_static(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]));
        let e = r.read_vec("X.children", 4, |r| r.read_string("X.child"));
        assert!(matches!(
            e,
            Err(DecodeError::InvalidCount {
                count: i32::MAX,
                ..
            })
        ));
    }

    #[test]
    fn a_hostile_count_reserves_no_more_than_the_bytes_left() {
        // A full-size getChildren reply: 4-byte names would fit the count on the wire, but
        // 24-byte Strings reserved for all of them would take about 6 MiB.
        let remaining = crate::DEFAULT_MAX_FRAME_LEN - 20;
        let count = remaining / 4;
        let reserved = initial_capacity::<String>(count, remaining);
        assert!(
            reserved * std::mem::size_of::<String>() <= remaining,
            "{reserved}"
        );
        let v = Vec::<String>::with_capacity(reserved);
        assert!(v.capacity() * std::mem::size_of::<String>() <= remaining);
    }

    #[test]
    fn an_honest_count_is_reserved_in_full() {
        assert_eq!(initial_capacity::<String>(3, 3 * 24), 3);
        assert_eq!(initial_capacity::<u8>(1000, 1000), 1000);
    }

    #[test]
    fn invalid_utf8_names_field_and_offset() {
        let mut r = Reader::new(Bytes::from_static(&[0, 0, 0, 0, 0, 0, 0, 1, 0xff]));
        r.read_i32("X.a").unwrap();
        assert_eq!(
            r.read_string("X.path"),
            Err(DecodeError::InvalidUtf8 {
                field: "X.path",
                offset: 4
            })
        );
    }

    #[test]
    fn buffers_are_slices_of_the_frame() {
        let frame = Bytes::from(vec![0, 0, 0, 3, 1, 2, 3]);
        let mut r = Reader::new(frame.clone());
        let b = r.read_buffer("X.data").unwrap();
        assert_eq!(b.as_ptr(), frame[4..].as_ptr());
    }
}
