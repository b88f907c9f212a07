//! The Java client and kazoo, run as child processes; their results read back from stdout.

use std::{collections::HashMap, path::Path, time::Duration};

use conformance::{
    bench::Throughput,
    peers::{self, run_child, JavaProgram, KazooProgram},
    workload::parse_results,
};

use crate::{
    settings::{Paths, Settings},
    workloads::Workload,
    JAVA_SOURCE, KAZOO_SOURCE,
};

pub(crate) fn child_limit(set: &Settings, extra: f64) -> Duration {
    set.per_workload() * set.workloads.len() as u32 + Duration::from_secs_f64(extra + 60.0)
}

pub(crate) fn peer_args(paths: &Paths, connect: &str) -> Vec<String> {
    vec![
        connect.to_owned(),
        paths.data.clone(),
        paths.cd_base.clone(),
    ]
}

pub(crate) fn timing_args(set: &Settings) -> Vec<String> {
    vec![
        set.timing.warmup.to_string(),
        set.timing.secs.to_string(),
        (set.reps * set.timing.rounds).to_string(),
    ]
}

/// [`java_run`] or [`kazoo_run`]: the repetitions of every workload, by workload.
pub(crate) type PeerRun =
    fn(&str, &Paths, &Settings, &Path) -> Result<HashMap<Workload, Vec<Throughput>>, String>;

pub(crate) fn java_run(
    connect: &str,
    paths: &Paths,
    set: &Settings,
    tmp: &Path,
) -> Result<HashMap<Workload, Vec<Throughput>>, String> {
    let java = JavaProgram::compile_embedded(
        &[("JavaClientBench.java", JAVA_SOURCE), peers::BENCH_ARGS],
        tmp,
        peers::ZOOKEEPER_CLIENT_JARS,
        "libzookeeper-java libslf4j-java",
    )?;
    let mut cmd = java.command();
    let mut args = peer_args(paths, connect);
    args.push(set.timing.jit_warmup.to_string());
    args.extend(timing_args(set));
    args.extend(set.workloads.iter().map(|w| w.spec()));
    cmd.args(args);
    let out = run_child(&mut cmd, child_limit(set, set.timing.jit_warmup))?;
    Ok(parse_results(&out))
}

pub(crate) fn kazoo_run(
    connect: &str,
    paths: &Paths,
    set: &Settings,
    tmp: &Path,
) -> Result<HashMap<Workload, Vec<Throughput>>, String> {
    let sources = [("kazoo_bench.py", KAZOO_SOURCE), peers::KAZOO_PEERS];
    let mut cmd = KazooProgram::prepare_embedded(&sources, tmp)?.command();
    let mut args = peer_args(paths, connect);
    args.extend(timing_args(set));
    args.extend(set.workloads.iter().map(|w| w.spec()));
    cmd.args(args);
    let out = run_child(&mut cmd, child_limit(set, 0.0))?;
    Ok(parse_results(&out))
}
