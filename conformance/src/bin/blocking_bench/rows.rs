//! Each row in a process of its own, so that one client's threads never count against
//! another's CPU time: this program again (`--child ROW`) for the Rust rows, a JVM for
//! Java. Both print `RESULT` lines, read back here.

use std::{collections::HashMap, env, path::Path, process::Command, time::Duration};

use conformance::{
    bench::Throughput,
    peers::{self, run_child, JavaProgram},
    raw_session::raw_run,
    workload::{parse_results, Paths, Workload},
};

use crate::{
    print_results,
    raw_threads::raw_threads_run,
    settings::{Row, Settings},
};

const JAVA_SOURCE: &str = include_str!("../../../java/JavaBlockingBench.java");
/// The session benchmark's Java peer, whose connect the blocking one uses.
const JAVA_CONNECT: &str = include_str!("../../../java/JavaClientBench.java");

/// One round of `row` on every workload: its repetitions, by workload.
pub(crate) type RowResults = Result<HashMap<Workload, Vec<Throughput>>, String>;

/// How a row's process is started.
pub(crate) enum Launcher {
    /// This program, with `--child ROW`.
    Child,
    /// The JVM, with the compiled Java peer (or why it could not be compiled).
    Java(Result<JavaProgram, String>),
}

impl Launcher {
    /// The Java peer is compiled once, into `tmp`.
    pub(crate) fn for_row(row: Row, tmp: &Path) -> Launcher {
        if row != Row::Java {
            return Launcher::Child;
        }
        Launcher::Java(JavaProgram::compile_embedded(
            &[
                ("JavaBlockingBench.java", JAVA_SOURCE),
                ("JavaClientBench.java", JAVA_CONNECT),
                peers::BENCH_ARGS,
            ],
            tmp,
            peers::ZOOKEEPER_CLIENT_JARS,
            "libzookeeper-java libslf4j-java",
        ))
    }

    /// Runs one round of `row` against the server at `connect`.
    pub(crate) fn run(&self, row: Row, connect: &str, paths: &Paths, set: &Settings) -> RowResults {
        let per_workload = set.timing.warmup + set.timing.secs * set.reps as f64;
        let mut limit = per_workload * set.workloads.len() as f64 + 60.0;
        let mut cmd = match self {
            Launcher::Child => {
                let exe = env::current_exe().map_err(|e| format!("this program: {e}"))?;
                let mut cmd = Command::new(exe);
                cmd.args(set.child_args(row, connect, &paths.base));
                cmd
            }
            Launcher::Java(java) => {
                let mut cmd = java.as_ref().map_err(Clone::clone)?.command();
                limit += set.timing.jit_warmup;
                cmd.args([
                    connect.to_owned(),
                    paths.data.clone(),
                    paths.cd_base.clone(),
                    set.timing.jit_warmup.to_string(),
                    set.timing.warmup.to_string(),
                    set.timing.secs.to_string(),
                    set.reps.to_string(),
                ]);
                cmd.args(set.workloads.iter().map(|w| w.spec()));
                cmd
            }
        };
        let out = run_child(&mut cmd, Duration::from_secs_f64(limit))?;
        Ok(parse_results(&out))
    }
}

/// In a row process: measures the row on every workload, printing `RESULT` lines.
pub(crate) fn child_main(
    row: Row,
    connect: &str,
    paths: &Paths,
    set: &Settings,
) -> Result<(), String> {
    let s = set.schedule();
    let addr = || {
        connect
            .parse()
            .map_err(|e| format!("{connect}: not one address: {e}"))
    };
    match row {
        Row::Raw | Row::RawThreads => {
            let addr = addr()?;
            for &w in &set.workloads {
                let reps = match row {
                    Row::Raw => raw_run(addr, w, paths, s),
                    _ => raw_threads_run(addr, w, paths, s),
                }
                .map_err(|e| format!("{} {}: {e}", row.name(), w.spec()))?;
                print_results(w, &reps);
            }
            Ok(())
        }
        Row::Ours => crate::ours::ours_run(connect, &set.workloads, paths, s),
        Row::Zookeeper08 => zookeeper_08(connect, &set.workloads, paths, s),
        Row::Java => Err("the Java row runs in a JVM".to_owned()),
    }
}

#[cfg(feature = "bench-peers")]
use crate::zookeeper_08::zookeeper_08_run as zookeeper_08;

#[cfg(not(feature = "bench-peers"))]
fn zookeeper_08(
    _: &str,
    _: &[Workload],
    _: &Paths,
    _: conformance::workload::Schedule,
) -> Result<(), String> {
    Err("built without --features bench-peers".to_owned())
}
