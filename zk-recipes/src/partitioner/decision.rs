//! The partitioner's decisions as plain values: the names of its nodes, who the members are,
//! which items this member keeps, who holds a kazoo lock, and the state machine. No I/O, so
//! each is a unit test.

/// What kazoo's Lock writes between its contender's uuid and the sequence number.
pub(crate) const LOCK_MARKER: &str = "__lock__";

/// A fresh uuid v4 as 32 lowercase hex digits, as Python's `uuid4().hex`: kazoo's party and
/// lock node names start with one, and it holds no `-` (a party name's first `-` ends it).
pub(crate) fn uuid_hex() -> String {
    crate::new_protected_id().replace('-', "")
}

/// The identifier of the member whose party node is `name` (`<uuid4hex>-<identifier>`):
/// everything after the first `-`, as kazoo's ShallowParty reads it (the whole name when
/// there is none).
pub(crate) fn member_of(name: &str) -> &str {
    name.split_once('-').map_or(name, |(_, id)| id)
}

/// The sequence number of a kazoo lock node (`<uuid4hex>__lock__<seq10>`); `None` for a name
/// kazoo's Lock would not count as a contender.
pub(crate) fn lock_sequence(name: &str) -> Option<u64> {
    let (_, seq) = name.rsplit_once(LOCK_MARKER)?;
    if seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    seq.parse().ok()
}

/// Where our lock node stands among the contenders `children`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LockTurn {
    /// Ours has the lowest sequence: the lock is held.
    Held,
    /// Wait for this node (the contender just ahead of ours) to go.
    WaitFor(String),
    /// Our node is not among them (it was deleted, or the session that made it is gone).
    Missing,
}

/// The turn of our node `ours` among `children` (kazoo: lowest sequence holds, each waiter
/// watches the one just ahead).
pub(crate) fn lock_turn<S: AsRef<str>>(children: &[S], ours: &str) -> LockTurn {
    let Some(mine) = lock_sequence(ours) else {
        return LockTurn::Missing;
    };
    if !children.iter().any(|c| c.as_ref() == ours) {
        return LockTurn::Missing;
    }
    children
        .iter()
        .filter_map(|c| Some((lock_sequence(c.as_ref())?, c.as_ref())))
        .filter(|(seq, _)| *seq < mine)
        .max_by_key(|(seq, _)| *seq)
        .map_or(LockTurn::Held, |(_, name)| {
            LockTurn::WaitFor(name.to_owned())
        })
}

/// The items this member keeps: kazoo's default partition function over the sorted set and
/// the sorted identifiers (Rust's `str` order is Python's code-point order), `set[i::n]`
/// with `i` our place among the members.
///
/// `party` are the party's node names, `ours` our own node's name. kazoo takes `i` as the
/// first index of our identifier, so two members with one identifier take the same slice
/// and the next one goes unowned; here a duplicated identifier's members are told apart by
/// their node names, each taking its own index (kazoo members with a unique identifier
/// compute the same slices as kazoo does). `None` when our node is not in the party.
pub(crate) fn partition<S: AsRef<str>>(
    items: &[String],
    party: &[S],
    ours: &str,
) -> Option<Vec<String>> {
    let mut nodes: Vec<&str> = party.iter().map(|n| n.as_ref()).collect();
    if !nodes.contains(&ours) {
        return None;
    }
    nodes.sort_by(|a, b| member_of(a).cmp(member_of(b)).then(a.cmp(b)));
    let n = nodes.len();
    let i = nodes.iter().position(|&name| name == ours)?;
    let mut set: Vec<&String> = items.iter().collect();
    set.sort();
    set.dedup();
    Some(set.into_iter().skip(i).step_by(n).cloned().collect())
}

/// The partitioner's state, kazoo's `PartitionState` plus the end of a closed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting for the party to settle, then taking the locks of our slice.
    Allocating,
    /// Every lock of our slice is held.
    Acquired,
    /// The party or the connection changed: stop using the items, then release them.
    Release,
    /// Over: closed, or failed for good.
    Over,
}

/// What happened to the partitioner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Happening {
    /// Every lock of the slice is held, the party unchanged since it settled.
    AllHeld,
    /// The party's children changed.
    PartyChanged,
    /// The connection was suspended, lost, or the session expired (our locks may be gone).
    SessionDoubt,
    /// The locks are released.
    Released,
    /// Closed, or a failure no retry mends (the client's end, the server's refusal).
    End,
}

impl Phase {
    /// The state after `what` (an event that does not apply leaves it as it is).
    pub(crate) fn next(self, what: Happening) -> Phase {
        use Happening as H;
        match (self, what) {
            (Phase::Over, _) | (_, H::End) => Phase::Over,
            (Phase::Allocating, H::AllHeld) => Phase::Acquired,
            (Phase::Acquired, H::PartyChanged | H::SessionDoubt) => Phase::Release,
            (Phase::Release, H::Released) => Phase::Allocating,
            (phase, _) => phase,
        }
    }

