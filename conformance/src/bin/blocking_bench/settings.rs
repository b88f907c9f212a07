//! The command line: timing, the getData windows and create + delete windows, the rows to
//! run; and, for the row processes the program starts, which row and where.

use conformance::{
    bench::{self, Timing},
    raw_session::RING_FRAMES,
    workload::{Kind, Schedule, Workload},
};

/// A client measured: each runs in a process of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Row {
    /// The blocking raw loop: one thread, `window` frames in flight.
    Raw,
    /// A hand-made client: a reader thread, `window` caller threads writing their own frames.
    RawThreads,
    /// `zk_session::blocking::Client`.
    Ours,
    /// The `zookeeper` crate 0.8 (feature `bench-peers`).
    Zookeeper08,
    /// The ZooKeeper Java client, synchronous calls on `window` threads.
    Java,
}

impl Row {
    pub(crate) const ALL: [Row; 5] = [
        Row::Raw,
        Row::RawThreads,
        Row::Ours,
        Row::Zookeeper08,
        Row::Java,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Row::Raw => "raw",
            Row::RawThreads => "raw-threads",
            Row::Ours => "ours",
            Row::Zookeeper08 => "zookeeper-0.8",
            Row::Java => "java",
        }
    }
}

/// What a row process is told by the program that starts it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Child {
    pub(crate) row: Option<Row>,
    pub(crate) connect: String,
    pub(crate) base: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Seconds per repetition, warm-up per workload, the JVM's extra warm-up, rounds.
    pub(crate) timing: Timing,
    /// Repetitions per workload in each round.
    pub(crate) reps: usize,
    pub(crate) rows: Vec<Row>,
    pub(crate) workloads: Vec<Workload>,
    /// Set in a row process.
    pub(crate) child: Child,
}

const USAGE: &str = "usage: blocking_bench [--secs S] [--warmup S] [--jit-warmup S] [--rounds N] \
                     [--reps N] [--windows 1,64,512] [--cd 64|none] \
                     [--only raw,raw-threads,ours,zookeeper-0.8,java]";

impl Settings {
    pub(crate) fn from_args() -> Result<Settings, String> {
        let mut s = Settings {
            timing: Timing {
                secs: 2.5,
                warmup: 1.0,
                jit_warmup: 4.0,
                rounds: 3,
            },
            reps: 1,
            rows: Row::ALL.to_vec(),
            workloads: Vec::new(),
            child: Child::default(),
        };
        let (mut gets, mut cds) = (vec![1, 64, 512], vec![64]);
        let mut specs = None;
        bench::parse_flags(USAGE, |flag, value| {
            if s.timing.flag(flag, value)? {
                return Ok(true);
            }
            match flag {
                "--reps" => s.reps = bench::count(&value()?)?,
                "--only" => s.rows = bench::pick(&value()?, &Row::ALL, Row::name, "row")?,
                "--windows" => gets = windows(&value()?)?,
                "--cd" => cds = windows(&value()?)?,
                // The row processes' own flags.
                "--workloads" => specs = Some(value()?),
                "--child" => {
                    s.child.row = Some(bench::pick(&value()?, &Row::ALL, Row::name, "row")?[0])
                }
                "--connect" => s.child.connect = value()?,
                "--base" => s.child.base = value()?,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        s.workloads = match specs {
            Some(list) => list
                .split(',')
                .map(Workload::from_spec)
                .collect::<Result<_, _>>()?,
            None => at_windows(Kind::Get, &gets)
                .chain(at_windows(Kind::CreateDelete, &cds))
                .collect(),
        };
        Ok(s)
    }

    /// How a row measures each workload in one process (one round).
    pub(crate) fn schedule(&self) -> Schedule {
        Schedule::new(&self.timing, self.reps)
    }

    /// The flags that make a row process measure as this one says.
    pub(crate) fn child_args(&self, row: Row, connect: &str, base: &str) -> Vec<String> {
        let specs: Vec<String> = self.workloads.iter().map(|w| w.spec()).collect();
        [
            ("--child", row.name().to_owned()),
            ("--connect", connect.to_owned()),
            ("--base", base.to_owned()),
            ("--secs", self.timing.secs.to_string()),
            ("--warmup", self.timing.warmup.to_string()),
            ("--reps", self.reps.to_string()),
            ("--workloads", specs.join(",")),
        ]
        .into_iter()
        .flat_map(|(f, v)| [f.to_owned(), v])
        .collect()
    }
}

/// A comma-separated list of windows (1 to 512); "none" is the empty list.
fn windows(list: &str) -> Result<Vec<usize>, String> {
    if list == "none" {
        return Ok(Vec::new());
    }
    list.split(',')
        .map(|w| match w.parse::<usize>() {
            // The raw loop's ring holds two windows of frames.
            Ok(n) if n > 0 && n <= RING_FRAMES / 2 => Ok(n),
            _ => Err(format!("bad window {w} (1 to {})", RING_FRAMES / 2)),
        })
        .collect()
}

fn at_windows(kind: Kind, windows: &[usize]) -> impl Iterator<Item = Workload> + '_ {
    windows.iter().map(move |&window| Workload { kind, window })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_listed_or_none() {
        assert_eq!(windows("1,64,512"), Ok(vec![1, 64, 512]));
        assert_eq!(windows("none"), Ok(Vec::new()));
        for bad in ["0", "513", "x", "1,,2"] {
            assert!(windows(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_row_process_is_told_every_workload_and_the_timing() {
        let set = Settings {
            timing: Timing {
                secs: 2.5,
                warmup: 1.0,
                jit_warmup: 4.0,
                rounds: 3,
            },
            reps: 2,
            rows: Row::ALL.to_vec(),
            workloads: at_windows(Kind::Get, &[1, 64])
                .chain(at_windows(Kind::CreateDelete, &[64]))
                .collect(),
            child: Child::default(),
        };
        let args = set.child_args(Row::RawThreads, "127.0.0.1:2181", "/b");
        let value = |flag: &str| {
            let i = args.iter().position(|a| a == flag).expect(flag);
            args[i + 1].clone()
        };
        assert_eq!(value("--child"), "raw-threads");
        assert_eq!(value("--workloads"), "get:1,get:64,cd:64");
        assert_eq!(value("--secs"), "2.5");
        assert_eq!(value("--reps"), "2");
        assert_eq!(value("--base"), "/b");
    }
}
