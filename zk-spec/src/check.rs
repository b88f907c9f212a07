//! The check model: a [`Check`] tests one rule of the protocol and ends in an [`Outcome`].

use std::fmt;

use crate::ctx::Ctx;

/// The areas checks are grouped by, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Area {
    /// Connect, session timeouts, re-attach, close.
    Handshake,
    /// Every 3.8 opcode's success reply and its error codes.
    Ops,
    /// Replies in request order, zxids, read-your-writes, sync.
    Ordering,
    /// One-shot, persistent and recursive watches, removal, SetWatches.
    Watches,
    /// Ephemeral, sequential, container and TTL znodes, Stat bookkeeping.
    Nodes,
    /// multi and multiRead.
    Multi,
    /// ACLs and authentication.
    Acl,
    /// Path rules and size limits.
    Limits,
    /// Malformed input; a probe session checks the server after each.
    Malformed,
    /// The four-letter words (ruok, srvr, mntr...).
    FourLetter,
    /// Sessions moving between ensemble members.
    Sessions,
    /// A member serving reads without its quorum.
    ReadOnly,
    /// Dynamic reconfiguration: getConfig and reconfig.
    Reconfig,
    /// The x509 scheme over TLS with a client certificate.
    X509,
    /// SASL authentication (DIGEST-MD5) and the sasl scheme.
    Sasl,
}

impl Area {
    /// Every area, in report order.
    pub const ALL: &'static [Area] = &[
        Area::Handshake,
        Area::Ops,
        Area::Ordering,
        Area::Watches,
        Area::Nodes,
        Area::Multi,
        Area::Acl,
        Area::Limits,
        Area::Malformed,
        Area::FourLetter,
        Area::Sessions,
        Area::ReadOnly,
        Area::Reconfig,
        Area::X509,
        Area::Sasl,
    ];

    /// The name used on the command line and in check ids.
    pub fn name(self) -> &'static str {
        match self {
            Area::Handshake => "handshake",
            Area::Ops => "ops",
            Area::Ordering => "ordering",
            Area::Watches => "watches",
            Area::Nodes => "nodes",
            Area::Multi => "multi",
            Area::Acl => "acl",
            Area::Limits => "limits",
            Area::Malformed => "malformed",
            Area::FourLetter => "4lw",
            Area::Sessions => "sessions",
            Area::ReadOnly => "read-only",
            Area::Reconfig => "reconfig",
            Area::X509 => "x509",
            Area::Sasl => "sasl",
        }
    }

    /// A one-line heading for the report.
    pub fn title(self) -> &'static str {
        match self {
            Area::Handshake => "Handshake and sessions",
            Area::Ops => "Operations and their error codes",
            Area::Ordering => "Ordering guarantees",
            Area::Watches => "Watches",
            Area::Nodes => "Node kinds and Stat",
            Area::Multi => "multi and multiRead",
            Area::Acl => "ACLs and authentication",
            Area::Limits => "Limits",
            Area::Malformed => "Malformed input",
            Area::FourLetter => "Four-letter words",
            Area::Sessions => "Sessions across ensemble members",
            Area::ReadOnly => "Read-only mode",
            Area::Reconfig => "Dynamic reconfiguration",
            Area::X509 => "TLS client certificates (x509)",
            Area::Sasl => "SASL authentication",
        }
    }

    /// The area called `name` (see [`Area::name`]).
    pub fn from_name(name: &str) -> Option<Area> {
        Area::ALL.iter().copied().find(|a| a.name() == name)
    }
}

impl fmt::Display for Area {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One rule of the protocol and the code that tests it.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    /// A stable id, `area.name`, for `--check` and CI reports.
    pub id: &'static str,
    /// The area the check belongs to.
    pub area: Area,
    /// What the server must do, in a line.
    pub title: &'static str,
    /// The rule cited: a ZooKeeper Programmer's Guide section or a jute record.
    pub rule: &'static str,
    /// A known server bug this check catches, with how to reproduce it: a failure of
    /// the check is then reported as that bug.
    pub known_bug: Option<&'static str>,
    /// How the check can harm a server with a known bug (corrupt its data, for example):
    /// such checks only run when asked for ([`Runner::dangerous`](crate::Runner::dangerous)).
    pub danger: Option<&'static str>,
    /// Sends malformed input: the runner checks the server with a probe session after it.
    pub malformed: bool,
    /// The test itself.
    pub run: fn(&mut Ctx) -> CheckResult,
}

/// What a check's code returns: `Ok(())` for a pass.
pub type CheckResult = Result<(), Finding>;

/// Why a check did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The server broke the rule.
    Fail {
        /// What the rule asks for.
        expected: String,
        /// What the server did.
        got: String,
    },
    /// The check does not apply to this server (a feature is off).
    Skip(String),
}

/// A failed check's finding: `expected` against `got`.
pub fn fail(expected: impl Into<String>, got: impl Into<String>) -> Finding {
    Finding::Fail {
        expected: expected.into(),
        got: got.into(),
    }
}

/// A skipped check's finding.
pub fn skip(why: impl Into<String>) -> Finding {
    Finding::Skip(why.into())
}

/// Passes when `cond`, else fails with `expected` / `got`.
pub fn ensure(
    cond: bool,
    expected: impl Into<String>,
    got: impl FnOnce() -> String,
) -> CheckResult {
    if cond {
        Ok(())
    } else {
        Err(fail(expected, got()))
    }
}

/// Passes when `got == want`, else fails saying what `what` was.
pub fn ensure_eq<T: PartialEq + fmt::Debug>(what: &str, got: T, want: T) -> CheckResult {
    ensure(got == want, format!("{what} = {want:?}"), || {
        format!("{what} = {got:?}")
    })
}

/// One frame of a check's exchanges, for the report's hex dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Which of the check's connections (numbered from 1).
    pub conn: usize,
    /// True for bytes the checker sent, false for bytes the server sent.
    pub sent: bool,
    /// The bytes, length prefix included.
    pub bytes: Vec<u8>,
}

/// How a check ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The server kept the rule.
    Passed,
    /// The server broke it.
    Failed(Failure),
    /// The check does not apply to this server.
    Skipped(String),
}

impl Outcome {
    /// True for [`Outcome::Failed`].
    pub fn is_failed(&self) -> bool {
        matches!(self, Outcome::Failed(_))
    }
}

/// A failed check: expected against got, the server bug when it is a known one, and the
/// frames exchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What the rule asks for.
    pub expected: String,
    /// What the server did.
    pub got: String,
    /// The known server bug this failure is (from [`Check::known_bug`]).
    pub known_bug: Option<&'static str>,
    /// The frames exchanged, in order.
    pub frames: Vec<Frame>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_round_trip_by_name() {
        for a in Area::ALL {
            assert_eq!(Area::from_name(a.name()), Some(*a));
        }
        assert_eq!(Area::from_name("nope"), None);
    }

    #[test]
    fn ensure_eq_says_what_differs() {
        assert_eq!(ensure_eq("version", 1, 1), Ok(()));
        assert_eq!(
            ensure_eq("version", 2, 1),
            Err(fail("version = 1", "version = 2"))
        );
    }
}
