//! Scale benchmark: how the client's cost grows with the work, on real servers.
//!
//! ```sh
//! cargo run --release -p conformance --bin scale_bench
//! cargo run --release -p conformance --bin scale_bench -- --only idle --sessions 100,1000
//! ```
//!
//! - **idle**: `--sessions` idle sessions (10 s session timeout, heartbeats only) in one
//!   process against one standalone server (maxClientCnxns=0): the time to connect them, the
//!   resident memory they add and the CPU they use per session per second, and the process's
//!   threads. Ours run in a child process per count (this program again, `--child-idle`), so
//!   that each count starts from a fresh heap. The ZooKeeper Java client runs
//!   `--java-sessions` sessions in one JVM (`conformance/java/IdleSessions.java`).
//!   Ours and the server each need a file descriptor per session: run under
//!   `ulimit -n`/`prlimit --nofile` of at least sessions + 1,000 (the server inherits it).
//! - **rawidle**: the floor for the idle sessions: as many sessions made by hand (the test
//!   kit's raw connection), each then a tokio task that pings every third of the session
//!   timeout and reads the reply, in a child process of its own (`--child-idle-raw`).
//! - **window**: getData of a 100-byte znode with `--windows` requests in flight on one
//!   session; ops/s and CPU per op, best of `--rounds` rounds of `--secs` seconds. The
//!   server's `zookeeper.globalOutstandingLimit` is raised from 1,000 to 100,000: past it the
//!   server stops reading from its clients, which halves throughput at window 1,024.
//! - **watches**: `--watches` exists watches on one session to a 3-member ensemble; the member
//!   it is connected to is killed; every watch must fire after the failover. Memory per watch
//!   is the resident growth while they are set.
//!
//! Figures are printed, never asserted.

mod idle;
mod idle_raw;
mod procstat;
mod watches;
mod window;

use std::{env, time::Duration};

use conformance::{
    bench::{self, RunStart, Throughput},
    peers, Ensemble, Standalone,
};
use zk_session::{Client, CreateOptions};

use crate::{idle::Idle, watches::Watches};

const USAGE: &str = "usage: scale_bench [--only idle,rawidle,java,window,watches] \
                     [--sessions 100,1000,10000] [--java-sessions N] [--settle S] [--idle S] \
                     [--windows 512,1024,2048,4096] [--secs S] [--warmup S] [--rounds N] \
                     [--watches N]";

#[derive(Debug, Clone)]
struct Settings {
    only: Vec<String>,
    sessions: Vec<usize>,
    java_sessions: usize,
    settle: f64,
    idle: f64,
    windows: Vec<usize>,
    timing: bench::Timing,
    watches: usize,
}

fn list(v: &str) -> Result<Vec<usize>, String> {
    v.split(',').map(bench::count).collect()
}

impl Settings {
    fn from_args() -> Result<Settings, String> {
        let mut s = Settings {
            only: ["idle", "rawidle", "java", "window", "watches"]
                .map(str::to_owned)
                .to_vec(),
            sessions: vec![100, 1000, 10000],
            java_sessions: 1000,
            settle: 4.0,
            idle: 10.0,
            windows: vec![512, 1024, 2048, 4096],
            timing: bench::Timing {
                secs: 3.0,
                warmup: 1.0,
                jit_warmup: 0.0,
                rounds: 2,
            },
            watches: 100_000,
        };
        bench::parse_flags(USAGE, |flag, value| {
            match flag {
                "--only" => s.only = value()?.split(',').map(str::to_owned).collect(),
                "--sessions" => s.sessions = list(&value()?)?,
                "--java-sessions" => s.java_sessions = bench::count(&value()?)?,
                "--settle" => s.settle = bench::seconds(&value()?)?,
                "--idle" => s.idle = bench::seconds(&value()?)?,
                "--windows" => s.windows = list(&value()?)?,
                "--watches" => s.watches = bench::count(&value()?)?,
                _ => return s.timing.flag(flag, value),
            }
            Ok(true)
        })?;
        Ok(s)
    }

    fn runs(&self, part: &str) -> bool {
        self.only.iter().any(|p| p == part)
    }
}

