//! The command line and the peers (ours, Curator, kazoo) a run measures.

use conformance::bench::{self, Timing};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Peer {
    Ours,
    Curator,
    Kazoo,
}

impl Peer {
    pub(crate) const ALL: [Peer; 3] = [Peer::Ours, Peer::Curator, Peer::Kazoo];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Peer::Ours => "ours",
            Peer::Curator => "curator",
            Peer::Kazoo => "kazoo",
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Peer::Ours => "ours",
            Peer::Curator => "Curator",
            Peer::Kazoo => "kazoo",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Per lock workload: measured and unmeasured seconds; the JIT's extra warm-up in each
    /// JVM's first workload; rounds of every workload (the table shows each client's best).
    pub(crate) timing: Timing,
    pub(crate) contenders: Vec<usize>,
    pub(crate) participants: usize,
    /// Measured failovers.
    pub(crate) terms: usize,
    /// Failovers left out before them.
    pub(crate) skip_terms: usize,
    pub(crate) hold_ms: u64,
    pub(crate) peers: Vec<Peer>,
    /// Print every election term to stderr.
    pub(crate) verbose: bool,
}

const USAGE: &str = "usage: recipes_bench [--secs S] [--warmup S] [--jit-warmup S] \
                     [--contenders 1,4,16] [--participants N] [--terms N] \
                     [--skip-terms N] [--hold-ms MS] [--rounds N] [--only ours,curator,kazoo] [--verbose]";

impl Settings {
    pub(crate) fn from_args() -> Result<Settings, String> {
        let mut s = Settings {
            timing: Timing {
                secs: 4.0,
                warmup: 1.5,
                jit_warmup: 2.5,
                rounds: 2,
            },
            contenders: vec![1, 4, 16],
            participants: 3,
            terms: 20,
            skip_terms: 2,
            hold_ms: 100,
            peers: Peer::ALL.to_vec(),
            verbose: false,
        };
        let int = |v: &str| v.parse::<usize>().map_err(|e| format!("{v}: {e}"));
        bench::parse_flags(USAGE, |flag, value| {
            if s.timing.flag(flag, value)? {
                return Ok(true);
            }
            match flag {
                "--contenders" => {
                    s.contenders = value()?
                        .split(',')
                        .map(|v| int(v).map(|n| n.max(1)))
                        .collect::<Result<_, _>>()?
                }
                "--participants" => s.participants = int(&value()?)?.max(2),
                "--terms" => s.terms = int(&value()?)?.max(1),
                "--skip-terms" => s.skip_terms = int(&value()?)?,
                "--hold-ms" => s.hold_ms = int(&value()?)? as u64,
                "--only" => s.peers = bench::pick(&value()?, &Peer::ALL, Peer::name, "client")?,
                "--verbose" => s.verbose = true,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(s)
    }

    /// Terms each election must start: the skipped and measured failovers need one more.
    pub(crate) fn election_terms(&self) -> usize {
        self.skip_terms + self.terms + 1
    }
}
