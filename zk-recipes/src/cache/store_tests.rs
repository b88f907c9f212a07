use std::collections::HashMap;

use super::*;

fn stat(czxid: i64, owner: i64, data_length: i32) -> Stat {
    Stat {
        czxid,
        mzxid: czxid + 1,
        pzxid: czxid + 2,
        ctime: 7,
        mtime: 8,
        version: 3,
        cversion: 4,
        aversion: 5,
        ephemeral_owner: owner,
        data_length,
        num_children: 6,
    }
}

#[test]
fn a_znode_gives_back_its_whole_stat_name_and_data() {
    let mut s = Store::new(true);
    let root = s.add(NONE, "", &stat(1, 0, 4), b"root").unwrap();
    let long = "x".repeat(300);
    let a = s.add(root, &long, &stat(2, 0x1234, 3), b"abc").unwrap();
    let b = s.add(root, "b", &stat(3, 0, 0), b"").unwrap();
    assert_eq!(s.stat(a), stat(2, 0x1234, 3));
    assert_eq!((s.name(a), s.data(a)), (long.as_str(), &b"abc"[..]));
    assert_eq!(
        (s.name(b), s.data(b), s.stat(b)),
        ("b", &b""[..], stat(3, 0, 0))
    );
    assert_eq!(s.find(root, &long), Some(a));
    assert_eq!(s.find(root, "c"), None);
    assert_eq!(s.children(root), [b, a]);
    s.update(a, &stat(2, 0, 5), Some(b"hello"));
    assert_eq!((s.data(a), s.stat(a)), (&b"hello"[..], stat(2, 0, 5)));
    assert_eq!(s.len(), 3);
}

#[test]
fn a_stats_only_store_keeps_the_data_length_and_no_data() {
    let mut s = Store::new(false);
    let root = s.add(NONE, "", &stat(1, 0, 4), b"root").unwrap();
    assert_eq!((s.data(root), s.stat(root)), (&b""[..], stat(1, 0, 4)));
    s.update(root, &stat(1, 0, 70_000), Some(b"ignored"));
    assert_eq!(s.stat(root).data_length, 70_000);
    assert_eq!(s.name(root), "");
}

/// The store against a model (a map from name to node), through random adds and removals
/// that fill and empty the index many times over; small name sets make small tables, where
/// runs of entries wrap round the table's end.
#[test]
fn lookups_stay_right_through_adds_and_removals() {
    for names in [5, 11, 40, 3000] {
        check_against_model(names, 20_000);
    }
}

fn check_against_model(names: u64, rounds: i64) {
    // A fixed xorshift: the same sequence every run.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut s = Store::new(true);
    let root = s.add(NONE, "", &stat(0, 0, 0), b"").unwrap();
    let mut model: HashMap<String, u32> = HashMap::new();
    for round in 0..rounds {
        let name = next(names).to_string();
        match model.get(&name) {
            Some(&id) if next(10) < 6 => {
                s.remove(id);
                model.remove(&name);
            }
            Some(_) => {}
            None => {
                let id = s
                    .add(root, &name, &stat(round, 0, 1), name.as_bytes())
                    .unwrap();
                model.insert(name, id);
            }
        }
        if names < 100 || round % 1000 == 0 {
            for n in 0..names {
                let n = n.to_string();
                assert_eq!(s.find(root, &n), model.get(&n).copied(), "{n} at {round}");
            }
        }
    }
    assert_eq!(s.len(), model.len() + 1);
    let mut listed: Vec<&str> = s.children(root).iter().map(|&c| s.name(c)).collect();
    let mut expected: Vec<&str> = model.keys().map(String::as_str).collect();
    expected.sort_unstable();
    listed.sort_unstable();
    assert_eq!(listed, expected);
    for (name, &id) in &model {
        assert_eq!(s.data(id), name.as_bytes());
    }
}
