//! [`LineRule`]: which contenders ahead keep a waiter waiting, and which one it watches.
//! Plain logic, so the exclusive (mutex, write lock) and shared (read lock) rules are tested
//! without a server.

use crate::contender::{Contender, ContenderKind};

/// Who a waiter waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum LineRule {
    /// Everyone ahead (a mutex, the write side of a read/write lock); watch the one just
    /// ahead, so a release wakes one waiter.
    #[default]
    Exclusive,
    /// Only the non-readers ahead (the read side of a read/write lock, Curator's rule:
    /// readers share); watch the first of them, as Curator's reader does.
    Shared,
}

/// What a waiter at a place in line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Blocked {
    /// The index (among the contenders ahead) of the one to watch.
    pub(crate) watch: usize,
    /// True when it is the only one in the way: its going means the lock is ours, since
    /// everyone who comes later queues behind us.
    pub(crate) only: bool,
}

impl LineRule {
    /// `None` when nobody `ahead` (in lock order) keeps us waiting.
    pub(crate) fn blocked_by(self, ahead: &[Contender]) -> Option<Blocked> {
        match self {
            LineRule::Exclusive => ahead.len().checked_sub(1).map(|last| Blocked {
                watch: last,
                only: last == 0,
            }),
            LineRule::Shared => {
                let mut writers = ahead
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !is_reader(c.kind()));
                let (first, _) = writers.next()?;
                Some(Blocked {
                    watch: first,
                    only: writers.next().is_none(),
                })
            }
        }
    }
}

fn is_reader(kind: ContenderKind) -> bool {
    matches!(
        kind,
        ContenderKind::CuratorRead | ContenderKind::KazooReadLock
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ContenderNames;

    fn line(names: &[&str]) -> Vec<Contender> {
        ContenderNames::new().sorted(names.iter().copied())
    }

    #[test]
    fn exclusive_waits_for_everyone_and_watches_the_one_just_ahead() {
        let r = LineRule::Exclusive;
        assert_eq!(r.blocked_by(&[]), None);
        let ahead = line(&["a-__READ__0000000001", "a-__READ__0000000002"]);
        assert_eq!(
            r.blocked_by(&ahead),
            Some(Blocked {
                watch: 1,
                only: false
            })
        );
        assert_eq!(
            r.blocked_by(&ahead[..1]),
            Some(Blocked {
                watch: 0,
                only: true
            })
        );
    }

    #[test]
    fn shared_waits_only_for_writers_and_watches_the_first() {
        let r = LineRule::Shared;
        assert_eq!(r.blocked_by(&line(&["a-__READ__0000000001"])), None);
        let ahead = line(&[
            "a-__READ__0000000001",
            "b-__WRIT__0000000002",
            "c-__READ__0000000003",
            "d-__WRIT__0000000004",
        ]);
        assert_eq!(
            r.blocked_by(&ahead),
            Some(Blocked {
                watch: 1,
                only: false
            })
        );
        assert_eq!(
            r.blocked_by(&ahead[..3]),
            Some(Blocked {
                watch: 1,
                only: true
            })
        );
        // A plain mutex node is not a reader: it excludes readers too.
        let mixed = line(&["_c_x-lock-0000000001"]);
        assert_eq!(
            r.blocked_by(&mixed),
            Some(Blocked {
                watch: 0,
                only: true
            })
        );
    }
}
