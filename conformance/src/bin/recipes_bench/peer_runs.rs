//! Curator and kazoo, run as child processes; their results read back from stdout.

use std::{path::Path, process::Command, time::Duration};

use conformance::peers::{self, run_child, JavaProgram, KazooProgram};

use crate::{
    results::{failovers, ElectOutcome, LockOutcome, LockRun},
    settings::Settings,
    CURATOR_SOURCE, KAZOO_SOURCE,
};

/// What a peer printed: lock runs by contender count, the election, and error lines.
#[derive(Debug, Default)]
pub(crate) struct PeerOutput {
    pub(crate) locks: Vec<(usize, LockRun)>,
    pub(crate) starts: Option<Vec<u64>>,
    pub(crate) exits: Option<Vec<u64>>,
    pub(crate) errors: Vec<String>,
}

impl PeerOutput {
    pub(crate) fn parse(stdout: &str) -> PeerOutput {
        let mut out = PeerOutput::default();
        let mut handoffs: Vec<(usize, Vec<u64>)> = Vec::new();
        for line in stdout.lines() {
            let mut f = line.split_whitespace();
            let tag = f.next().unwrap_or_default();
            let nums = |f: std::str::SplitWhitespace<'_>| -> Vec<u64> {
                f.filter_map(|v| v.parse::<i64>().ok())
                    .map(|v| v.max(0) as u64)
                    .collect()
            };
            match tag {
                "LOCK" => {
                    let v: Vec<i64> = f.filter_map(|v| v.parse().ok()).collect();
                    let u = |x: i64| x.max(0) as u64;
                    if let [n, acq, ns, violations, errors, total, requests] = v[..] {
                        out.locks.push((
                            n as usize,
                            LockRun {
                                acquisitions: u(acq),
                                elapsed: Duration::from_nanos(u(ns)),
                                total: u(total),
                                requests: (requests >= 0).then_some(requests as u64),
                                handoffs: Vec::new(),
                                violations: u(violations),
                                errors: u(errors),
                            },
                        ));
                    }
                }
                "HANDOFF" => {
                    let v = nums(f);
                    if let Some((&n, rest)) = v.split_first() {
                        handoffs.push((n as usize, rest.to_vec()));
                    }
                }
                "STARTS" => out.starts = Some(nums(f).into_iter().skip(1).collect()),
                "EXITS" => out.exits = Some(nums(f).into_iter().skip(1).collect()),
                "ERROR" => out.errors.push(line["ERROR".len()..].trim().to_owned()),
                _ => {}
            }
        }
        for (n, mut h) in handoffs {
            h.sort_unstable();
            if let Some((_, run)) = out.locks.iter_mut().find(|(m, _)| *m == n) {
                run.handoffs = h;
            }
        }
        out
    }

    /// The failovers of the election workload, or why there are none.
    pub(crate) fn election(&self, set: &Settings) -> ElectOutcome {
        if let Some(e) = self.errors.iter().find(|e| e.starts_with("elect")) {
            return Err(e.clone());
        }
        match (&self.starts, &self.exits) {
            (Some(s), Some(e)) => Ok(failovers("curator", s.clone(), e.clone(), set)),
            _ => Err(self
                .errors
                .last()
                .cloned()
                .unwrap_or_else(|| "no result line".to_owned())),
        }
    }

    pub(crate) fn lock(&self, n: usize) -> LockOutcome {
        match self.locks.iter().find(|(m, _)| *m == n) {
            Some((_, run)) => Ok(run.clone()),
            None => Err(self
                .errors
                .first()
                .cloned()
                .unwrap_or_else(|| "no result line".to_owned())),
        }
    }
}

/// The Curator program, compiled once.
pub(crate) struct Curator(JavaProgram);

impl Curator {
    pub(crate) fn compile(tmp: &Path) -> Result<Curator, String> {
        // CuratorPeers: the connect and say the bench shares with the interop peers;
        // BenchArgs: the command line it shares with the session benchmark's Java program.
        JavaProgram::compile_embedded(
            &[
                ("CuratorLockBench.java", CURATOR_SOURCE),
                peers::CURATOR_PEERS,
                peers::BENCH_ARGS,
            ],
            tmp,
            peers::CURATOR_JARS,
            "libcurator-recipes-java",
        )
        .map(Curator)
    }

    /// One JVM for `workloads`; the first lock workload gets the JIT warm-up.
    pub(crate) fn run(
        &self,
        connect: &str,
        base: &str,
        set: &Settings,
        workloads: &[String],
    ) -> PeerOutput {
        let mut cmd = self.0.command();
        leading_args(&mut cmd, connect, base, set)
            .arg(set.timing.jit_warmup.to_string())
            .args(workloads);
        let limit = Duration::from_secs_f64(
            90.0 + set.timing.jit_warmup
                + (set.timing.warmup + set.timing.secs) * workloads.len() as f64
                + (set.hold_ms as f64 / 1000.0 + 1.0) * set.election_terms() as f64,
        );
        match run_child(&mut cmd, limit) {
            Ok(out) => PeerOutput::parse(&out),
            Err(e) => PeerOutput {
                errors: vec![format!("Curator program: {e}")],
                ..PeerOutput::default()
            },
        }
    }
}

/// The kazoo program, once kazoo imports.
pub(crate) struct Kazoo(KazooProgram);

impl Kazoo {
    pub(crate) fn prepare(tmp: &Path) -> Result<Kazoo, String> {
        KazooProgram::prepare_embedded(
            &[("kazoo_lock_bench.py", KAZOO_SOURCE), peers::KAZOO_PEERS],
            tmp,
        )
        .map(Kazoo)
    }

    pub(crate) fn run(&self, connect: &str, base: &str, set: &Settings, n: usize) -> LockOutcome {
        let mut cmd = self.0.command();
        leading_args(&mut cmd, connect, base, set).arg(format!("lock:{n}"));
        let limit = Duration::from_secs_f64(90.0 + set.timing.warmup + set.timing.secs);
        let out = run_child(&mut cmd, limit).map_err(|e| format!("kazoo program: {e}"))?;
        PeerOutput::parse(&out).lock(n)
    }
}

/// `CONNECT BASE WARMUP_S SECS`, the arguments both peer programs take first.
fn leading_args<'c>(
    cmd: &'c mut Command,
    connect: &str,
    base: &str,
    set: &Settings,
) -> &'c mut Command {
    cmd.arg(connect)
        .arg(base)
        .arg(set.timing.warmup.to_string())
        .arg(set.timing.secs.to_string())
}
