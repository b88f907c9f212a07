//! [`LineRule`]: the walker's rule for each side a mutex can be: exclusive (a mutex, the
//! write side of a read/write lock) or shared (the read side, Curator's reader rule).

use crate::{
    contender::{Contender, ContenderKind},
    plumbing::line::{Exclusive, Place, Rule},
};

/// Who a waiter waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum LineRule {
    /// Everyone ahead; watch the one just ahead, so a release wakes one waiter.
    #[default]
    Exclusive,
    /// Everyone ahead, as [`Exclusive`](Self::Exclusive), for the write side of a
    /// read/write lock: there a downgrade's read node is created after a waiter's listing
    /// yet sorts ahead of it (it takes the write node's sequence), so a waiter lists again
    /// before taking the lock, never trusting an old listing.
    Write,
    /// Only the non-readers ahead (readers share); watch the first of them, as Curator's
    /// reader does.
    Shared,
}

impl Rule for LineRule {
    /// Only where no node can join the line ahead of a waiter later: not on the write side.
    fn trusts_listing(&self) -> bool {
        *self != LineRule::Write
    }

    fn place(&self, line: &[Contender], ours: usize) -> Place {
        match self {
            LineRule::Exclusive | LineRule::Write => Exclusive.place(line, ours),
            LineRule::Shared => match line[..ours].iter().position(|c| !is_reader(c.kind())) {
                Some(w) => Place::Behind(w),
                None => Place::Holds,
            },
        }
    }
}

/// Curator's and kazoo's read-lock nodes; anything else (a writer, a plain lock node)
/// excludes readers.
fn is_reader(kind: ContenderKind) -> bool {
    matches!(
        kind,
        ContenderKind::CuratorRead | ContenderKind::KazooReadLock
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        plumbing::line::{look, Turn},
        ContenderNames,
    };

    const UUID: &str = "0f8e6a3c-1d2b-4c5d-8e9f-a0b1c2d3e4f5";

    fn n(kind: &str, seq: u32) -> String {
        format!("_c_{UUID}-{kind}{seq:010}")
    }

    fn wait_for(name: String, holds_when_gone: bool) -> Turn {
        Turn::WaitFor {
            name,
            holds_when_gone,
        }
    }

    #[test]
    fn readers_share_and_wait_for_the_first_writer_ahead() {
        let names = ContenderNames::new();
        let children = [
            n("__READ__", 1),
            n("__WRIT__", 2),
            n("__READ__", 3),
            n("__WRIT__", 4),
            n("__READ__", 5),
        ];
        let read = LineRule::Shared;
        assert_eq!(look(&names, &children, &children[0], &read), Turn::Holds);
        assert_eq!(
            look(&names, &children, &children[2], &read),
            wait_for(children[1].clone(), true)
        );
        // Two writers ahead: the first is watched, and its going is not enough.
        assert_eq!(
            look(&names, &children, &children[4], &read),
            wait_for(children[1].clone(), false)
        );
        // A plain lock node is not a reader: it excludes readers too.
        let mixed = [format!("_c_{UUID}-lock-0000000001"), n("__READ__", 2)];
        assert_eq!(
            look(&names, &mixed, &mixed[1], &read),
            wait_for(mixed[0].clone(), true)
        );
    }

    #[test]
    fn writers_wait_for_everyone_ahead() {
        let names = ContenderNames::new();
        let children = [n("__READ__", 1), n("__READ__", 2), n("__WRIT__", 3)];
        let write = LineRule::Exclusive;
        assert_eq!(look(&names, &children, &children[0], &write), Turn::Holds);
        assert_eq!(
            look(&names, &children, &children[2], &write),
            wait_for(children[1].clone(), false)
        );
    }

    #[test]
    fn only_the_write_side_lists_again_before_holding() {
        assert!(LineRule::Exclusive.trusts_listing());
        assert!(LineRule::Shared.trusts_listing());
        assert!(!LineRule::Write.trusts_listing());
        // The walker's default, for the mutex and the elections.
        assert!(crate::plumbing::line::Exclusive.trusts_listing());
    }
}
