//! The command line (`--secs`, `--reps`, `--only`, `--workloads`, `--tls`...) and the znode
//! paths a run uses.

use std::time::Duration;

pub(crate) use conformance::workload::Paths;

use conformance::{
    bench::{self, Timing},
    workload::Schedule,
};

use crate::workloads::{Peer, Workload, WORKLOADS};

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Seconds per timed repetition, unmeasured seconds before the repetitions of each
    /// workload, the JIT's extra warm-up before the JVM's first workload, and rounds of raw
    /// and ours one after the other (the peers run `rounds * reps` repetitions).
    pub(crate) timing: Timing,
    pub(crate) reps: usize,
    pub(crate) peers: Vec<Peer>,
    pub(crate) workloads: Vec<Workload>,
    /// Run zk-session on a current-thread runtime instead of the multi-threaded one.
    pub(crate) current_thread: bool,
    /// Also run zk-session over TLS (see the module docs).
    pub(crate) tls: bool,
}

const USAGE: &str = "usage: session_bench [--secs S] [--warmup S] [--jit-warmup S] \
                     [--reps N] [--rounds N] [--only raw,tokio,mux,direct,ours,ours1,java,kazoo] \
                     [--workloads get:1,get:64,get:512,cd:64] [--current-thread] [--tls]";

impl Settings {
    pub(crate) fn from_args() -> Result<Settings, String> {
        let mut s = Settings {
            timing: Timing {
                secs: 2.5,
                warmup: 1.0,
                jit_warmup: 4.0,
                rounds: 2,
            },
            reps: 1,
            peers: Peer::ALL.to_vec(),
            workloads: WORKLOADS.to_vec(),
            current_thread: false,
            tls: false,
        };
        bench::parse_flags(USAGE, |flag, value| {
            if s.timing.flag(flag, value)? {
                return Ok(true);
            }
            match flag {
                "--reps" => s.reps = bench::count(&value()?)?,
                "--only" => s.peers = bench::pick(&value()?, &Peer::ALL, Peer::name, "client")?,
                "--workloads" => {
                    s.workloads = bench::pick(&value()?, &WORKLOADS, Workload::spec, "workload")?
                }
                "--current-thread" => s.current_thread = true,
                "--tls" => s.tls = true,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(s)
    }

    /// How each in-process client measures a workload in a round.
    pub(crate) fn schedule(&self) -> Schedule {
        Schedule::new(&self.timing, self.reps)
    }

    /// Wall-clock time one workload takes in a peer (all its repetitions).
    pub(crate) fn per_workload(&self) -> Duration {
        Duration::from_secs_f64(
            self.timing.warmup + self.timing.secs * (self.reps * self.timing.rounds) as f64,
        )
    }
}
