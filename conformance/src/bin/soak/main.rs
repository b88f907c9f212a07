//! The fault-injection soak: a real 3-node ZooKeeper ensemble, several client processes using
//! the recipes at once (mutex with fenced writes, leader election with auto-requeue, plain
//! reads and writes), a seeded random schedule of faults (members killed, stopped, paused,
//! connections reset, client processes paused past their session timeout, the quorum lost
//! for a moment), and at the end the invariants checked against the server's own record.
//!
//! ```text
//! cargo run --release -p conformance --bin soak -- --seconds 600 --seed 7 [--clients 4]
//!     [--sessions 2] [--dir DIR] [--keep]
//! ```
//!
//! Prints the fault timeline as it goes, then the figures (faults by kind, operations, lock
//! acquisitions, leader changes, memory) and each invariant with its violations, and the seed.
//! Exit code: 0 when every invariant held, 1 on any violation, 2 when the run itself could
//! not be carried out (no ZooKeeper, bad arguments), 3 when every invariant held on the copy
//! a majority of the members holds but a member's copy differs: a server fault, reported
//! apart from the client invariants (see [`replicas`]). Worker logs are kept (in `--dir`, or a
//! directory under the system temp dir) when something failed or with `--keep`.
//!
//! The same program runs the client processes, started as `soak worker …` (see [`worker`]).
//! See [`invariants`] for what is checked and how; [`snapshot`] for how the server's record
//! is read; [`faults`] for the schedule.
//!
//! Network partitions: where the machine allows it (root, iproute2), the last client process
//! runs in a network namespace of its own, joined to the host by a veth pair, and the servers
//! bind their client ports to 0.0.0.0; a partition takes the link down (see [`netns`]).
//! Elsewhere the partition faults are skipped, and the report says why.

mod faults;
mod figures;
mod invariants;
mod ledger;
mod netns;
mod procs;
mod records;
mod replicas;
mod snapshot;
mod worker;

use std::{
    fs,
    path::PathBuf,
    thread,
    time::{Duration, Instant},
};

use conformance::Ensemble;
use zk_session::{Client, CreateOptions, Error, ErrorCode};

use crate::{
    faults::WorkerView,
    invariants::{Inputs, WorkerResult},
    procs::{spawn_worker, stop_workers, WorkerProc},
    records::{now_us, read_log, Record},
};

pub const LOCKS_DIR: &str = "/soak/locks";
pub const LEDGER_DIR: &str = "/soak/ledger";
pub const ELECTION: &str = "/soak/election";
pub const KV_DIR: &str = "/soak/kv";
/// The leader's ledger (under [`LEDGER_DIR`]), beside the locks' ledgers.
pub const LEADER: &str = "leader";
pub const LOCK_COUNT: usize = 3;

pub fn lock_name(i: usize) -> String {
    format!("lock-{i}")
}

pub fn lock_path(i: usize) -> String {
    format!("{LOCKS_DIR}/{}", lock_name(i))
}

/// The ledger a lock's holders write to through the storage session.
pub fn store_name(lock: &str) -> String {
    format!("store-{lock}")
}

/// Every ledger: each lock's, each lock's store, the leader's.
pub fn ledger_names() -> Vec<String> {
    let mut names: Vec<String> = (0..LOCK_COUNT).map(lock_name).collect();
    names.extend((0..LOCK_COUNT).map(|i| store_name(&lock_name(i))));
    names.push(LEADER.to_owned());
    names
}

pub fn ledger_root(name: &str) -> String {
    format!("{LEDGER_DIR}/{name}")
}

/// The session timeout the workers ask for (tickTime is 200 ms: the server grants 0.4–4 s).
const SESSION_TIMEOUT: Duration = Duration::from_secs(3);

/// How long workers have to exit once told to stop.
const STOP_DEADLINE: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
struct Opts {
    seconds: u64,
    seed: u64,
    clients: usize,
    sessions: usize,
    dir: Option<PathBuf>,
    keep: bool,
}

const USAGE: &str =
    "usage: soak --seconds N --seed S [--clients K] [--sessions M] [--dir DIR] [--keep]
  --seconds N   how long faults are injected (the run takes some more to start and check)
  --seed S      seed of the fault schedule and of the clients' random choices
  --clients K   client processes (default 4)
  --sessions M  ZooKeeper sessions per client process (default 2)
  --dir DIR     where worker logs go (default: a new directory under the temp dir)
  --keep        keep the logs also when every invariant held
exit code: 0 all invariants held, 1 violations, 2 the run could not be carried out,
  3 every invariant held on the quorum's record but the members' copies differ (a server fault)";

