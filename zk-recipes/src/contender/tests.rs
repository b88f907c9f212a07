//! Unit tests of contender names and their order, kept apart from the code because they
//! span names, sequences and sorting alike.

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
