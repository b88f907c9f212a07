//! [`ContenderNames`]: which children of a lock node are contenders, and of which kind, by the
//! marker before their sequence suffix (the table in the [parent module](super)).

use super::{
    sequence::{parse_sequence, sort_by_creation},
    Contender, ContenderKind,
};

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

/// Recognises contender names: the default markers plus any added ones.
///
/// ```
/// use zk_recipes::{ContenderKind, ContenderNames};
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
