//! Recognising lock contenders among the children of a lock node, and putting them in the
//! order they were created.
//!
//! Every client library names its lock nodes differently, and a lock path may also hold
//! children that are not contenders at all (configuration, semaphore leases, …). A child is a
//! contender here when its name ends in a ZooKeeper sequence suffix right after a marker we
//! know:
//!
//! | marker | written by |
//! |---|---|
//! | `lock-` | Curator's InterProcessMutex and LeaderSelector (`_c_<uuid>-lock-<seq>`), the Go client, this crate |
//! | `latch-` | Curator's LeaderLatch (`_c_<uuid>-latch-<seq>`) |
//! | `__lock__`, `__rlock__` | kazoo's Lock/Election and ReadLock (`<32 hex>__lock__<seq>`) |
//! | `__READ__`, `__WRIT__` | Curator's InterProcessReadWriteLock |
//! | `x-<session id>-` | ZooKeeper's own lock recipe (C and Java `WriteLock`) |
//!
//! plus any marker given to [`ContenderNames::with_marker`]. Every other child is ignored, so
//! foreign children never block a lock (CURATOR-43, kazoo #385). Read locks count as
//! contenders: an exclusive lock must wait for readers too.
//!
//! # The sequence after the 32-bit wrap
//!
//! The server names a sequential node with `%010d` of the parent's `cversion`, a signed
//! 32-bit counter: after `2147483647` comes `-2147483648` and the suffix turns negative
//! (`lock--2147483648`, …, `lock--000000001`, then `lock-0000000000` again). Curator and kazoo
//! compare the suffix as text, so after the wrap a newcomer (`-…`) sorts before the holder
//! (`0…`, `1…`, `2…`): two holders at once.
//!
//! We order by creation instead: suffixes are parsed as signed 32-bit numbers and compared
//! modulo 2^32 (serial-number arithmetic, as in RFC 1982). That is right across any number of
//! wraps as long as the contenders alive at one time were created less than 2^31 sequence
//! numbers apart, which holds for any real lock (the gap counts creations and deletions of
//! children of that one parent while the oldest contender waits). Beside Curator or kazoo the
//! wrap stays unsafe whatever we do, since they order differently from then on; lock parents
//! are containers, so the counter starts again whenever the server reaps an unused lock path.

use std::cmp::Ordering;

// This file holds the contender and its kind; beside it are the names that recognise one
// and the sequence numbers that order them.
mod names;
mod sequence;
#[cfg(test)]
mod tests;

use self::sequence::serial_cmp;
pub use self::{
    names::ContenderNames,
    sequence::{format_sequence, parse_sequence},
};

/// The prefix Curator's protected mode puts before the node name: `_c_` and a 36-character
/// uuid and a hyphen.
const PROTECTED_PREFIX_LEN: usize = 3 + 36 + 1;

/// Which naming scheme a contender's node follows.
///
/// ```rust
/// use zk_recipes::{ContenderKind, ContenderNames};
///
/// let names = ContenderNames::new();
/// let kind = |name: &str| names.parse(name).map(|c| c.kind());
/// let latch = "_c_0f8e6a3c-1d2b-4c5d-8e9f-a0b1c2d3e4f5-latch-0000000001";
/// assert_eq!(kind(latch), Some(ContenderKind::Latch));
/// let read_lock = "0123456789abcdef0123456789abcdef__rlock__0000000002";
/// assert_eq!(kind(read_lock), Some(ContenderKind::KazooReadLock));
/// assert_eq!(kind("x-72057594037927936-0000000003"), Some(ContenderKind::ZkRecipe));
/// assert_eq!(kind("leases"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContenderKind {
    /// `…lock-<seq>`: Curator's InterProcessMutex and LeaderSelector, the Go client, this crate.
    Lock,
    /// `…latch-<seq>`: Curator's LeaderLatch.
    Latch,
    /// `…__lock__<seq>`: kazoo's Lock and Election.
    KazooLock,
    /// `…__rlock__<seq>`: kazoo's ReadLock.
    KazooReadLock,
    /// `…__READ__<seq>`: the read side of Curator's InterProcessReadWriteLock.
    CuratorRead,
    /// `…__WRIT__<seq>`: the write side of Curator's InterProcessReadWriteLock.
    CuratorWrite,
    /// `x-<session id>-<seq>`: ZooKeeper's own lock recipe.
    ZkRecipe,
    /// A marker added with [`ContenderNames::with_marker`].
    Extra,
}

