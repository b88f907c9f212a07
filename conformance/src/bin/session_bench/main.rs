//! Session benchmark: zk-session against the server-bound limit, the ZooKeeper Java client
//! 3.8 and kazoo, on one standalone server, in one run.
//!
//! ```sh
//! cargo run --release -p conformance --bin session_bench
//! cargo run --release -p conformance --bin session_bench -- --secs 2 --reps 2 --only raw,ours
//! cargo run --release -p conformance --bin session_bench -- --tls --only raw,ours --workloads get:1,get:64
//! cargo run --release -p conformance --bin session_bench -- --only raw,tokio,mux,direct,ours,ours1
//! ```
//!
//! `--tls` gives the server a TLS port beside the plain one (so both are served by the Netty
//! connection factory, not the default NIO one), runs a second zk-session client over mutual
//! TLS after ours in every round, and adds a table of the two side by side.
//!
//! Workloads (each at its window: that many requests kept in flight on one session):
//! - getData of a 100-byte znode at windows 1, 64 and 512;
//! - create + delete pairs (100 bytes of data) at window 64; an op is one pair.
//!
//! Clients:
//! - **raw**: one `TcpStream`, handshake by hand with zk-proto, then a blocking loop that keeps
//!   `window` pre-encoded request frames in flight and counts reply frames by their length
//!   prefix without decoding them (it only looks at the error field of each reply header, so
//!   that a run of error replies cannot pass for throughput). The server-bound limit.
//! - **tokio**: the raw loop on a tokio `TcpStream`, one task on the same runtime as ours:
//!   what the runtime itself costs (its readiness waits and wake-ups), no client work.
//! - **mux**: the smallest multiplexed client on tokio: one I/O task, `window` caller tasks
//!   handing it pre-encoded frames and oneshots; the cost of ours' shape without its work.
//! - **direct**: as mux, but each caller writes its own frame to the socket (under a lock)
//!   and the I/O task only reads: what the hop from caller to session task costs.
//! - **ours1**: ours with its `window` requests polled by one task (each woken on its own)
//!   instead of a task each: what a task per request costs on the multi-thread runtime.
//! - **ours**: a zk-session `Client` on a multi-threaded tokio runtime; `window` tasks, each
//!   awaiting one request after another on a clone of the client.
//! - **Java**: `conformance/java/JavaClientBench.java`, compiled here with the machine's
//!   `javac` against Debian's jars; async API, a semaphore of `window` permits.
//! - **kazoo**: `conformance/python/kazoo_bench.py`; `get_async` / `create_async` /
//!   `delete_async`, a semaphore of `window` permits.
//!
//! Every measurement is a warm-up, then `--reps` timed repetitions of `--secs` seconds; the
//! table shows the best repetition (noise from other processes only ever slows a run down).
//! CPU time is the client process's own (all its threads), per op: for raw and ours this
//! process's utime + stime from `/proc/self/stat` (the server is another process), for Java the JVM's
//! `getProcessCpuTime`, for kazoo `time.process_time_ns`.
//!
//! Targets (printed, not asserted): ours >= 90% of raw, >= 1.5x Java, >= 3x kazoo, and at
//! most half of Java's CPU time per op.

mod direct;
mod mux;
mod one_task;
mod ours;
mod peer_runs;
mod report;
mod settings;
mod tokio_raw;
mod workloads;

use std::{collections::HashMap, env, fs, thread, time::Duration};

use conformance::{
    bench::{self, RunStart, Throughput, Timing},
    peers,
    raw_session::{raw_run, SESSION_TIMEOUT},
    workload::DATA_LEN,
    ServerTls, Standalone, TestCerts,
};
use zk_session::{Client, CreateOptions};

use crate::{
    direct::direct_run,
    mux::mux_run,
    one_task::ours_one_task_run,
    ours::{ours_run, tls_connect},
    peer_runs::{java_run, kazoo_run, PeerRun},
    report::{report, report_runtime, report_tls},
    settings::{Paths, Settings},
    tokio_raw::tokio_raw_run,
    workloads::{best, Outcome, Peer, Workload, WORKLOADS},
};

const JAVA_SOURCE: &str = include_str!("../../../java/JavaClientBench.java");
const KAZOO_SOURCE: &str = include_str!("../../../python/kazoo_bench.py");

// ----- main -----

