//! The request-path workloads the session benchmarks share (`session_bench`,
//! `blocking_bench`): getData of a 100-byte znode or create + delete pairs, at a window of
//! requests in flight; the znodes they use; how long each is measured; and the `RESULT` lines
//! in which the benchmarks' child processes report.
//!
//! ```
//! use conformance::workload::{Kind, Workload};
//!
//! let w = Workload::from_spec("get:64").unwrap();
//! assert_eq!((w.kind, w.window), (Kind::Get, 64));
//! assert_eq!(w.spec(), "get:64");
//! assert!(Workload::from_spec("get:0").is_err());
//! ```

use std::{collections::HashMap, time::Duration};

use crate::bench::{Throughput, Timing};

/// Size of the znode read by getData, and of the data of each create.
pub const DATA_LEN: usize = 100;

/// What one op of a workload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// getData of the 100-byte znode.
    Get,
    /// create + delete of a node; one op is the pair.
    CreateDelete,
}

/// A kind of op, kept `window` requests in flight on one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Workload {
    pub kind: Kind,
    pub window: usize,
}

impl Workload {
    /// `get:WINDOW` or `cd:WINDOW`: the spec the command lines and the peer programs take.
    pub fn spec(self) -> String {
        match self.kind {
            Kind::Get => format!("get:{}", self.window),
            Kind::CreateDelete => format!("cd:{}", self.window),
        }
    }

    /// The workload a [`spec`](Self::spec) names (a window of at least 1).
    pub fn from_spec(spec: &str) -> Result<Workload, String> {
        let bad = || format!("unknown workload {spec} (get:WINDOW or cd:WINDOW)");
        let (kind, window) = spec.split_once(':').ok_or_else(bad)?;
        let kind = match kind {
            "get" => Kind::Get,
            "cd" => Kind::CreateDelete,
            _ => return Err(bad()),
        };
        match window.parse::<usize>() {
            Ok(window) if window > 0 => Ok(Workload { kind, window }),
            _ => Err(bad()),
        }
    }

    /// The workload's name in the tables.
    pub fn label(self) -> &'static str {
        match self.kind {
            Kind::Get => "getData 100 B",
            Kind::CreateDelete => "create+delete pair",
        }
    }

    /// Requests per op.
    pub fn frames_per_op(self) -> usize {
        match self.kind {
            Kind::Get => 1,
            Kind::CreateDelete => 2,
        }
    }
}

/// Paths on the server, under a base of this run's own.
#[derive(Debug, Clone)]
pub struct Paths {
    pub base: String,
    /// The 100-byte znode getData reads.
    pub data: String,
    /// The parent of the nodes the create + delete pairs make.
    pub cd_base: String,
}

impl Paths {
    /// The paths under `base`.
    pub fn under(base: String) -> Paths {
        Paths {
            data: format!("{base}/data"),
            cd_base: format!("{base}/cd"),
            base,
        }
    }
}

/// How one workload is measured: an unmeasured warm-up, then `reps` repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    pub warmup: Duration,
    pub secs: Duration,
    pub reps: usize,
}

impl Schedule {
    /// A warm-up of `timing.warmup` and `reps` repetitions of `timing.secs`.
    pub fn new(timing: &Timing, reps: usize) -> Schedule {
        Schedule {
            warmup: Duration::from_secs_f64(timing.warmup),
            secs: Duration::from_secs_f64(timing.secs),
            reps,
        }
    }
}

/// The repetitions in `RESULT SPEC REP OPS NANOS CPU_NANOS ERRORS` lines (what the peer
/// programs print), by workload; other lines are skipped.
pub fn parse_results(stdout: &str) -> HashMap<Workload, Vec<Throughput>> {
    let mut map: HashMap<Workload, Vec<Throughput>> = HashMap::new();
    for line in stdout.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 7 || f[0] != "RESULT" {
            continue;
        }
        let Ok(w) = Workload::from_spec(f[1]) else {
            continue;
        };
        let num = |s: &str| s.parse::<u64>().ok();
        if let (Some(ops), Some(ns), Some(cpu), Some(errors)) =
            (num(f[3]), num(f[4]), num(f[5]), num(f[6]))
        {
            map.entry(w).or_default().push(Throughput {
                ops,
                elapsed: Duration::from_nanos(ns),
                cpu: Duration::from_nanos(cpu),
                errors,
            });
        }
    }
    map
}

/// One repetition as a `RESULT` line, as [`parse_results`] reads it back.
pub fn result_line(w: Workload, rep: usize, t: &Throughput) -> String {
    format!(
        "RESULT {} {rep} {} {} {} {}",
        w.spec(),
        t.ops,
        t.elapsed.as_nanos(),
        t.cpu.as_nanos(),
        t.errors
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_read_back_by_workload() {
        let w = Workload::from_spec("cd:64").unwrap();
        let t = Throughput {
            ops: 1234,
            elapsed: Duration::from_millis(2500),
            cpu: Duration::from_millis(40),
            errors: 3,
        };
        let out = format!("noise\n{}\nRESULT get:x 0 1 2 3 4\n", result_line(w, 0, &t));
        let map = parse_results(&out);
        assert_eq!(map.len(), 1);
        assert_eq!(map[&w], vec![t]);
    }

    #[test]
    fn bad_specs_are_refused() {
        for spec in ["get", "get:", "put:1", "cd:-1", "cd:0"] {
            assert!(Workload::from_spec(spec).is_err(), "{spec}");
        }
    }
}
