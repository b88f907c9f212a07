//! Each member's own copy of the ledgers, compared.
//!
//! ZooKeeper promises every member the same history. A client cannot make members disagree,
//! so a member whose copy differs from the quorum's (a transaction it holds that the quorum
//! does not, or the reverse) is a server fault — as ZooKeeper 3.8.0's DIFF-sync bugs
//! (ZOOKEEPER-4785, -4646) produce after a kill -9 at the wrong moment. The checker judges the
//! clients on the copy a majority of members holds (what ZooKeeper calls committed) and
//! reports a member that differs as a server fault beside, not instead of, the client
//! invariants: the run still fails, but says whose fault it is.

use std::{net::SocketAddr, time::Duration};

use zk_session::Client;

use crate::ledger::{entries_of, read_ledger, Ledger};

/// Differences shown per member.
const SHOW: usize = 5;

/// One member's copy of every ledger, read over a connection to that member alone, after a
/// `sync` so that a follower has caught up with the leader.
pub async fn read_member(addr: SocketAddr, names: &[String]) -> Vec<Result<Ledger, String>> {
    let c = match Client::builder(&addr.to_string())
        .session_timeout(Duration::from_secs(20))
        .operation_timeout(Duration::from_secs(30))
        .connect()
        .await
    {
        Ok(c) => c,
        Err(e) => {
            return names
                .iter()
                .map(|_| Err(format!("{addr}: cannot connect: {e}")))
                .collect()
        }
    };
    let synced = c.sync("/").await;
    let mut out = Vec::new();
    for name in names {
        out.push(match &synced {
            Err(e) => Err(format!("{addr}: sync: {e}")),
            Ok(()) => read_ledger(&c, name, &mut Vec::new())
                .await
                .map_err(|e| format!("{addr}: {e}")),
        });
    }
    let _ = c.close().await;
    out
}

/// What the members hold of one ledger.
#[derive(Debug)]
pub struct Agreement {
    /// The copy a majority of the members holds.
    pub quorum: Ledger,
    /// Each member that holds another copy, with how it differs from the quorum's.
    pub divergent: Vec<String>,
    /// Members whose copy could not be read (down at the end, say): neither for nor against.
    pub unread: Vec<String>,
}

/// The copy held by more than half of `members` members, given each member's read. Fails
/// when no copy has a majority (too many members unread, or all disagree).
pub fn agree(
    members: usize,
    reads: &[(SocketAddr, Result<Ledger, String>)],
) -> Result<Agreement, String> {
    let read: Vec<(SocketAddr, &Ledger)> = reads
        .iter()
        .filter_map(|(a, r)| Some((*a, r.as_ref().ok()?)))
        .collect();
    let unread: Vec<String> = reads
        .iter()
        .filter_map(|(_, r)| r.as_ref().err().cloned())
        .collect();
    let quorum = read
        .iter()
        .map(|(_, l)| *l)
        .find(|l| read.iter().filter(|(_, m)| m == l).count() * 2 > members)
        .ok_or_else(|| {
            let held: Vec<String> = read.iter().map(|(a, l)| summary(*a, l)).collect();
            format!("no copy held by a majority of {members} members: {held:?}; unread: {unread:?}")
        })?;
    let divergent = read
        .iter()
        .filter(|(_, l)| *l != quorum)
        .map(|(a, l)| format!("{}: {}", summary(*a, l), differences(quorum, l).join("; ")))
        .collect();
    Ok(Agreement {
        quorum: quorum.clone(),
        divergent,
        unread,
    })
}

/// A member's copy in one line: its znode's version and mzxid, and its entry count.
pub fn summary(addr: SocketAddr, l: &Ledger) -> String {
    format!(
        "{addr} has {}: version {}, mzxid {:#x}, {} entries in {} buckets",
        l.name,
        l.root_version,
        l.root_mzxid,
        entries_of(l),
        l.buckets.len()
    )
}