/// One contender: a child of the lock node whose name we recognise.
///
/// ```
/// use zk_recipes::{ContenderKind, ContenderNames};
///
/// let names = ContenderNames::new();
/// let c = names
///     .parse("_c_0f8e6a3c-1d2b-4c5d-8e9f-a0b1c2d3e4f5-lock-0000000042")
///     .unwrap();
/// assert_eq!(c.sequence(), 42);
/// assert_eq!(c.kind(), ContenderKind::Lock);
/// assert_eq!(c.protected_id(), Some("0f8e6a3c-1d2b-4c5d-8e9f-a0b1c2d3e4f5"));
/// assert!(names.parse("config").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Contender {
    name: String,
    sequence: i32,
    kind: ContenderKind,
}

impl Contender {
    /// The child's name (not the full path).
    ///
    /// See the example on [`Contender`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The sequence number the server appended, as the signed 32-bit number it formatted.
    ///
    /// See the example on [`Contender`].
    pub fn sequence(&self) -> i32 {
        self.sequence
    }

    /// The naming scheme recognised.
    ///
    /// See the example on [`Contender`].
    pub fn kind(&self) -> ContenderKind {
        self.kind
    }

    /// The uuid of a Curator protected-mode name (`_c_<uuid>-…`), if it is one.
    ///
    /// See the example on [`Contender`].
    pub fn protected_id(&self) -> Option<&str> {
        protected_id_of(&self.name)
    }

    /// Compares by creation, wrap-aware (see [`ContenderNames`]), then by name.
    ///
    /// This is only a total order on contenders created less than 2^31 sequence numbers
    /// apart; [`ContenderNames::sorted`] is right for any set of live contenders.
    ///
    /// ```rust
    /// use std::cmp::Ordering;
    /// use zk_recipes::ContenderNames;
    ///
    /// let names = ContenderNames::new();
    /// let older = names.parse("lock-2147483647").unwrap();
    /// let newer = names.parse("lock--2147483648").unwrap(); // the server's counter wrapped
    /// assert_eq!(older.cmp_created(&newer), Ordering::Less);
    /// assert!(newer.name() < older.name()); // as text the newer one would come first
    /// ```
    pub fn cmp_created(&self, other: &Contender) -> Ordering {
        serial_cmp(self.sequence, other.sequence).then_with(|| self.name.cmp(&other.name))
    }
}

/// The uuid in a protected-mode name `_c_<uuid>-<rest>`: 36 characters of hex digits and
/// hyphens in the 8-4-4-4-12 layout. `None` for any other name.
///
/// ```
/// use zk_recipes::protected_id_of;
/// let name = "_c_a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d-lock-0000000001";
/// assert_eq!(protected_id_of(name), Some("a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"));
/// assert_eq!(protected_id_of("lock-0000000001"), None);
/// ```
pub fn protected_id_of(name: &str) -> Option<&str> {
    let b = name.as_bytes();
    if !name.starts_with("_c_")
        || b.len() < PROTECTED_PREFIX_LEN
        || b[PROTECTED_PREFIX_LEN - 1] != b'-'
    {
        return None;
    }
    // Checked byte by byte first: slicing the str is only safe once they are all ASCII.
    let well_formed = b[3..PROTECTED_PREFIX_LEN - 1]
        .iter()
        .enumerate()
        .all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    well_formed.then(|| &name[3..PROTECTED_PREFIX_LEN - 1])
}
