//! Counters shared through one znode, byte-compatible with Curator's:
//! [`SharedCount`] (Curator's SharedCount: a 4-byte big-endian `int`, versioned sets and a
//! change stream) and [`DistributedAtomicLong`] (Curator's DistributedAtomicLong: an 8-byte
//! big-endian `long`, optimistic updates retried under a [`RetryPolicy`](zk_session::RetryPolicy),
//! optionally promoted to a lock).
//!
//! Both keep their value in a PERSISTENT node at the path given, its parents created as
//! containers, so a Curator process and ours read and write the same number.

mod atomic_long;
mod shared_count;

pub use self::{
    atomic_long::{AtomicLongBuilder, AtomicOutcome, DistributedAtomicLong},
    shared_count::{SharedCount, SharedCountBuilder, SharedCountStatus, VersionedCount},
};

use crate::RecipeError;

/// The parent of an absolute path (`/` for a top-level node).
pub(crate) fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The first `N` bytes of `data` as a big-endian number, as Java's `ByteBuffer.getInt` /
/// `getLong` read them: shorter data is corrupt, longer data's extra bytes are ignored.
pub(crate) fn be_bytes<const N: usize>(path: &str, data: &[u8]) -> Result<[u8; N], RecipeError> {
    data.get(..N)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| RecipeError::BadData {
            path: path.to_owned(),
            len: data.len(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents() {
        assert_eq!(parent_of("/a"), "/");
        assert_eq!(parent_of("/a/b/c"), "/a/b");
    }

    #[test]
    fn big_endian_prefixes() {
        assert_eq!(be_bytes::<4>("/c", &[0, 0, 1, 2, 9]).unwrap(), [0, 0, 1, 2]);
        assert!(matches!(
            be_bytes::<8>("/c", &[1, 2, 3]),
            Err(RecipeError::BadData { len: 3, .. })
        ));
    }
}
