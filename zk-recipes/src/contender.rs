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

/// The markers recognised by default, longest first so that `__rlock__` is not taken for
/// `lock-`-less garbage and each name gets its most specific kind.
const MARKERS: &[(&str, ContenderKind)] = &[
    ("__rlock__", ContenderKind::KazooReadLock),
    ("__lock__", ContenderKind::KazooLock),
    ("__READ__", ContenderKind::CuratorRead),
    ("__WRIT__", ContenderKind::CuratorWrite),
    ("latch-", ContenderKind::Latch),
    ("lock-", ContenderKind::Lock),
];

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
/// use zk_recipes::contender::{ContenderKind, ContenderNames};
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

    /// Compares by creation, wrap-aware (see the [module documentation](self)), then by name.
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
/// use zk_recipes::contender::protected_id_of;
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

/// Recognises contender names: the default markers plus any added ones.
///
/// ```
/// use zk_recipes::contender::{ContenderKind, ContenderNames};
///
/// let names = ContenderNames::new().with_marker("member_");
/// let sorted = names.sorted([
///     "config",
///     "0123456789abcdef0123456789abcdef__lock__0000000007",
///     "member_0000000003",
///     "_c_a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d-lock-0000000005",
/// ]);
/// let seqs: Vec<i32> = sorted.iter().map(|c| c.sequence()).collect();
/// assert_eq!(seqs, [3, 5, 7]);
/// assert_eq!(sorted[0].kind(), ContenderKind::Extra);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContenderNames {
    extra: Vec<String>,
}

impl ContenderNames {
    /// The default markers only.
    ///
    /// See the example on [`ContenderNames`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Also counts names with `marker` right before the sequence suffix, as kazoo's
    /// `extra_lock_patterns` does. An empty marker is ignored (it would make every
    /// sequential name a contender).
    ///
    /// See the example on [`ContenderNames`].
    pub fn with_marker(mut self, marker: impl Into<String>) -> Self {
        let marker = marker.into();
        if !marker.is_empty() && !self.extra.contains(&marker) {
            self.extra.push(marker);
        }
        self
    }

    /// The contender `name` stands for, or `None` when it is not one.
    ///
    /// See the example on [`Contender`].
    pub fn parse(&self, name: &str) -> Option<Contender> {
        // The suffix is what follows the marker, as in Curator's driver (the text after the
        // last marker). Ten characters are tried first: a positive sequence of 10^9 or more
        // ("1000000005") also parses as a negative one of eleven characters ("-1000000005")
        // when the character before its digits is a hyphen, and a marker that matches both
        // splits (a custom "-" after a protected prefix `_c_<uuid>-`) must read it as the
        // positive number it almost always is. Only a longer marker in front of the eleven
        // characters (the built-in `lock-` before `-1000000005` after the 32-bit wrap)
        // makes the negative reading win.
        let split = |len: usize| {
            if name.len() < len || !name.is_char_boundary(name.len() - len) {
                return None;
            }
            let (prefix, suffix) = name.split_at(name.len() - len);
            let sequence = parse_sequence(suffix)?;
            let (kind, marker_len) = self.kind_of_prefix(prefix)?;
            Some((sequence, kind, marker_len))
        };
        let chosen = match (split(10), split(11)) {
            (Some(ten), Some(eleven)) if eleven.2 > ten.2 => Some(eleven),
            (Some(ten), _) => Some(ten),
            (None, eleven) => eleven,
        };
        chosen.map(|(sequence, kind, _)| Contender {
            name: name.to_owned(),
            sequence,
            kind,
        })
    }

    /// The kind a name with this text before its sequence suffix has, and the length of the
    /// marker that says so.
    fn kind_of_prefix(&self, prefix: &str) -> Option<(ContenderKind, usize)> {
        if let Some((m, kind)) = MARKERS.iter().find(|(m, _)| prefix.ends_with(m)) {
            return Some((*kind, m.len()));
        }
        if is_zk_recipe_prefix(prefix) {
            return Some((ContenderKind::ZkRecipe, prefix.len()));
        }
        self.extra
            .iter()
            .filter(|m| prefix.ends_with(m.as_str()))
            .map(|m| (ContenderKind::Extra, m.len()))
            .max_by_key(|(_, len)| *len)
    }