    /// Whether this member may use its slice: only while it is acquired.
    pub(crate) fn owns(self) -> bool {
        self == Phase::Acquired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn members_are_what_follows_the_first_dash() {
        assert_eq!(member_of("0123abcd-host-1"), "host-1");
        assert_eq!(member_of("nodash"), "nodash");
        assert_eq!(member_of("u-"), "");
    }

    #[test]
    fn uuid_hex_is_32_hex_digits_without_dashes() {
        let u = uuid_hex();
        assert_eq!(u.len(), 32);
        assert!(u
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(u, uuid_hex());
    }

    #[test]
    fn lock_sequences_follow_the_marker() {
        assert_eq!(lock_sequence("abc__lock__0000000012"), Some(12));
        assert_eq!(lock_sequence("abc__rlock__0000000012"), None);
        assert_eq!(lock_sequence("abc__lock__"), None);
        assert_eq!(lock_sequence("abc__lock__12x"), None);
        assert_eq!(lock_sequence("_c_x-lock-0000000001"), None);
    }

    #[test]
    fn the_lowest_sequence_holds_and_each_waits_for_the_one_ahead() {
        let cs = [
            "b__lock__0000000003",
            "a__lock__0000000001",
            "c__lock__0000000007",
            "junk",
        ];
        assert_eq!(lock_turn(&cs, "a__lock__0000000001"), LockTurn::Held);
        assert_eq!(
            lock_turn(&cs, "c__lock__0000000007"),
            LockTurn::WaitFor("b__lock__0000000003".into())
        );
        assert_eq!(
            lock_turn(&cs, "b__lock__0000000003"),
            LockTurn::WaitFor("a__lock__0000000001".into())
        );
        assert_eq!(lock_turn(&cs, "d__lock__0000000002"), LockTurn::Missing);
        assert_eq!(lock_turn(&cs, "junk"), LockTurn::Missing);
    }

    #[test]
    fn partition_is_kazoos_stride_over_sorted_sets() {
        let set = items(&["e", "a", "d", "b", "c"]);
        let party = ["u1-m2", "u2-m1"];
        // Sorted members m1, m2; sorted items a..e; m1 keeps [0::2], m2 [1::2].
        assert_eq!(
            partition(&set, &party, "u2-m1"),
            Some(items(&["a", "c", "e"]))
        );
        assert_eq!(partition(&set, &party, "u1-m2"), Some(items(&["b", "d"])));
        assert_eq!(partition(&set, &party, "u3-m3"), None);
    }

    #[test]
    fn partition_sorts_by_code_point_as_python_does() {
        // Python: sorted(["a", "B", "é", "Z"]) == ["B", "Z", "a", "é"].
        let set = items(&["a", "B", "é", "Z"]);
        assert_eq!(
            partition(&set, &["u-only"], "u-only"),
            Some(items(&["B", "Z", "a", "é"]))
        );
    }

    #[test]
    fn every_item_goes_to_exactly_one_member() {
        let set: Vec<String> = (0..23).map(|i| format!("shard-{i}")).collect();
        let party = ["a-x", "b-y", "c-z", "d-y"];
        let mut all: Vec<String> = party
            .iter()
            .flat_map(|me| partition(&set, &party, me).unwrap())
            .collect();
        all.sort();
        let mut want = set.clone();
        want.sort();
        assert_eq!(all, want);
    }

    #[test]
    fn a_duplicated_identifier_leaves_no_slice_unowned() {
        let set = items(&["0", "1", "2"]);
        let party = ["aa-dup", "bb-dup", "cc-z"];
        assert_eq!(partition(&set, &party, "aa-dup"), Some(items(&["0"])));
        assert_eq!(partition(&set, &party, "bb-dup"), Some(items(&["1"])));
        assert_eq!(partition(&set, &party, "cc-z"), Some(items(&["2"])));
    }

    #[test]
    fn the_state_machine_follows_kazoo() {
        use Happening as H;
        let p = Phase::Allocating;
        assert_eq!(p.next(H::PartyChanged), Phase::Allocating);
        let p = p.next(H::AllHeld);
        assert_eq!(p, Phase::Acquired);
        assert!(p.owns());
        assert_eq!(p.next(H::SessionDoubt), Phase::Release);
        let p = p.next(H::PartyChanged);
        assert_eq!(p, Phase::Release);
        assert!(!p.owns());
        assert_eq!(
            p.next(H::AllHeld),
            Phase::Release,
            "no acquiring before the release"
        );
        let p = p.next(H::Released);
        assert_eq!(p, Phase::Allocating);
        assert_eq!(p.next(H::End), Phase::Over);
        assert_eq!(
            Phase::Over.next(H::Released),
            Phase::Over,
            "over is terminal"
        );
    }
}
