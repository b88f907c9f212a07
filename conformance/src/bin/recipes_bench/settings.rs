//! The command line and the peers (ours, Curator, kazoo) a run measures.

use std::env;

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
    /// Measured seconds per lock workload.
    pub(crate) secs: f64,
    /// Unmeasured seconds before each lock workload.
    pub(crate) warmup: f64,
    /// Extra unmeasured seconds for the JVM's JIT, in each JVM's first workload.
    pub(crate) jit_warmup: f64,
    pub(crate) contenders: Vec<usize>,
    pub(crate) participants: usize,
    /// Measured failovers.
    pub(crate) terms: usize,
    /// Failovers left out before them.
    pub(crate) skip_terms: usize,
    pub(crate) hold_ms: u64,
    /// Rounds of every workload; the table shows each client's best.
    pub(crate) rounds: usize,
    pub(crate) peers: Vec<Peer>,
    /// Print every election term to stderr.
    pub(crate) verbose: bool,
}

impl Settings {
    pub(crate) fn from_args() -> Result<Settings, String> {
        let mut s = Settings {
            secs: 4.0,
            warmup: 1.5,
            jit_warmup: 2.5,
            contenders: vec![1, 4, 16],
            participants: 3,
            terms: 20,
            skip_terms: 2,
            hold_ms: 100,
            rounds: 2,
            peers: Peer::ALL.to_vec(),
            verbose: false,
        };
        let mut args = env::args().skip(1);
        while let Some(a) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
            let float = |v: String| v.parse::<f64>().map_err(|e| format!("{v}: {e}"));
            let int = |v: &str| v.parse::<usize>().map_err(|e| format!("{v}: {e}"));
            match a.as_str() {
                "--secs" => s.secs = float(value()?)?,
                "--warmup" => s.warmup = float(value()?)?,
                "--jit-warmup" => s.jit_warmup = float(value()?)?,
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
                "--rounds" => s.rounds = int(&value()?)?.max(1),
                "--only" => {
                    s.peers = value()?
                        .split(',')
                        .map(|p| {
                            Peer::ALL
                                .into_iter()
                                .find(|x| x.name() == p)
                                .ok_or_else(|| format!("unknown client {p}"))
                        })
                        .collect::<Result<_, _>>()?
                }
                "--verbose" => s.verbose = true,
                "-h" | "--help" => {
                    return Err(
                        "usage: recipes_bench [--secs S] [--warmup S] [--jit-warmup S] \
                         [--contenders 1,4,16] [--participants N] [--terms N] \
                         [--skip-terms N] [--hold-ms MS] [--rounds N] [--only ours,curator,kazoo] [--verbose]"
                            .to_owned(),
                    )
                }
                other => return Err(format!("unknown argument {other}")),
            }
        }
        Ok(s)
    }

    /// Terms each election must start: the skipped and measured failovers need one more.
    pub(crate) fn election_terms(&self) -> usize {
        self.skip_terms + self.terms + 1
    }
}
