//! Curator's DistributedQueue, run as a child process per workload; its results read back
//! from stdout.

use std::{net::SocketAddr, path::Path, time::Duration};

use conformance::{
    fault_proxy::FaultProxy,
    peers::{self, run_child, JavaProgram},
};
use zk_session::OpCode;

use crate::{Run, Settings};

const SOURCE: &str = include_str!("../../../java/CuratorQueueBench.java");

/// Curator's client reads a listing of 100,000 children (2 MB) only with a larger buffer
/// than its 1 MB default; ours is given the same.
pub(crate) const JUTE_MAXBUFFER: &str = "-Djute.maxbuffer=8388608";

/// The Curator program, compiled once.
pub(crate) struct Curator(JavaProgram);

impl Curator {
    pub(crate) fn compile(tmp: &Path) -> Result<Curator, String> {
        JavaProgram::compile_embedded(
            &[("CuratorQueueBench.java", SOURCE), peers::CURATOR_PEERS],
            tmp,
            &[peers::CURATOR_JARS, peers::DISCOVERY_JARS].concat(),
            "libcurator-recipes-java and libcurator-discovery-java",
        )
        .map(Curator)
    }

    fn run(&self, args: &[String], limit: Duration, tag: &str) -> Result<Vec<u64>, String> {
        let mut cmd = self.0.command_with(&[JUTE_MAXBUFFER]);
        cmd.args(args);
        let out = run_child(&mut cmd, limit)?;
        for line in out.lines() {
            if let Some(e) = line.strip_prefix("ERROR ") {
                return Err(e.to_owned());
            }
            if let Some(rest) = line.strip_prefix(tag) {
                return Ok(rest
                    .split_whitespace()
                    .filter_map(|v| v.parse().ok())
                    .collect());
            }
        }
        Err(format!("no {tag} line in {out:?}"))
    }

    /// Puts for `secs` seconds.
    pub(crate) fn put(&self, connect: &str, path: &str, secs: f64) -> Result<Run, String> {
        let args = ["put", connect, path, &secs.to_string()].map(str::to_owned);
        match self.run(&args, Duration::from_secs_f64(secs + 60.0), "PUT ")?[..] {
            [ops, ns] => Ok(Run {
                ops,
                elapsed: Duration::from_nanos(ns),
            }),
            _ => Err("a bad PUT line".into()),
        }
    }

    /// getInstance() of a round-robin ServiceProvider of `name` for `secs` seconds.
    pub(crate) fn lookup(
        &self,
        connect: &str,
        base: &str,
        name: &str,
        secs: f64,
    ) -> Result<Run, String> {
        let args = ["lookup", connect, base, name, &secs.to_string()].map(str::to_owned);
        match self.run(&args, Duration::from_secs_f64(secs + 60.0), "LOOKUP ")?[..] {
            [ops, ns, ..] => Ok(Run {
                ops,
                elapsed: Duration::from_nanos(ns),
            }),
            _ => Err("a bad LOOKUP line".into()),
        }
    }

    /// `consumers` consumers take `items` items (at most `secs` seconds).
    pub(crate) fn take(
        &self,
        connect: &str,
        path: &str,
        consumers: usize,
        items: usize,
        secs: f64,
    ) -> Result<Run, String> {
        let args = [
            "take",
            connect,
            path,
            &consumers.to_string(),
            &items.to_string(),
            &secs.to_string(),
        ]
        .map(str::to_owned);
        match self.run(&args, Duration::from_secs_f64(secs + 60.0), "TAKE ")?[..] {
            [_, ops, ns] => Ok(Run {
                ops,
                elapsed: Duration::from_nanos(ns),
            }),
            _ => Err("a bad TAKE line".into()),
        }
    }
}

/// Curator's consumer takes `takes` items of the big queue through a proxy counting its
/// listings; the run and the listings.
pub(crate) async fn take_big(
    curator: &Curator,
    server: SocketAddr,
    path: &str,
    takes: usize,
    set: &Settings,
) -> Result<(Run, u64), String> {
    let proxy = FaultProxy::start(server).await;
    let listings = || proxy.count(OpCode::GetChildren) + proxy.count(OpCode::GetChildren2);
    let before = listings();
    let (connect, path, secs) = (proxy.connect_string(), path.to_owned(), set.take_secs * 3.0);
    let run = tokio::task::block_in_place(|| curator.take(&connect, &path, 1, takes, secs))?;
    Ok((run, listings() - before))
}