fn main() {
    let set = bench::or_exit(Settings::from_args());
    let start = RunStart::now();
    let certs = set
        .tls
        .then(|| TestCerts::generate().expect("TLS certificates (openssl)"));
    let mut server = Standalone::builder();
    if let Some(c) = &certs {
        server = server.tls(ServerTls::from_certs(c));
    }
    let zk = bench::start_server(server);
    let connect = zk.connect_string();
    let addr = zk.client_addr();
    let rt = if set.current_thread {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    }
    .enable_all()
    .build()
    .expect("tokio runtime");
    let base = format!("/session-bench-{}", std::process::id());
    let paths = Paths::under(base);
    let client = rt.block_on(async {
        let client = Client::builder(&connect)
            .session_timeout(SESSION_TIMEOUT)
            .connect()
            .await
            .expect("connect");
        let opts = CreateOptions::persistent();
        client
            .create(&paths.base, b"", opts.clone())
            .await
            .expect("base");
        client
            .create(&paths.data, &[7u8; DATA_LEN], opts.clone())
            .await
            .expect("data node");
        client
            .create(&paths.cd_base, b"", opts.clone())
            .await
            .expect("cd");
        client
    });
    let tls_client = certs.as_ref().map(|c| rt.block_on(tls_connect(&zk, c)));
    let tmp = peers::process_dir(&env::temp_dir(), "session-bench");

    let mut results: HashMap<(Workload, Peer), Outcome> = HashMap::new();
    let peers = set.peers.clone();

    let in_process: Vec<Peer> = (Peer::ALL.into_iter())
        .filter(|p| p.in_process() && peers.contains(p))
        .collect();
    // The server's JIT warms up on the raw loop, unmeasured.
    if !in_process.is_empty() {
        eprintln!("warming up the server…");
        let warm = Settings {
            timing: Timing {
                warmup: 2.0,
                secs: 0.5,
                ..set.timing
            },
            reps: 1,
            ..set.clone()
        };
        for w in [WORKLOADS[1], WORKLOADS[3]] {
            if let Err(e) = raw_run(addr, w, &paths, warm.schedule()) {
                eprintln!("server warm-up: {e}");
            }
        }
    }
    // The clients in this process alternate, round after round, so that all see the same
    // background load; each keeps its best repetition over all rounds.
    let mut reps: HashMap<(Workload, Peer), Result<Vec<Throughput>, String>> = HashMap::new();
    let mut tls_reps: HashMap<Workload, Vec<Throughput>> = HashMap::new();
    let in_process = Peer::ALL
        .into_iter()
        .filter(|p| p.in_process() && peers.contains(p));
    let in_process: Vec<Peer> = in_process.collect();
    for round in 0..set.timing.rounds {
        for w in set.workloads.iter().copied() {
            for &peer in &in_process {
                eprintln!(
                    "round {round}: {} {} window {}",
                    peer.name(),
                    w.label(),
                    w.window
                );
                keep(&mut reps, (w, peer), || match peer {
                    Peer::Raw => raw_run(addr, w, &paths, set.schedule()),
                    Peer::Tokio => rt.block_on(tokio_raw_run(addr, w, &paths, &set)),
                    Peer::Mux => rt.block_on(mux_run(addr, w, &paths, &set)),
                    Peer::Direct => rt.block_on(direct_run(addr, w, &paths, &set)),
                    Peer::Ours => Ok(rt.block_on(ours_run(&client, w, &paths, &set))),
                    Peer::OursOneTask => {
                        Ok(rt.block_on(ours_one_task_run(&client, w, &paths, &set)))
                    }
                    Peer::Java | Peer::Kazoo => unreachable!("not in this process"),
                });
                if let (Peer::Ours, Some(tls)) = (peer, &tls_client) {
                    eprintln!(
                        "round {round}: ours over TLS {} window {}",
                        w.label(),
                        w.window
                    );
                    let m = rt.block_on(ours_run(tls, w, &paths, &set));
                    tls_reps.entry(w).or_default().extend(m);
                }
            }
        }
    }
    for (key, r) in reps {
        results.insert(key, r.and_then(|v| best(&v)));
    }
    // The peers in other processes, one run each for all the workloads.
    for (peer, label, run) in [
        (Peer::Java, "java  (compile and run)", java_run as PeerRun),
        (Peer::Kazoo, "kazoo", kazoo_run),
    ] {
        if !peers.contains(&peer) {
            continue;
        }
        eprintln!("{label}");
        let outcome = run(&connect, &paths, &set, &tmp);
        for w in set.workloads.iter().copied() {
            let r = match &outcome {
                Ok(map) => map
                    .get(&w)
                    .map_or_else(|| Err("no result line".to_owned()), |v| best(v)),
                Err(e) => Err(e.clone()),
            };
            results.insert((w, peer), r);
        }
    }
    rt.block_on(async {
        let _ = client.close().await;
        if let Some(tls) = &tls_client {
            let _ = tls.close().await;
        }
    });
    drop(client);
    drop(tls_client);
    rt.shutdown_timeout(Duration::from_secs(2));
    let _ = fs::remove_dir_all(&tmp);

    println!(
        "session_bench: best of {} repetitions of {} s (raw and ours: {} rounds of {}), \
         {} s warm-up per workload (+{} s JIT warm-up for Java); zk-session on a {} tokio \
         runtime; one standalone ZooKeeper 3.8 (forceSync=no) on {}",
        set.reps * set.timing.rounds,
        set.timing.secs,
        set.timing.rounds,
        set.reps,
        set.timing.warmup,
        set.timing.jit_warmup,
        if set.current_thread {
            "current-thread".to_owned()
        } else {
            let workers = thread::available_parallelism().map_or(1, |n| n.get());
            format!("multi-thread ({workers} workers)")
        },
        connect
    );
    start.print_load();
    report(&results, &set.workloads);
    if [Peer::Tokio, Peer::Mux, Peer::Direct, Peer::OursOneTask]
        .iter()
        .any(|p| peers.contains(p))
    {
        report_runtime(&results, &set.workloads);
    }
    if set.tls {
        report_tls(&results, &tls_reps, &set.workloads);
    }
    drop(zk);
}

/// Adds one run's repetitions to a client's on a workload, or keeps its first failure (the
/// workload is then not run again for that client).
fn keep(
    reps: &mut HashMap<(Workload, Peer), Result<Vec<Throughput>, String>>,
    key: (Workload, Peer),
    run: impl FnOnce() -> std::io::Result<Vec<Throughput>>,
) {
    let entry = reps.entry(key).or_insert_with(|| Ok(Vec::new()));
    if let Ok(v) = entry {
        match run() {
            Ok(m) => v.extend(m),
            Err(e) => *entry = Err(format!("{}: {e}", key.1.name())),
        }
    }
}