    /// The contenders among `children`, oldest first; other children are left out.
    ///
    /// See the example on [`ContenderNames`].
    pub fn sorted<I, S>(&self, children: I) -> Vec<Contender>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list: Vec<Contender> = children
            .into_iter()
            .filter_map(|c| self.parse(c.as_ref()))
            .collect();
        sort_by_creation(&mut list);
        list
    }
}

/// `x-<session id>-`: the session id is a decimal i64, so it may carry a minus sign.
fn is_zk_recipe_prefix(prefix: &str) -> bool {
    let Some(mid) = prefix.strip_prefix("x-").and_then(|p| p.strip_suffix('-')) else {
        return false;
    };
    let digits = mid.strip_prefix('-').unwrap_or(mid);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Parses exactly what the server writes for a sequence: `%010d` of an i32. That is ten
/// digits for 0..=2147483647, `-` and nine zero-padded digits for -999999999..=-1, and `-`
/// and ten digits (the first not zero) below that.
///
/// ```
/// use zk_recipes::contender::parse_sequence;
/// assert_eq!(parse_sequence("0000000042"), Some(42));
/// assert_eq!(parse_sequence("-000000001"), Some(-1));
/// assert_eq!(parse_sequence("-2147483648"), Some(i32::MIN));
/// assert_eq!(parse_sequence("9999999999"), None); // above i32::MAX
/// assert_eq!(parse_sequence("42"), None);
/// ```
pub fn parse_sequence(text: &str) -> Option<i32> {
    let b = text.as_bytes();
    let digits = match (b.len(), b.first()) {
        (10, Some(b'-')) => &b[1..],
        (10, _) => b,
        (11, Some(b'-')) if b[1] != b'0' => &b[1..],
        _ => return None,
    };
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let magnitude: i64 = digits
        .iter()
        .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
    let value = if b[0] == b'-' { -magnitude } else { magnitude };
    // "-000000000" is not something the server writes (zero has no sign).
    if value == 0 && b[0] == b'-' {
        return None;
    }
    i32::try_from(value).ok()
}

/// The suffix the server appends for `sequence`: `%010d`.
///
/// ```
/// use zk_recipes::contender::format_sequence;
/// assert_eq!(format_sequence(7), "0000000007");
/// assert_eq!(format_sequence(-7), "-000000007");
/// assert_eq!(format_sequence(i32::MIN), "-2147483648");
/// ```
pub fn format_sequence(sequence: i32) -> String {
    format!("{sequence:010}")
}

/// Serial-number comparison of two sequences: `a` comes before `b` when `b` is less than
/// 2^31 steps after `a`, modulo 2^32.
fn serial_cmp(a: i32, b: i32) -> Ordering {
    match b.wrapping_sub(a) {
        0 => Ordering::Equal,
        d if d > 0 => Ordering::Less,
        _ => Ordering::Greater,
    }
}

/// Sorts contenders into creation order. Sorting the sequences as unsigned numbers puts them
/// on the 2^32 circle; the widest gap between neighbours (going round) is where the oldest
/// follows the youngest, so the list is rotated to start after it. Unlike a sort with
/// [`serial_cmp`], this is well defined for any set.
fn sort_by_creation(list: &mut [Contender]) {
    list.sort_by(|a, b| {
        (a.sequence as u32)
            .cmp(&(b.sequence as u32))
            .then_with(|| a.name.cmp(&b.name))
    });
    let n = list.len();
    if n < 2 {
        return;
    }
    let gap = |i: usize| {
        let here = list[i].sequence as u32;
        let next = list[(i + 1) % n].sequence as u32;
        next.wrapping_sub(here)
    };
    // The last element's gap wraps round to the first; it wins ties so that an unwrapped
    // list keeps its plain order.
    let mut widest = n - 1;
    for i in 0..n - 1 {
        if gap(i) > gap(widest) {
            widest = i;
        }
    }
    list.rotate_left((widest + 1) % n);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const UUID: &str = "0f8e6a3c-1d2b-4c5d-8e9f-a0b1c2d3e4f5";
    const HEX: &str = "0123456789abcdef0123456789abcdef";

    fn kinds(names: &ContenderNames, name: &str) -> Option<(ContenderKind, i32)> {
        names.parse(name).map(|c| (c.kind(), c.sequence()))
    }

    #[test]
    fn recognises_every_known_scheme() {
        let n = ContenderNames::new();
        use ContenderKind::*;
        let cases = [
            (format!("_c_{UUID}-lock-0000000001"), Some((Lock, 1))),
            ("lock-0000000002".to_string(), Some((Lock, 2))),
            (format!("_c_{UUID}-latch-0000000003"), Some((Latch, 3))),
            (format!("{HEX}__lock__0000000004"), Some((KazooLock, 4))),
            (
                format!("{HEX}__rlock__0000000005"),
                Some((KazooReadLock, 5)),
            ),
            (
                format!("_c_{UUID}-__READ__0000000006"),
                Some((CuratorRead, 6)),
            ),
            (
                format!("_c_{UUID}-__WRIT__0000000007"),
                Some((CuratorWrite, 7)),
            ),
            (
                "x-72057594037927936-0000000008".to_string(),
                Some((ZkRecipe, 8)),
            ),
            ("x--5-0000000009".to_string(), Some((ZkRecipe, 9))),
            ("config".to_string(), None),
            ("leases".to_string(), None),
            ("job-0000000001".to_string(), None),
            ("lock-".to_string(), None),
            ("lock-42".to_string(), None),
            ("lock-9999999999".to_string(), None),
            ("lock-00000000001".to_string(), None),
            ("x-abc-0000000001".to_string(), None),
            ("x--0000000001".to_string(), None),
            ("lock-000000000é".to_string(), None),
        ];
        for (name, want) in cases {
            assert_eq!(kinds(&n, &name), want, "{name}");
        }
    }

    #[test]
    fn negative_suffixes_after_the_wrap() {
        let n = ContenderNames::new();
        assert_eq!(
            kinds(&n, "lock--2147483648"),
            Some((ContenderKind::Lock, i32::MIN))
        );
        assert_eq!(
            kinds(&n, "lock--000000001"),
            Some((ContenderKind::Lock, -1))
        );
        // 11 characters "-1000000005" and 10 characters "1000000005" both parse; the marker
        // decides.
        assert_eq!(
            kinds(&n, "lock-1000000005"),
            Some((ContenderKind::Lock, 1_000_000_005))
        );
        assert_eq!(
            kinds(&n, "lock--1000000005"),
            Some((ContenderKind::Lock, -1_000_000_005))
        );
        assert_eq!(kinds(&n, "x-12--000000003").map(|k| k.1), Some(-3));
        assert_eq!(parse_sequence("-000000000"), None);
        assert_eq!(parse_sequence("-0123456789"), None);
    }

    #[test]
    fn a_custom_marker_orders_sequences_from_ten_to_the_ninth() {
        // A custom "-" marker after a protected prefix: the node created at sequence 10^9
        // ends in "--1000000000", whose last eleven characters also parse (as -10^9).
        let names = ContenderNames::new().with_marker("-");
        let name = |seq: i32| format!("_c_{UUID}-{}", format_sequence(seq));
        for seq in [1_000_000_000, 1_500_000_000, i32::MAX, 999_999_999, 7] {
            assert_eq!(kinds(&names, &name(seq)).map(|k| k.1), Some(seq), "{seq}");
        }
        let sorted = names.sorted([name(1_000_000_001), name(999_999_999), name(1_000_000_000)]);
        let seqs: Vec<i32> = sorted.iter().map(|c| c.sequence()).collect();
        assert_eq!(seqs, [999_999_999, 1_000_000_000, 1_000_000_001]);
        // Two custom markers, one a prefix of the other's text: the longer one decides.
        let names = ContenderNames::new()
            .with_marker("member")
            .with_marker("member-");
        assert_eq!(
            kinds(&names, "member-1000000000").map(|k| k.1),
            Some(1_000_000_000)
        );
        // The built-in marker still reads the wrapped negative suffix, even beside "-".
        assert_eq!(
            kinds(&names.with_marker("-"), "lock--1000000005"),
            Some((ContenderKind::Lock, -1_000_000_005))
        );
    }

    #[test]
    fn extra_markers() {
        let n = ContenderNames::new().with_marker("n_").with_marker("");
        assert_eq!(kinds(&n, "n_0000000001"), Some((ContenderKind::Extra, 1)));
        assert_eq!(kinds(&ContenderNames::new(), "n_0000000001"), None);
        assert_eq!(n, ContenderNames::new().with_marker("n_").with_marker("n_"));
    }

    #[test]
    fn protected_ids() {
        let c = ContenderNames::new()
            .parse(&format!("_c_{UUID}-lock-0000000001"))
            .unwrap();
        assert_eq!(c.protected_id(), Some(UUID));
        assert_eq!(protected_id_of("_c_short-lock-0000000001"), None);
        assert_eq!(
            protected_id_of(&format!("_c_{}-lock-", UUID.replace('-', "x"))),
            None
        );
        assert_eq!(protected_id_of(&format!("_c_{UUID}xlock-")), None);
        assert_eq!(protected_id_of(&format!("_c_{UUID}-")), Some(UUID));
    }

    #[test]
    fn ignores_foreign_children_and_orders_mixed_schemes() {
        let names = ContenderNames::new();
        let sorted = names.sorted([
            format!("{HEX}__lock__0000000012"),
            "readme".to_string(),
            format!("_c_{UUID}-lock-0000000010"),
            "locks".to_string(),
            "x-1-0000000011".to_string(),
        ]);
        let seqs: Vec<i32> = sorted.iter().map(Contender::sequence).collect();
        assert_eq!(seqs, [10, 11, 12]);
    }

    #[test]
    fn order_across_the_wrap() {
        let names = ContenderNames::new();
        let seqs = |v: &[i32]| {
            let sorted = names.sorted(v.iter().map(|s| format!("lock-{}", format_sequence(*s))));
            sorted.iter().map(Contender::sequence).collect::<Vec<_>>()
        };
        assert_eq!(
            seqs(&[i32::MIN, i32::MAX, i32::MAX - 1]),
            [i32::MAX - 1, i32::MAX, i32::MIN]
        );
        assert_eq!(seqs(&[0, -1, -2]), [-2, -1, 0]);
        assert_eq!(seqs(&[3]), [3]);
        assert_eq!(seqs(&[]), Vec::<i32>::new());
    }

    proptest! {
        #[test]
        fn sequences_round_trip(s in any::<i32>()) {
            prop_assert_eq!(parse_sequence(&format_sequence(s)), Some(s));
            for prefix in [format!("_c_{UUID}-lock-"), format!("{HEX}__lock__"),
                           "x-123-".to_string(), "x--9-".to_string(), "latch-".to_string()] {
                let name = format!("{prefix}{}", format_sequence(s));
                let c = ContenderNames::new().parse(&name);
                prop_assert_eq!(c.map(|c| c.sequence()), Some(s), "{}", name);
            }
        }

        #[test]
        fn parsing_never_panics(name in "\\PC{0,60}") {
            let _ = ContenderNames::new().with_marker("-").parse(&name);
            let _ = protected_id_of(&name);
        }

        /// Contenders created one after another (with gaps, as deletions leave them) sort
        /// back into creation order wherever the window sits on the 2^32 circle, in
        /// particular across the wrap to negative and back to zero.
        #[test]
        fn creation_order_survives_the_wrap(
            start in any::<i32>(),
            steps in proptest::collection::vec(1u32..1_000_000, 0..40),
            shuffle_seed in any::<u64>(),
            foreign in proptest::collection::vec("[a-z]{1,12}", 0..5),
        ) {
            let mut seq = start;
            let mut created = vec![seq];
            for s in &steps {
                seq = seq.wrapping_add(*s as i32);
                created.push(seq);
            }
            let mut names: Vec<String> =
                created.iter().map(|s| format!("_c_{UUID}-lock-{}", format_sequence(*s))).collect();
            names.extend(foreign);
            // A deterministic shuffle: the server lists children in no particular order.
            let n = names.len();
            let mut state = shuffle_seed | 1;
            for i in (1..n).rev() {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17;
                names.swap(i, (state % (i as u64 + 1)) as usize);
            }
            let sorted: Vec<i32> =
                ContenderNames::new().sorted(&names).iter().map(Contender::sequence).collect();
            prop_assert_eq!(sorted, created);
        }
    }
}
