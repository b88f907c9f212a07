//! Cache benchmark: zk-recipes' Cache beside Curator's CuratorCache, on one standalone server
//! and the same trees, in one run.
//!
//! ```sh
//! cargo run --release -p conformance --bin cache_bench
//! cargo run --release -p conformance --bin cache_bench -- --trees 1k,flat100k --writes 2000
//! ```
//!
//! Trees (100 bytes of data per znode): 1,000, 10,000 and 50,000 znodes with 100 children
//! per parent, and a flat directory of 100,000 children; `--trees 1m` adds a tree of
//! 1,000,000 znodes (100 children per parent; the server then gets a 3 GiB heap). For each
//! tree, each cache runs in a
//! fresh child process (ours: this program with `--worker`; Curator's:
//! conformance/java/CuratorCacheBench.java, compiled with `javac` against Debian's jars):
//! - load: from the start of the cache to its "initialized", in znodes per second;
//! - server requests per znode: the packets the server received (its `srvr` "Received:")
//!   from before the child starts to the end of its load, pings and the handshake included;
//! - memory per znode: the growth of the child's resident set (VmRSS) over the load, and its
//!   live bytes: for ours the growth of the bytes allocated and not freed (a counting global
//!   allocator), for the JVM the growth of its heap after a GC;
//! - propagation: this program's own client then does `--writes` setData (100 bytes each, 100
//!   in flight, round the tree's znodes); the child records each change event with the wall
//!   clock, and each event that matches a write (path and version) gives one latency, from
//!   the write's ack to the event. Events/s is the matched events over the time from the
//!   first write to the last event. A cache may fold quick writes to one znode into one event.
//!
//! Curator 5.4 loads at most 65,535 znodes of a tree read in one go (CURATOR-690): on the
//! 1m tree it runs one CuratorCache per child of the root (see CuratorCacheBench.java).
//!
//! `--rounds` (default 1) repeats every run, ours and Curator's in turn (in the opposite order
//! in odd rounds); the table shows each client's best round by load speed.

mod report;
mod run;
mod trees;
mod worker;

use std::{env, time::Duration};

use conformance::{
    bench::{self, RunStart},
    peers::{self, JavaProgram},
    Standalone,
};
use zk_session::Client;

use crate::{report::Row, run::Outcome, trees::Shape};

/// Counts live heap bytes, so that ours can be set beside the JVM's heap after a GC.
#[global_allocator]
pub(crate) static ALLOCATOR: cap::Cap<std::alloc::System> =
    cap::Cap::new(std::alloc::System, usize::MAX);

const CURATOR_SOURCE: &str = include_str!("../../../java/CuratorCacheBench.java");

/// Wall-clock nanoseconds: the one clock this process and the child processes share.
pub(crate) fn wall_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

struct Settings {
    shapes: Vec<Shape>,
    writes: usize,
    rounds: usize,
}

fn settings() -> Result<Settings, String> {
    let mut set = Settings {
        shapes: Shape::defaults(),
        writes: 10_000,
        rounds: 1,
    };
    let usage = "usage: cache_bench [--trees 1k,10k,50k,flat100k,1m] [--writes N] [--rounds N]";
    bench::parse_flags(usage, |flag, value| {
        match flag {
            "--trees" => {
                set.shapes = bench::pick(&value()?, &Shape::ALL, Shape::flag, "tree")?;
            }
            "--writes" => set.writes = bench::count(&value()?)?,
            "--rounds" => set.rounds = bench::count(&value()?)?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(set)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Peer {
    Ours,
    Curator,
}

fn main() {
    let args: Vec<String> = env::args().collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    if let [_, flag, connect, root] = &args[..] {
        if flag == "--worker" {
            rt.block_on(worker::run(connect, root));
            return;
        }
    }
    let set = bench::or_exit(settings());
    let start = RunStart::now();
    // A million znodes with their data need more than the test kit's default heap.
    let big = set.shapes.iter().any(|s| s.len() > 200_000);
    let zk = bench::start_server(Standalone::builder().max_heap_mb(if big { 3072 } else { 256 }));
    let connect = zk.connect_string();
    let tmp = peers::process_dir(&env::temp_dir(), "cache-bench");
    eprintln!("compiling the Curator program…");
    let curator = JavaProgram::compile_embedded(
        &[("CuratorCacheBench.java", CURATOR_SOURCE)],
        &tmp,
        peers::CURATOR_JARS,
        "libcurator-recipes-java",
    );
    let admin = rt.block_on(async {
        Client::builder(&connect)
            .session_timeout(Duration::from_secs(60))
            .connect()
            .await
            .expect("connect")
    });
    let mut rows = Vec::new();
    for shape in &set.shapes {
        let root = format!("/bench-{}", shape.flag());
        eprintln!("building {}…", shape.name());
        let paths = rt.block_on(trees::build(&admin, *shape, &root));
        let targets: Vec<String> = match shape {
            Shape::Flat(_) => paths[1..].to_vec(),
            Shape::Bushy(_) => paths.clone(),
        };
        let mut best: [Option<Result<Outcome, String>>; 2] = [None, None];
        for round in 0..set.rounds {
            let mut order = [Peer::Ours, Peer::Curator];
            if round % 2 == 1 {
                order.reverse();
            }
            for peer in order {
                let cmd = match peer {
                    Peer::Ours => {
                        let mut c = std::process::Command::new(env::current_exe().expect("exe"));
                        c.args(["--worker", &connect, &root]);
                        Ok(c)
                    }
                    Peer::Curator => curator.as_ref().map(|p| {
                        let mut c = p.command();
                        c.args([&connect, &root]);
                        if shape.split_for_curator() {
                            c.arg("split");
                        }
                        c
                    }),
                };
                let got = match cmd {
                    Ok(cmd) => rt.block_on(run::run(
                        cmd,
                        zk.client_addr(),
                        &admin,
                        &targets,
                        set.writes,
                    )),
                    Err(e) => Err(e.clone()),
                };
                let slot = &mut best[peer as usize];
                let better = match (&slot, &got) {
                    (None, _) | (Some(Err(_)), Ok(_)) => true,
                    (Some(Ok(a)), Ok(b)) => b.load < a.load,
                    _ => false,
                };
                if better {
                    *slot = Some(got);
                }
            }
        }
        let [ours, theirs] = best.map(|b| b.unwrap_or_else(|| Err("not run".into())));
        rows.push(Row {
            tree: shape.name(),
            znodes: paths.len(),
            ours,
            curator: theirs,
        });
    }
    report::print(&rows, set.writes);
    start.print_load();
}
