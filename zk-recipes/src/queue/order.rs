//! The names of queue znodes and the order consumers take them in, as Curator's queues
//! name and sort them: `queue-<seq>` (FIFO), `queue-<P><seq>` (priority),
//! `queue-|<HEX ms>|<seq>` (delay), `queue-|<id>|<seq>` (id); and ZooKeeper's own
//! `qn-<seq>` (SimpleDistributedQueue).

use std::cmp::Ordering;

/// Curator's prefix of every DistributedQueue item.
pub(crate) const QUEUE_PREFIX: &str = "queue-";

/// The digits ZooKeeper appends to a sequential znode's name.
pub(crate) const SEQ_DIGITS: usize = 10;

/// How a queue names its items and orders them (Curator's four queue classes share one
/// layout and differ here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum QueueOrder {
    /// First in, first out (Curator's `DistributedQueue`).
    #[default]
    Fifo,
    /// The lowest priority value first, then FIFO (Curator's `DistributedPriorityQueue`).
    Priority,
    /// No item before its time, then the earliest due first (Curator's
    /// `DistributedDelayQueue`).
    Delay,
    /// First in, first out, each item tagged with an id that
    /// [`remove`](crate::DistributedQueue::remove) deletes by (Curator's
    /// `DistributedIdQueue`).
    Id,
}

/// The name prefix of an item of priority `p`: `queue-` + `1` or `0` (sign) + `%08X`.
pub(crate) fn priority_prefix(p: i32) -> String {
    let sign = if p >= 0 { '1' } else { '0' };
    format!("{QUEUE_PREFIX}{sign}{:08X}", p as u32)
}

/// The name prefix of an item due at `due_ms` (milliseconds since the epoch).
pub(crate) fn delay_prefix(due_ms: u64) -> String {
    format!("{QUEUE_PREFIX}|{due_ms:08X}|")
}

/// The name prefix of an item of id `id`: `queue-|<id>|`, with `/` and `|` in the id made `_`
/// as Curator makes them.
pub(crate) fn id_prefix(id: &str) -> String {
    format!("{QUEUE_PREFIX}|{}|", fix_id(id))
}

/// An id as it appears in a name (`/` would make a path, `|` ends the id).
pub(crate) fn fix_id(id: &str) -> String {
    id.replace(['/', '|'], "_")
}

/// An item's id and its name without `|id|` (Curator's `parseId`); `None` when the name has
/// no two `|`.
pub(crate) fn split_id(name: &str) -> Option<(&str, String)> {
    let first = name.find('|')?;
    let second = first + 1 + name[first + 1..].find('|')?;
    let cleaned = format!("{}{}", &name[..first], &name[second + 1..]);
    Some((&name[first + 1..second], cleaned))
}

/// The name an id queue sorts an item by: without its `|id|` (so by sequence across ids).
fn id_sort_key(name: &str) -> String {
    split_id(name).map_or_else(|| name.to_owned(), |(_, cleaned)| cleaned)
}

/// When an item of a delay queue is due: the hex between the last two `|` (Curator reads an
/// unparsable one as 0, due at once).
pub(crate) fn due_ms(name: &str) -> u64 {
    let mut parts = name.rsplitn(3, '|');
    let (_seq, hex) = (parts.next(), parts.next());
    match (hex, parts.next()) {
        (Some(hex), Some(_)) => u64::from_str_radix(hex, 16).unwrap_or(0),
        _ => 0,
    }
}

/// The queue's items among `children` (other names are skipped, as Curator skips them),
/// in the order they are taken.
pub(crate) fn sorted_items(order: QueueOrder, children: Vec<String>, prefix: &str) -> Vec<String> {
    let mut items: Vec<String> = children
        .into_iter()
        .filter(|c| c.starts_with(prefix))
        .collect();
    match order {
        QueueOrder::Fifo | QueueOrder::Priority => items.sort_unstable(),
        QueueOrder::Delay => items.sort_unstable_by(|a, b| by_due(a, b)),
        QueueOrder::Id => items.sort_by_cached_key(|n| (id_sort_key(n), n.clone())),
    }
    items
}

fn by_due(a: &str, b: &str) -> Ordering {
    due_ms(a).cmp(&due_ms(b)).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_names_as_curator_writes_them() {
        // catalogue.md, checked against Curator 5.4.0's jar.
        assert_eq!(priority_prefix(0), "queue-100000000");
        assert_eq!(priority_prefix(10), "queue-10000000A");
        assert_eq!(priority_prefix(-1), "queue-0FFFFFFFF");
        assert_eq!(priority_prefix(i32::MIN), "queue-080000000");
        assert_eq!(priority_prefix(i32::MAX), "queue-17FFFFFFF");
    }

    #[test]
    fn delay_names_and_their_time() {
        let name = format!("{}0000000007", delay_prefix(0x18B_CFE5_6800));
        assert_eq!(name, "queue-|18BCFE56800|0000000007");
        assert_eq!(due_ms(&name), 0x18B_CFE5_6800);
        assert_eq!(due_ms("queue-|zz|0000000001"), 0);
        assert_eq!(due_ms("queue-0000000001"), 0);
        assert_eq!(delay_prefix(5), "queue-|00000005|");
    }

    #[test]
    fn id_names_as_curator_writes_and_sorts_them() {
        assert_eq!(id_prefix("job-7"), "queue-|job-7|");
        assert_eq!(id_prefix("a/b|c"), "queue-|a_b_c|");
        let (id, cleaned) = split_id("queue-|a_b|0000000003").unwrap();
        assert_eq!((id, cleaned.as_str()), ("a_b", "queue-0000000003"));
        assert_eq!(split_id("queue-|x|"), Some(("x", "queue-".to_owned())));
        assert_eq!(split_id("queue-0000000003"), None);
        assert_eq!(split_id("queue-|open0000000003"), None);
        let ids = sorted_items(
            QueueOrder::Id,
            [
                "queue-|zz|0000000002",
                "queue-|aa|0000000003",
                "queue-0000000001",
                "queue-|m|0000000000",
            ]
            .map(String::from)
            .to_vec(),
            QUEUE_PREFIX,
        );
        assert_eq!(
            ids,
            [
                "queue-|m|0000000000",
                "queue-0000000001",
                "queue-|zz|0000000002",
                "queue-|aa|0000000003"
            ],
            "by sequence, whatever the id"
        );
    }

    #[test]
    fn orders_and_skips_foreign_names() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let fifo = sorted_items(
            QueueOrder::Fifo,
            names(&[
                "queue-0000000002",
                "lock",
                "queue-0000000001",
                "qn-0000000000",
            ]),
            QUEUE_PREFIX,
        );
        assert_eq!(fifo, ["queue-0000000001", "queue-0000000002"]);
        let prio = sorted_items(
            QueueOrder::Priority,
            vec![
                format!("{}0000000000", priority_prefix(5)),
                format!("{}0000000001", priority_prefix(-3)),
                format!("{}0000000002", priority_prefix(0)),
            ],
            QUEUE_PREFIX,
        );
        let values: Vec<&str> = prio.iter().map(|n| &n[6..15]).collect();
        assert_eq!(values, ["0FFFFFFFD", "100000000", "100000005"]);
        let delay = sorted_items(
            QueueOrder::Delay,
            vec![
                format!("{}0000000000", delay_prefix(0x1_0000_0000)),
                format!("{}0000000001", delay_prefix(0xFFFF)),
            ],
            QUEUE_PREFIX,
        );
        assert_eq!(due_ms(&delay[0]), 0xFFFF, "numeric, not lexical: {delay:?}");
    }
}