fn parse_opts(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        seconds: 0,
        seed: 0,
        clients: 4,
        sessions: 2,
        dir: None,
        keep: false,
    };
    let (mut seconds, mut seed) = (None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--seconds" => seconds = Some(value(a)?.parse().map_err(|e| format!("{a}: {e}"))?),
            "--seed" => seed = Some(value(a)?.parse().map_err(|e| format!("{a}: {e}"))?),
            "--clients" => o.clients = value(a)?.parse().map_err(|e| format!("{a}: {e}"))?,
            "--sessions" => o.sessions = value(a)?.parse().map_err(|e| format!("{a}: {e}"))?,
            "--dir" => o.dir = Some(PathBuf::from(value(a)?)),
            "--keep" => o.keep = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    o.seconds = seconds.ok_or("--seconds is required")?;
    o.seed = seed.ok_or("--seed is required")?;
    if o.clients < 2 || o.sessions < 1 {
        return Err("at least 2 clients and 1 session each".into());
    }
    Ok(o)
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("worker") {
        let Some(args) = worker::Args::parse(&argv[2..]) else {
            eprintln!("soak worker: bad arguments {:?}", &argv[2..]);
            std::process::exit(2);
        };
        std::process::exit(worker::main(args));
    }
    match parse_opts(&argv[1..]) {
        Ok(o) => std::process::exit(drive(o)),
        Err(e) => {
            if !e.is_empty() {
                eprintln!("soak: {e}");
            }
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    }
}

/// The ledger znodes and the register directory (the lock and election paths are made by the
/// recipes, as containers).
async fn setup(hosts: &str) -> Result<(), Error> {
    let c = Client::builder(hosts)
        .session_timeout(Duration::from_secs(20))
        .connect()
        .await?;
    let mut paths = vec!["/soak".to_string(), LEDGER_DIR.into(), KV_DIR.into()];
    paths.extend(ledger_names().iter().map(|n| ledger_root(n)));
    for p in paths {
        match c.create(&p, b"", CreateOptions::persistent()).await {
            Ok(_) | Err(Error::Code(ErrorCode::NodeExists)) => {}
            Err(e) => return Err(e),
        }
    }
    c.close().await
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn drive(o: Opts) -> i32 {
    let dir = o.dir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("soak-{}-{}", o.seed, std::process::id()))
    });
    if let Err(e) = fs::create_dir_all(&dir) {
        eprintln!("soak: cannot create {}: {e}", dir.display());
        return 2;
    }
    println!(
        "soak: seed {}, {} s of faults, {} client processes × {} sessions, session timeout {} ms; \
         logs in {}",
        o.seed,
        o.seconds,
        o.clients,
        o.sessions,
        SESSION_TIMEOUT.as_millis(),
        dir.display()
    );
    let netns = partition_namespace(&o);
    println!("starting a 3-node ZooKeeper ensemble (tickTime 200 ms) …");
    let mut builder = Ensemble::builder().size(3);
    if netns.is_some() {
        builder = builder.client_address(std::net::Ipv4Addr::UNSPECIFIED.into());
    }
    let ens = match builder.start() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("soak: could not start ZooKeeper: {e}");
            return 2;
        }
    };
    let hosts = ens.connect_string();
    println!("ensemble: {hosts}");
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("soak: no runtime: {e}");
            return 2;
        }
    };
    if let Err(e) = rt.block_on(setup(&hosts)) {
        eprintln!("soak: cannot create the soak's znodes: {e}");
        return 2;
    }
    let mut procs = match start_workers(&o, &hosts, &dir, netns.as_ref()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("soak: {e}");
            return 2;
        }
    };
    let t0 = Instant::now();
    let warmup =
        Duration::from_secs(o.seconds / 6).clamp(Duration::from_secs(10), Duration::from_secs(120));
    let warmup_end_us = now_us() + warmup.as_micros() as u64;
    let deadline = t0 + Duration::from_secs(o.seconds);
    println!("clients running; fault timeline:");
    let views: Vec<WorkerView> = procs.iter().map(|p| p.view.clone()).collect();
    let mut early_exits = Vec::new();
    let faults = thread::scope(|sc| {
        let partitioned = netns.as_ref().map(|ns| (o.clients - 1, ns));
        let (ens, views) = (&ens, &views);
        let driver = sc.spawn(move || {
            faults::run(
                ens,
                views,
                partitioned,
                o.seed,
                t0,
                deadline,
                SESSION_TIMEOUT,
            )
        });
        while !driver.is_finished() {
            for p in procs.iter_mut() {
                if p.died.is_none() {
                    if let Ok(Some(st)) = p.child.try_wait() {
                        p.died = Some(st);
                        let note = format!(
                            "worker {} died during the run ({st}): {}",
                            p.id,
                            p.stderr_tail()
                        );
                        println!("  +{:>7.1}s  {note}", t0.elapsed().as_secs_f64());
                        early_exits.push(note);
                    }
                }
            }
            thread::sleep(Duration::from_millis(200));
        }
        driver.join()
    });
    let faults = match faults {
        Ok(f) => f,
        Err(_) => {
            eprintln!("soak: the fault driver panicked");
            return 2;
        }
    };
    println!(
        "  +{:>7.1}s  faults over; the clients run on for 3 s, then are told to stop",
        t0.elapsed().as_secs_f64()
    );
    thread::sleep(Duration::from_secs(3));
    let stops = stop_workers(&mut procs);
    let elapsed = t0.elapsed();
    println!("checking the server's record …");
    let snap = rt.block_on(snapshot::snapshot(&ens, SESSION_TIMEOUT));
    let results = worker_results(&procs, stops);
    let report = invariants::check(
        &Inputs {
            seed: o.seed,
            seconds: o.seconds,
            clients: o.clients,
            sessions: o.sessions,
            session_timeout: SESSION_TIMEOUT,
            elapsed,
            faults: &faults,
            workers: &results,
            early_exits: &early_exits,
            warmup_end_us,
        },
        &snap,
    );
    conclude(&o, &dir, &ens, &report, procs)
}