/// How `member`'s copy differs from the quorum's, a few items of each kind.
fn differences(quorum: &Ledger, member: &Ledger) -> Vec<String> {
    let mut out = Vec::new();
    if (quorum.root_version, &quorum.root_data, quorum.root_mzxid)
        != (member.root_version, &member.root_data, member.root_mzxid)
    {
        out.push(format!(
            "ledger znode version {} data {:?} mzxid {:#x} where the quorum has {} {:?} {:#x}",
            member.root_version,
            member.root_data,
            member.root_mzxid,
            quorum.root_version,
            quorum.root_data,
            quorum.root_mzxid
        ));
    }
    let only = |a: &Ledger, b: &Ledger, what: &str| -> Vec<String> {
        let mut found = Vec::new();
        for ba in &a.buckets {
            let bb = b.buckets.iter().find(|x| x.token == ba.token);
            for e in &ba.entries {
                if !bb.is_some_and(|bb| bb.entries.contains(e)) {
                    found.push(format!("token {} entry {}_{}", ba.token, e.writer, e.seq));
                }
            }
            if let Some(bb) = bb.filter(|bb| (bb.czxid, bb.pzxid) != (ba.czxid, ba.pzxid)) {
                found.push(format!(
                    "token {} bucket zxids {:#x}/{:#x} against {:#x}/{:#x}",
                    ba.token, ba.czxid, ba.pzxid, bb.czxid, bb.pzxid
                ));
            }
        }
        let n = found.len();
        found.truncate(SHOW);
        if n > 0 {
            vec![format!("{n} {what}: {}", found.join(", "))]
        } else {
            Vec::new()
        }
    };
    out.extend(only(member, quorum, "only on this member"));
    out.extend(only(quorum, member, "missing on this member"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{Bucket, Entry};

    fn ledger(entries: &[(u64, &str, u64)]) -> Ledger {
        let mut buckets: Vec<Bucket> = Vec::new();
        for (i, &(token, writer, seq)) in entries.iter().enumerate() {
            let e = Entry {
                writer: writer.to_owned(),
                seq,
                n: i as u64,
            };
            match buckets.iter_mut().find(|b| b.token == token) {
                Some(b) => b.entries.push(e),
                None => buckets.push(Bucket {
                    token,
                    czxid: token as i64,
                    pzxid: token as i64,
                    entries: vec![e],
                }),
            }
        }
        Ledger {
            name: "lock-0".into(),
            root_data: "1".into(),
            root_version: entries.len() as i32,
            root_mzxid: 7,
            buckets,
            entry_zxids: None,
        }
    }

    fn addr(i: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], 2000 + i))
    }

    #[test]
    fn members_that_agree_give_their_copy_and_no_divergence() {
        let l = ledger(&[(1, "w0s0", 1), (2, "w1s0", 1)]);
        let reads: Vec<_> = (0..3).map(|i| (addr(i), Ok(l.clone()))).collect();
        let a = agree(3, &reads).unwrap();
        assert_eq!(a.quorum, l);
        assert!(a.divergent.is_empty() && a.unread.is_empty(), "{a:?}");
    }

    /// The 8b701cf soak: one member replayed a transaction the quorum had dropped, an entry
    /// in a bucket of its own, while the ledger znode (set later with absolute versions)
    /// came out the same everywhere.
    #[test]
    fn a_member_with_an_extra_entry_is_divergent_and_the_quorum_copy_is_judged() {
        let good = ledger(&[(1, "w0s0", 1), (2, "w1s0", 1)]);
        let mut extra = ledger(&[(1, "w0s0", 1), (2, "w1s0", 1), (3, "w3s1", 96)]);
        extra.root_version = good.root_version;
        let reads = vec![
            (addr(0), Ok(extra)),
            (addr(1), Ok(good.clone())),
            (addr(2), Ok(good.clone())),
        ];
        let a = agree(3, &reads).unwrap();
        assert_eq!(a.quorum, good);
        assert_eq!(a.divergent.len(), 1, "{a:?}");
        let d = &a.divergent[0];
        assert!(d.starts_with("127.0.0.1:2000"), "{d}");
        assert!(
            d.contains("1 only on this member: token 3 entry w3s1_96"),
            "{d}"
        );
        assert!(!d.contains("missing on this member"), "{d}");
        assert!(!d.contains("ledger znode"), "{d}");
    }

    #[test]
    fn a_member_missing_an_entry_and_with_another_version_is_described() {
        let good = ledger(&[(1, "w0s0", 1), (1, "w0s0", 2)]);
        let short = ledger(&[(1, "w0s0", 1)]);
        let reads = vec![
            (addr(0), Ok(good.clone())),
            (addr(1), Ok(short)),
            (addr(2), Ok(good.clone())),
        ];
        let a = agree(3, &reads).unwrap();
        let d = &a.divergent[0];
        assert!(
            d.contains("1 missing on this member: token 1 entry w0s0_2"),
            "{d}"
        );
        assert!(d.contains("ledger znode version 1"), "{d}");
    }

    #[test]
    fn an_unread_member_neither_counts_for_nor_against() {
        let l = ledger(&[(1, "w0s0", 1)]);
        let reads = vec![
            (addr(0), Err("127.0.0.1:2000: cannot connect".to_string())),
            (addr(1), Ok(l.clone())),
            (addr(2), Ok(l.clone())),
        ];
        let a = agree(3, &reads).unwrap();
        assert_eq!(a.quorum, l);
        assert_eq!(a.unread.len(), 1);
        assert!(a.divergent.is_empty());
    }

    #[test]
    fn without_a_majority_copy_nothing_is_judged() {
        let a = ledger(&[(1, "w0s0", 1)]);
        let b = ledger(&[(2, "w1s0", 1)]);
        let reads = vec![
            (addr(0), Ok(a)),
            (addr(1), Ok(b)),
            (addr(2), Err("down".to_string())),
        ];
        let e = agree(3, &reads).unwrap_err();
        assert!(e.contains("no copy held by a majority of 3 members"), "{e}");
        let one = vec![(addr(0), Ok(ledger(&[(1, "w0s0", 1)])))];
        assert!(
            agree(3, &one).is_err(),
            "one member of three is no majority"
        );
    }
}
