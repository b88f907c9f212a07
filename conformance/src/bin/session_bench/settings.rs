//! The command line (`--secs`, `--reps`, `--only`, `--workloads`, `--tls`...) and the znode
//! paths a run uses.

use std::{env, time::Duration};

use crate::workloads::{Peer, Workload, WORKLOADS};

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Seconds per timed repetition.
    pub(crate) secs: f64,
    /// Unmeasured seconds before the repetitions of each workload.
    pub(crate) warmup: f64,
    /// Extra unmeasured seconds for the JVM's JIT before its first workload.
    pub(crate) jit_warmup: f64,
    pub(crate) reps: usize,
    /// Rounds of raw and ours, one after the other (the peers run `rounds * reps` repetitions).
    pub(crate) rounds: usize,
    pub(crate) peers: Vec<Peer>,
    pub(crate) workloads: Vec<Workload>,
    /// Run zk-session on a current-thread runtime instead of the multi-threaded one.
    pub(crate) current_thread: bool,
    /// Also run zk-session over TLS (see the module docs).
    pub(crate) tls: bool,
}

impl Settings {
    pub(crate) fn from_args() -> Result<Settings, String> {
        let mut s = Settings {
            secs: 2.5,
            warmup: 1.0,
            jit_warmup: 4.0,
            reps: 1,
            rounds: 2,
            peers: Peer::ALL.to_vec(),
            workloads: WORKLOADS.to_vec(),
            current_thread: false,
            tls: false,
        };
        let mut args = env::args().skip(1);
        while let Some(a) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
            let num = |v: String| v.parse::<f64>().map_err(|e| format!("{v}: {e}"));
            match a.as_str() {
                "--secs" => s.secs = num(value()?)?,
                "--warmup" => s.warmup = num(value()?)?,
                "--jit-warmup" => s.jit_warmup = num(value()?)?,
                "--reps" => s.reps = num(value()?)?.max(1.0) as usize,
                "--rounds" => s.rounds = num(value()?)?.max(1.0) as usize,
                "--only" => {
                    let v = value()?;
                    s.peers = v
                        .split(',')
                        .map(|p| {
                            Peer::ALL
                                .into_iter()
                                .find(|x| x.name() == p)
                                .ok_or_else(|| format!("unknown client {p}"))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--workloads" => {
                    let v = value()?;
                    s.workloads = v
                        .split(',')
                        .map(|p| {
                            WORKLOADS
                                .into_iter()
                                .find(|w| w.spec() == p)
                                .ok_or_else(|| format!("unknown workload {p}"))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--current-thread" => s.current_thread = true,
                "--tls" => s.tls = true,
                "-h" | "--help" => {
                    return Err(
                        "usage: session_bench [--secs S] [--warmup S] [--jit-warmup S] \
                         [--reps N] [--rounds N] [--only raw,ours,java,kazoo] \
                         [--workloads get:1,get:64,get:512,cd:64] [--current-thread] [--tls]"
                            .to_owned(),
                    )
                }
                other => return Err(format!("unknown argument {other}")),
            }
        }
        Ok(s)
    }

    /// Wall-clock time one workload takes in a peer (all its repetitions).
    pub(crate) fn per_workload(&self) -> Duration {
        Duration::from_secs_f64(self.warmup + self.secs * (self.reps * self.rounds) as f64)
    }
}

/// Paths on the server, under a base of this run's own.
#[derive(Debug, Clone)]
pub(crate) struct Paths {
    pub(crate) base: String,
    pub(crate) data: String,
    pub(crate) cd_base: String,
}