fn main() {
    let args: Vec<String> = env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child-idle") {
        if let Err(e) = idle::child(&args[2..]) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    if args.get(1).map(String::as_str) == Some("--child-idle-raw") {
        if let Err(e) = idle_raw::child(&args[2..]) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    let set = bench::or_exit(Settings::from_args());
    let start = RunStart::now();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let tmp = peers::process_dir(&env::temp_dir(), "scale-bench");

    let mut idle_rows: Vec<(String, Result<Idle, String>)> = Vec::new();
    let mut window_rows: Vec<(usize, Throughput)> = Vec::new();
    if ["idle", "rawidle", "java", "window"]
        .iter()
        .any(|p| set.runs(p))
    {
        let zk = bench::start_server(
            Standalone::builder()
                .config("maxClientCnxns", "0")
                // Past 1,000 requests in flight (its default) the server stops reading.
                .system_property("zookeeper.globalOutstandingLimit", "100000")
                .max_heap_mb(1024),
        );
        let connect = zk.connect_string();
        for &n in &set.sessions {
            if set.runs("idle") {
                eprintln!("idle: {n} sessions of ours");
                idle_rows.push((
                    "ours".to_owned(),
                    idle::ours(&connect, n, set.settle, set.idle),
                ));
            }
            if set.runs("rawidle") {
                eprintln!("idle: {n} sessions made by hand, a tokio task each");
                let r = idle_raw::raw(zk.client_addr(), n, set.settle, set.idle);
                idle_rows.push(("raw tokio".to_owned(), r));
            }
        }
        if set.runs("java") {
            eprintln!("idle: {} sessions of the Java client", set.java_sessions);
            let r = idle::java(&connect, set.java_sessions, set.settle, set.idle, &tmp);
            idle_rows.push(("Java".to_owned(), r));
        }
        if set.runs("window") {
            window_rows = rt.block_on(windows(&connect, &set));
        }
    }
    let watch_row = set.runs("watches").then(|| {
        eprintln!("watches: {} on one session, then a failover", set.watches);
        let mut ens = Ensemble::start(3).unwrap_or_else(|e| {
            eprintln!("cannot start an ensemble: {e}");
            std::process::exit(1);
        });
        rt.block_on(watches::run(&mut ens, set.watches))
    });
    let _ = std::fs::remove_dir_all(&tmp);

    println!(
        "scale_bench: ZooKeeper 3.8 on 127.0.0.1; zk-session on a multi-thread tokio runtime \
         ({} workers)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    start.print_load();
    if !idle_rows.is_empty() {
        print_idle(&idle_rows, &set);
    }
    if !window_rows.is_empty() {
        print_windows(&window_rows, &set);
    }
    if let Some(w) = watch_row {
        print_watches(&w);
    }
}

/// The window runs, rounds alternating over the windows; the best round of each.
async fn windows(connect: &str, set: &Settings) -> Vec<(usize, Throughput)> {
    let client = Client::builder(connect)
        .session_timeout(Duration::from_secs(30))
        .connect()
        .await
        .expect("connect");
    let path = format!("/scale-window-{}", std::process::id());
    client
        .create(&path, &[7u8; window::DATA_LEN], CreateOptions::ephemeral())
        .await
        .expect("data znode");
    let mut best: Vec<(usize, Throughput)> = Vec::new();
    for round in 0..set.timing.rounds {
        for &w in &set.windows {
            eprintln!("round {round}: window {w}");
            let t = window::run(
                &client,
                &path,
                w,
                Duration::from_secs_f64(set.timing.warmup),
                Duration::from_secs_f64(set.timing.secs),
            )
            .await;
            match best.iter_mut().find(|(x, _)| *x == w) {
                Some((_, b)) if b.ops_per_sec() >= t.ops_per_sec() => {}
                Some((_, b)) => *b = t,
                None => best.push((w, t)),
            }
        }
    }
    let _ = client.close().await;
    best
}

fn print_idle(rows: &[(String, Result<Idle, String>)], set: &Settings) {
    println!(
        "\n### Idle sessions in one process (10 s session timeout; {} s settle, {} s measured)\n",
        set.settle, set.idle
    );
    println!(
        "| client | sessions | connected | connect time (s) | RSS growth (MiB) | KiB per session \
         | CPU µs per session per s | threads |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (who, r) in rows {
        match r {
            Ok(i) => println!(
                "| {who} | {} | {} | {:.2} | {:.1} | {:.1} | {:.2} | {} |",
                i.sessions,
                i.connected,
                i.connect.as_secs_f64(),
                i.rss_growth_kib as f64 / 1024.0,
                i.kib_per_session(),
                i.us_per_session_second(),
                i.threads
            ),
            Err(e) => println!("| {who} | n/a: {e} | | | | | | |"),
        }
    }
}

fn print_windows(rows: &[(usize, Throughput)], set: &Settings) {
    println!(
        "\n### In-flight requests: getData of 100 bytes on one session (best of {} rounds of {} s)\n",
        set.timing.rounds, set.timing.secs
    );
    println!(
        "| window | ops/s | x window {} | CPU µs per op | errors |",
        rows[0].0
    );
    println!("|---:|---:|---:|---:|---:|");
    let first = rows[0].1.ops_per_sec();
    for (w, t) in rows {
        println!(
            "| {w} | {:.0} | {:.2} | {:.1} | {} |",
            t.ops_per_sec(),
            t.ops_per_sec() / first,
            t.cpu_us_per_op(),
            t.errors
        );
    }
}

fn print_watches(r: &Result<Watches, String>) {
    println!("\n### Watches on one session across a failover (3-member ensemble)\n");
    println!(
        "| watches | set in (s) | RSS growth (MiB) | KiB per watch | failover (s) | fired after it \
         | all fired in (s) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    match r {
        Ok(w) => println!(
            "| {} | {:.1} | {:.1} | {:.2} | {:.2} | {} | {:.1} |",
            w.watches,
            w.set_time.as_secs_f64(),
            w.rss_growth_kib as f64 / 1024.0,
            w.kib_per_watch(),
            w.failover.as_secs_f64(),
            w.fired,
            w.fire_time.as_secs_f64()
        ),
        Err(e) => println!("| n/a: {e} | | | | | | |"),
    }
}
