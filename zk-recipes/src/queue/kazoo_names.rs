//! kazoo's queue names: `entry-<PPP>-<seq>`, PPP the priority as three digits (0 to 999,
//! 100 unless given), taken in plain string order, so the lowest priority first and, within
//! one priority, the oldest first; and the consumer id a LockingQueue writes into its
//! `taken` znodes (a uuid4 as 32 hex digits).

use bytes::Bytes;

use super::order::SEQ_DIGITS;
use crate::{plumbing::protected::new_protected_id, RecipeError, Result};

/// The prefix of every kazoo queue entry.
pub(crate) const ENTRY_PREFIX: &str = "entry-";

/// kazoo's priority when none is given.
pub(crate) const DEFAULT_PRIORITY: u16 = 100;

/// The largest priority kazoo accepts (three digits).
const MAX_PRIORITY: u16 = 999;

/// The name prefix of an entry of `priority` (`entry-100-`); a priority over 999 is
/// refused, as kazoo refuses it, since it would sort after every other.
pub(crate) fn entry_prefix(priority: u16) -> Result<String> {
    if priority > MAX_PRIORITY {
        return Err(RecipeError::InvalidArgument(
            "a kazoo queue priority is between 0 and 999",
        ));
    }
    Ok(format!("{ENTRY_PREFIX}{priority:03}-"))
}

/// The priority of an entry named `entry-PPP-<seq>`; `None` for any other name.
pub(crate) fn priority_of(name: &str) -> Option<u16> {
    let rest = name.strip_prefix(ENTRY_PREFIX)?;
    let (digits, seq) = rest.split_at_checked(3)?;
    let seq = seq.strip_prefix('-')?;
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    (all_digits(digits) && seq.len() == SEQ_DIGITS && all_digits(seq))
        .then(|| digits.parse().ok())
        .flatten()
}

/// A new consumer id, as kazoo's `uuid.uuid4().hex`: 32 lowercase hex digits.
pub(crate) fn consumer_id() -> Bytes {
    Bytes::from(new_protected_id().replace('-', ""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{
        batch::{Batch, Next},
        order::{sorted_items, QueueOrder},
    };

    /// The entries among `children` in the order our kazoo queues take them: as the
    /// consumer lists them (a priority order over `entry-` names).
    fn entries_in_order(children: Vec<String>) -> Vec<String> {
        sorted_items(QueueOrder::Priority, children, ENTRY_PREFIX)
    }

    #[test]
    fn names_as_kazoo_writes_them() {
        assert_eq!(entry_prefix(100).unwrap(), "entry-100-");
        assert_eq!(entry_prefix(0).unwrap(), "entry-000-");
        assert_eq!(entry_prefix(7).unwrap(), "entry-007-");
        assert_eq!(entry_prefix(999).unwrap(), "entry-999-");
        assert!(matches!(
            entry_prefix(1000),
            Err(RecipeError::InvalidArgument(_))
        ));
        assert_eq!(entry_prefix(DEFAULT_PRIORITY).unwrap(), "entry-100-");
    }

    #[test]
    fn priorities_are_read_back_and_foreign_names_refused() {
        assert_eq!(priority_of("entry-042-0000000017"), Some(42));
        assert_eq!(priority_of("entry-999-0000000000"), Some(999));
        assert_eq!(priority_of("entry-42-0000000017"), None);
        assert_eq!(priority_of("entry-042-17"), None);
        assert_eq!(priority_of("entry-x42-0000000017"), None);
        assert_eq!(priority_of("queue-0000000017"), None);
        assert_eq!(priority_of("entry-"), None);
    }

    #[test]
    fn the_lowest_priority_first_then_the_oldest() {
        let names = [
            "entry-100-0000000003",
            "entry-005-0000000009",
            "_m_0c6f",
            "entry-100-0000000001",
            "queue-0000000000",
            "entry-999-0000000000",
            "entry-005-0000000002",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            entries_in_order(names),
            [
                "entry-005-0000000002",
                "entry-005-0000000009",
                "entry-100-0000000001",
                "entry-100-0000000003",
                "entry-999-0000000000",
            ]
        );
    }

    #[test]
    fn the_next_entry_is_the_first_of_the_listing_and_a_change_lists_again() {
        let mut batch = Batch::new(QueueOrder::Priority, 1);
        assert_eq!(batch.next(0), Next::List);
        batch.listed(entries_in_order(
            ["entry-100-0000000000", "entry-001-0000000001"]
                .map(String::from)
                .to_vec(),
        ));
        assert_eq!(batch.next(0), Next::Take("entry-001-0000000001".into()));
        // An urgent entry came meanwhile: it may sort first, so the queue is listed again.
        batch.changed();
        assert_eq!(batch.next(0), Next::List);
    }

    #[test]
    fn consumer_ids_are_32_hex_digits_and_differ() {
        let (a, b) = (consumer_id(), consumer_id());
        assert_eq!(a.len(), 32);
        assert!(a
            .iter()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }
}
