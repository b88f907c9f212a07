//! The blocking client's benchmark (issue 29): `zk_session::blocking::Client` beside the
//! blocking raw loop, a hand-made threaded client, the `zookeeper` crate 0.8 and the
//! ZooKeeper Java client, callers on OS threads, on one standalone server, in one run.
//!
//! ```sh
//! cargo run --release -p conformance --bin blocking_bench
//! cargo run --release -p conformance --features bench-peers --bin blocking_bench -- \
//!     --secs 2.5 --rounds 3 --windows 1,64,512 --cd 64 --only raw,raw-threads,ours,zookeeper-0.8,java
//! ```
//!
//! Workloads: getData of a 100-byte znode at each of `--windows`, create + delete pairs at
//! each of `--cd` (an op is one pair). Window W means W requests in flight on one session:
//! W caller threads each making one blocking call after another (the raw loop: W frames in
//! flight on its one thread).
//!
//! Rows (each in a process of its own, so that its CPU time is its own: this program again
//! with `--child ROW`, or a JVM):
//! - **raw**: the raw loop of `session_bench` (`conformance::raw_session`): handshake by
//!   hand, W pre-encoded frames kept in flight by one thread blocking in `read`. The floor.
//! - **raw-threads**: the floor for any client with one I/O thread and callers on threads: a
//!   reader thread owns the read half and answers callers in order, W caller threads write
//!   their own pre-encoded frames under a mutex and wait on a std channel.
//! - **ours**: `zk_session::blocking::Client`, one client shared by the W threads.
//! - **zookeeper-0.8**: the `zookeeper` crate 0.8, one handle shared by the W threads; only
//!   with `--features bench-peers` (it is never built otherwise).
//! - **java**: the ZooKeeper Java client 3.8 (Debian's jars), W threads making synchronous
//!   calls on one handle (`conformance/java/JavaBlockingBench.java`, compiled at run time),
//!   after `--jit-warmup` seconds of JIT warm-up in every JVM.
//!
//! Rows alternate within each of `--rounds` rounds; each row measures every workload in a
//! round (a warm-up, then `--reps` repetitions of `--secs`). The table shows each row's best
//! repetition over all rounds, with its CPU per op (the row process's utime + stime, all
//! threads; the JVM's `getProcessCpuTime`) and both as multiples of the raw loop's and the
//! threaded floor's.

mod callers;
mod ours;
mod raw_threads;
mod report;
mod rows;
mod settings;
#[cfg(feature = "bench-peers")]
mod zookeeper_08;

use std::{collections::HashMap, env, fs, io::Write, thread, time::Duration};

use conformance::{
    bench::{self, RunStart, Throughput},
    outcome::best,
    peers,
    raw_session::{raw_run, SESSION_TIMEOUT},
    workload::{result_line, Paths, Schedule, Workload, DATA_LEN},
    Standalone,
};
use zk_session::{Client, CreateOptions};

use crate::{
    report::{report, Results},
    rows::{child_main, Launcher},
    settings::{Row, Settings},
};

fn main() {
    let set = bench::or_exit(Settings::from_args());
    if let Some(row) = set.child.row {
        let paths = Paths::under(set.child.base.clone());
        if let Err(e) = child_main(row, &set.child.connect, &paths, &set) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    let start = RunStart::now();
    let zk = bench::start_server(Standalone::builder());
    let connect = zk.connect_string();
    let paths = Paths::under(format!("/blocking-bench-{}", std::process::id()));
    if let Err(e) = make_nodes(&connect, &paths) {
        eprintln!("cannot create the benchmark's znodes: {e}");
        std::process::exit(1);
    }
    warm_up_server(&zk, &paths);
    let tmp = peers::process_dir(&env::temp_dir(), "blocking-bench");
    let launchers: Vec<(Row, Launcher)> = (set.rows.iter())
        .map(|&row| (row, Launcher::for_row(row, &tmp)))
        .collect();
    let mut reps: HashMap<(Workload, Row), Result<Vec<Throughput>, String>> = HashMap::new();
    for round in 0..set.timing.rounds {
        for (row, launcher) in &launchers {
            eprintln!("round {round}: {}", row.name());
            let run = launcher.run(*row, &connect, &paths, &set);
            for &w in &set.workloads {
                let entry = reps.entry((w, *row)).or_insert_with(|| Ok(Vec::new()));
                match (&run, entry) {
                    (Ok(map), Ok(v)) => v.extend(map.get(&w).into_iter().flatten()),
                    (Err(e), entry) => *entry = Err(e.clone()),
                    (Ok(_), Err(_)) => {}
                }
            }
        }
    }
    let results: Results = (reps.into_iter())
        .map(|(key, r)| (key, r.and_then(|v| best(&v))))
        .collect();
    let _ = fs::remove_dir_all(&tmp);

    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "blocking_bench: best of {} repetitions of {} s per client and workload ({} rounds, \
         clients alternating, each in a process of its own), {} s warm-up per workload (+{} s \
         JIT warm-up per JVM); one standalone ZooKeeper 3.8 (forceSync=no) on {connect}; \
         {cores} cores",
        set.reps * set.timing.rounds,
        set.timing.secs,
        set.timing.rounds,
        set.timing.warmup,
        set.timing.jit_warmup,
    );
    start.print_load();
    report(&results, &set.workloads, &set.rows);
    drop(zk);
}

/// One repetition per line, as the parent reads them back; flushed, so that a row that
/// fails later still reports what it measured.
pub(crate) fn print_results(w: Workload, reps: &[Throughput]) {
    let mut out = std::io::stdout().lock();
    for (rep, t) in reps.iter().enumerate() {
        let _ = writeln!(out, "{}", result_line(w, rep, t));
    }
    let _ = out.flush();
}

/// The run's base, its 100-byte data znode and the create + delete parent.
fn make_nodes(connect: &str, paths: &Paths) -> Result<(), zk_session::Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        let client = Client::builder(connect)
            .session_timeout(SESSION_TIMEOUT)
            .connect()
            .await?;
        let opts = CreateOptions::persistent();
        client.create(&paths.base, b"", opts.clone()).await?;
        (client.create(&paths.data, &[7u8; DATA_LEN], opts.clone())).await?;
        client.create(&paths.cd_base, b"", opts).await?;
        client.close().await
    })
}

/// The server's JIT warms up on the raw loop, unmeasured.
fn warm_up_server(zk: &Standalone, paths: &Paths) {
    eprintln!("warming up the server…");
    let s = Schedule {
        warmup: Duration::from_secs(2),
        secs: Duration::from_millis(500),
        reps: 1,
    };
    for spec in ["get:64", "cd:64"] {
        let w = Workload::from_spec(spec).expect("a workload");
        if let Err(e) = raw_run(zk.client_addr(), w, paths, s) {
            eprintln!("server warm-up: {e}");
        }
    }
}