/// Prints the report and the seed, keeps the servers' files and the logs when something
/// failed; the exit code.
fn conclude(
    o: &Opts,
    dir: &std::path::Path,
    ens: &Ensemble,
    report: &invariants::Report,
    procs: Vec<WorkerProc>,
) -> i32 {
    report.print();
    let n = report.violations();
    let diverged = report.server_faults.len();
    println!("\ninvariant violations: {n}");
    if diverged > 0 {
        println!("server faults (members' copies differ): {diverged}");
    }
    println!(
        "seed: {} (replay: cargo run --release -p conformance --bin soak -- --seconds {} \
         --seed {} --clients {} --sessions {})",
        o.seed, o.seconds, o.seed, o.clients, o.sessions
    );
    drop(procs);
    let failed = n > 0 || diverged > 0;
    if failed {
        // The servers' side of the story: zoo.cfg, server.log, transaction logs, snapshots.
        for i in 0..ens.len() {
            let to = dir.join(format!("server-{i}"));
            if let Err(e) = copy_dir(ens.server(i).dir(), &to) {
                eprintln!("soak: cannot keep the files of member {i}: {e}");
            }
        }
        println!("server files kept beside the worker logs (server-N/)");
    }
    if !failed && !o.keep && o.dir.is_none() {
        let _ = fs::remove_dir_all(dir);
    } else {
        println!("worker logs: {}", dir.display());
    }
    exit_code(n, diverged)
}

/// The partitioned client lives in its own network namespace; without one (not root, no
/// iproute2) every client shares the host's and partition faults are skipped.
fn partition_namespace(o: &Opts) -> Option<netns::Netns> {
    match netns::Netns::create(std::process::id()) {
        Ok(ns) => {
            println!(
                "network partitions: worker {} runs in network namespace {} (servers reached \
                 at {})",
                o.clients - 1,
                ns.name(),
                ns.host_addr
            );
            Some(ns)
        }
        Err(e) => {
            println!("network partitions: not available here ({e}); those faults are skipped");
            None
        }
    }
}

/// Starts the client processes (the last in the partition namespace, if any) and waits up to
/// a minute for each to say it is ready.
fn start_workers(
    o: &Opts,
    hosts: &str,
    dir: &std::path::Path,
    netns: Option<&netns::Netns>,
) -> Result<Vec<WorkerProc>, String> {
    let mut procs = Vec::new();
    for id in 0..o.clients {
        let ns = netns.filter(|_| id == o.clients - 1);
        let hosts = match ns {
            Some(ns) => hosts.replace("127.0.0.1", &ns.host_addr.to_string()),
            None => hosts.to_owned(),
        };
        procs.push(spawn_worker(o, id, &hosts, dir, ns)?);
    }
    let ready_by = Instant::now() + Duration::from_secs(60);
    while Instant::now() < ready_by && procs.iter().any(|p| !p.view.state().ready) {
        thread::sleep(Duration::from_millis(100));
    }
    Ok(procs)
}

/// Each worker's log read back, with how it stopped.
fn worker_results(procs: &[WorkerProc], stops: Vec<(bool, String, f64)>) -> Vec<WorkerResult> {
    let mut results = Vec::new();
    for (p, (clean, note, secs)) in procs.iter().zip(stops) {
        let (records, bad_lines, note) = match read_log(&p.log) {
            Ok((r, bad)) => (r, bad, note),
            Err(e) => (Vec::new(), 0, format!("{note}; log unreadable: {e}")),
        };
        let finished = records.iter().any(|r| matches!(r, Record::Exit { .. }));
        results.push(WorkerResult {
            id: p.id,
            clean_exit: clean && finished,
            exit_note: if clean && !finished {
                "exited without finishing its log".into()
            } else {
                note
            },
            records,
            bad_lines,
            stop_secs: secs,
        });
    }
    results
}

/// 1 for a client invariant violated, 3 for members that disagree while every client
/// invariant held on the quorum's copy, 0 for neither.
fn exit_code(violations: usize, server_faults: usize) -> i32 {
    match (violations, server_faults) {
        (0, 0) => 0,
        (0, _) => 3,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::exit_code;

    #[test]
    fn a_server_fault_alone_exits_3_and_a_client_violation_always_1() {
        assert_eq!(exit_code(0, 0), 0);
        assert_eq!(exit_code(0, 2), 3);
        assert_eq!(exit_code(1, 0), 1);
        assert_eq!(exit_code(4, 1), 1);
    }
}
