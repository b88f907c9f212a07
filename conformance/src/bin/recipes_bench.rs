//! Recipes benchmark: zk-recipes' Mutex and LeaderSelector beside Curator's InterProcessMutex
//! and LeaderSelector and kazoo's Lock, on one standalone server, in one run.
//!
//! ```sh
//! cargo run --release -p conformance --bin recipes_bench
//! cargo run --release -p conformance --bin recipes_bench -- --secs 2 --rounds 1 --only ours
//! ```
//!
//! Mutex, with 1, 4 and 16 contenders on one lock path (a session each): every contender
//! loops acquire → (empty critical section) → release. After a warm-up, the acquisitions of
//! `--secs` seconds are counted, and every measured acquisition that follows a release gives
//! one handoff latency: from the moment the previous holder calls release to the moment this
//! acquire returns (with one contender, its own previous release). All contenders of one
//! client live in one process and take their time stamps from one monotonic clock
//! (`CLOCK_MONOTONIC`: `Instant` here, `System.nanoTime()` in the JVM, `time.monotonic_ns()`
//! in Python), so release and acquire stamps of different contenders compare directly:
//! - **ours**: `zk_recipes::Mutex`, one `zk_session::Client` per contender, as tasks on a
//!   multi-threaded tokio runtime (one worker per core);
//! - **Curator**: `conformance/java/CuratorLockBench.java` (InterProcessMutex, one
//!   CuratorFramework and thread per contender), compiled here with `javac` against Debian's
//!   jars; one JVM per contender count and round, with an extra JIT warm-up;
//! - **kazoo**: `conformance/python/kazoo_lock_bench.py` (Lock with its default node names,
//!   one KazooClient and thread per contender).
//!
//! Every contender also flags the critical section, so two holders at once would show as a
//! violation. Each workload also counts the requests the server received (its `srvr`
//! "Received:" before the first connect and after the last close) per acquisition.
//!
//! Leader failover: 3 participants with auto-requeue on one election path; each leader's task
//! holds for `--hold-ms` and returns. A failover is the time from a task's return to the next
//! leader's task starting; the first `--skip-terms` are warm-up, the next `--terms` are
//! measured. Ours is `zk_recipes::leader_selector::LeaderSelector`, Curator's its
//! `LeaderSelector` (threads in the JVM of its 16-contender lock run).
//!
//! `--rounds` rounds (default 2): per contender count, ours, Curator and kazoo one after the
//! other, in the opposite order in odd rounds, so that each row is measured close together in
//! time. The table shows each client's best round (load from other processes only ever slows
//! a run down), and the figures of every round below it. Medians and p99 are computed here
//! (nearest rank) from the raw samples each client prints, the same way for all.
//!
//! Targets (printed, not asserted): ours at least 1.2× Curator's and kazoo's acquisitions per
//! second, and a lower median handoff than each. Anything that cannot run shows as n/a with
//! the reason. The default run takes about two and a half minutes.

use std::{
    env, fmt, fs,
    net::SocketAddr,
    path::Path,
    sync::{
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
        Arc, Mutex as StdMutex,
    },
    thread,
    time::{Duration, Instant},
};

use conformance::{
    peers::{self, run_child, JavaProgram, KazooProgram},
    Standalone,
};
use zk_recipes::{leader_selector::LeaderSelector, Mutex};
use zk_session::{Client, CreateOptions};

const CURATOR_SOURCE: &str = include_str!("../../java/CuratorLockBench.java");
const KAZOO_SOURCE: &str = include_str!("../../python/kazoo_lock_bench.py");

const SESSION_TIMEOUT: Duration = Duration::from_secs(30);
/// Stands for "no release yet" in the shared last-release stamp.
const NONE: u64 = u64::MAX;

// ----- settings -----

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Peer {
    Ours,
    Curator,
    Kazoo,
}

impl Peer {
    const ALL: [Peer; 3] = [Peer::Ours, Peer::Curator, Peer::Kazoo];

    fn name(self) -> &'static str {
        match self {
            Peer::Ours => "ours",
            Peer::Curator => "curator",
            Peer::Kazoo => "kazoo",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Peer::Ours => "ours",
            Peer::Curator => "Curator",
            Peer::Kazoo => "kazoo",
        }
    }
}

#[derive(Debug, Clone)]
struct Settings {
    /// Measured seconds per lock workload.
    secs: f64,
    /// Unmeasured seconds before each lock workload.
    warmup: f64,
    /// Extra unmeasured seconds for the JVM's JIT, in each JVM's first workload.
    jit_warmup: f64,
    contenders: Vec<usize>,
    participants: usize,
    /// Measured failovers.
    terms: usize,
    /// Failovers left out before them.
    skip_terms: usize,
    hold_ms: u64,
    /// Rounds of every workload; the table shows each client's best.
    rounds: usize,
    peers: Vec<Peer>,
    /// Print every election term to stderr.
    verbose: bool,
}

impl Settings {
    fn from_args() -> Result<Settings, String> {
        let mut s = Settings {
            secs: 4.0,
            warmup: 1.5,
            jit_warmup: 2.5,
            contenders: vec![1, 4, 16],
            participants: 3,
            terms: 20,
            skip_terms: 2,
            hold_ms: 100,
            rounds: 2,
            peers: Peer::ALL.to_vec(),
            verbose: false,
        };
        let mut args = env::args().skip(1);
        while let Some(a) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
            let float = |v: String| v.parse::<f64>().map_err(|e| format!("{v}: {e}"));
            let int = |v: &str| v.parse::<usize>().map_err(|e| format!("{v}: {e}"));
            match a.as_str() {
                "--secs" => s.secs = float(value()?)?,
                "--warmup" => s.warmup = float(value()?)?,
                "--jit-warmup" => s.jit_warmup = float(value()?)?,
                "--contenders" => {
                    s.contenders = value()?
                        .split(',')
                        .map(|v| int(v).map(|n| n.max(1)))
                        .collect::<Result<_, _>>()?
                }
                "--participants" => s.participants = int(&value()?)?.max(2),
                "--terms" => s.terms = int(&value()?)?.max(1),
                "--skip-terms" => s.skip_terms = int(&value()?)?,
                "--hold-ms" => s.hold_ms = int(&value()?)? as u64,
                "--rounds" => s.rounds = int(&value()?)?.max(1),
                "--only" => {
                    s.peers = value()?
                        .split(',')
                        .map(|p| {
                            Peer::ALL
                                .into_iter()
                                .find(|x| x.name() == p)
                                .ok_or_else(|| format!("unknown client {p}"))
                        })
                        .collect::<Result<_, _>>()?
                }
                "--verbose" => s.verbose = true,
                "-h" | "--help" => {
                    return Err(
                        "usage: recipes_bench [--secs S] [--warmup S] [--jit-warmup S] \
                         [--contenders 1,4,16] [--participants N] [--terms N] \
                         [--skip-terms N] [--hold-ms MS] [--rounds N] [--only ours,curator,kazoo] [--verbose]"
                            .to_owned(),
                    )
                }
                other => return Err(format!("unknown argument {other}")),
            }
        }
        Ok(s)
    }

    /// Terms each election must start: the skipped and measured failovers need one more.
    fn election_terms(&self) -> usize {
        self.skip_terms + self.terms + 1
    }
}

// ----- results -----

/// One lock workload of one client.
#[derive(Debug, Clone, Default)]
struct LockRun {
    acquisitions: u64,
    elapsed: Duration,
    /// Acquisitions from the first to the last, warm-up included.
    total: u64,
    /// Requests the server received while the workload ran (sessions, warm-up and all), when
    /// known.
    requests: Option<u64>,
    /// Handoff latencies in ns, sorted.
    handoffs: Vec<u64>,
    violations: u64,
    errors: u64,
}

impl LockRun {
    fn per_sec(&self) -> f64 {
        self.acquisitions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn requests_per_acquisition(&self) -> Option<f64> {
        Some(self.requests? as f64 / self.total.max(1) as f64)
    }
}

/// The server's count of received packets (requests, pings and handshakes), from `srvr`.
fn server_received(addr: SocketAddr) -> Option<u64> {
    let srvr = conformance::four_letter_word(addr, "srvr", Duration::from_secs(10)).ok()?;
    srvr.lines()
        .find_map(|l| l.strip_prefix("Received:"))?
        .trim()
        .parse()
        .ok()
}

/// Runs `workload`, and counts the requests the server received meanwhile into its result.
fn counting(addr: SocketAddr, workload: impl FnOnce() -> LockOutcome) -> LockOutcome {
    let before = server_received(addr);
    let mut run = workload()?;
    run.requests = match (before, server_received(addr)) {
        (Some(b), Some(a)) => Some(a.saturating_sub(b)),
        _ => None,
    };
    Ok(run)
}

/// Failover latencies in ns (sorted), and terms that overlapped.
#[derive(Debug, Clone, Default)]
struct ElectRun {
    failovers: Vec<u64>,
    overlaps: usize,
}

type LockOutcome = Result<LockRun, String>;
type ElectOutcome = Result<ElectRun, String>;

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Failovers from terms given as start and exit stamps (any order; terms never overlap, so
/// the k-th start and the k-th exit belong to one term). Only the first
/// [`Settings::election_terms`] starts count: later ones may follow a leader closed at the end
/// rather than one that returned. With `--verbose`, prints every term to stderr.
fn failovers(who: &str, mut starts: Vec<u64>, mut exits: Vec<u64>, set: &Settings) -> ElectRun {
    starts.sort_unstable();
    exits.sort_unstable();
    let mut run = ElectRun::default();
    for k in 0..(set.skip_terms + set.terms) {
        let (Some(&exit), Some(&next)) = (exits.get(k), starts.get(k + 1)) else {
            break;
        };
        if set.verbose {
            eprintln!(
                "{who} term {k}: {:.3} ms held, next leader after {:.3} ms{}",
                exit.saturating_sub(starts[k]) as f64 / 1e6,
                (next as f64 - exit as f64) / 1e6,
                if k < set.skip_terms {
                    " (unmeasured)"
                } else {
                    ""
                }
            );
        }
        if k < set.skip_terms {
            continue;
        }
        if next < exit {
            run.overlaps += 1;
        } else {
            run.failovers.push(next - exit);
        }
    }
    run.failovers.sort_unstable();
    run
}

// ----- ours -----

async fn connect(connect: &str) -> Result<Client, String> {
    Client::builder(connect)
        .session_timeout(SESSION_TIMEOUT)
        .connect()
        .await
        .map_err(|e| format!("connect: {e}"))
}

async fn connect_all(connect_string: &str, n: usize) -> Result<Vec<Client>, String> {
    let mut clients = Vec::with_capacity(n);
    for _ in 0..n {
        clients.push(connect(connect_string).await?);
    }
    Ok(clients)
}

async fn close_all(clients: Vec<Client>) {
    for c in clients {
        let _ = c.close().await;
    }
}

/// What the contenders of one lock workload share.
struct Shared {
    origin: Instant,
    stop: AtomicBool,
    measuring: AtomicBool,
    inside: AtomicBool,
    last_release: AtomicU64,
    acquisitions: AtomicU64,
    total: AtomicU64,
    violations: AtomicU64,
    errors: AtomicU64,
    samples: StdMutex<Vec<u64>>,
}

impl Shared {
    fn now(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }
}

async fn contend(mutex: Mutex, shared: Arc<Shared>) {
    let mut samples = Vec::new();
    let mut acquired = 0;
    let mut total = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        let guard = match mutex.acquire().await {
            Ok(g) => g,
            Err(_) => {
                shared.errors.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let now = shared.now();
        total += 1;
        let previous = shared.last_release.load(Ordering::SeqCst);
        if shared.inside.swap(true, Ordering::SeqCst) {
            shared.violations.fetch_add(1, Ordering::Relaxed);
        }
        if shared.measuring.load(Ordering::Relaxed) {
            acquired += 1;
            if previous != NONE {
                samples.push(now.saturating_sub(previous));
            }
        }
        shared.inside.store(false, Ordering::SeqCst);
        shared.last_release.store(shared.now(), Ordering::SeqCst);
        if guard.release().await.is_err() {
            shared.errors.fetch_add(1, Ordering::Relaxed);
        }
    }
    shared.acquisitions.fetch_add(acquired, Ordering::Relaxed);
    shared.total.fetch_add(total, Ordering::Relaxed);
    shared
        .samples
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(samples);
}

async fn ours_lock(
    connect_string: &str,
    path: &str,
    n: usize,
    warmup: f64,
    secs: f64,
) -> LockOutcome {
    let clients = connect_all(connect_string, n).await?;
    let shared = Arc::new(Shared {
        origin: Instant::now(),
        stop: AtomicBool::new(false),
        measuring: AtomicBool::new(false),
        inside: AtomicBool::new(false),
        last_release: AtomicU64::new(NONE),
        acquisitions: AtomicU64::new(0),
        total: AtomicU64::new(0),
        violations: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        samples: StdMutex::new(Vec::new()),
    });
    let tasks: Vec<_> = clients
        .iter()
        .map(|c| tokio::spawn(contend(Mutex::new(c.clone(), path), shared.clone())))
        .collect();
    tokio::time::sleep(Duration::from_secs_f64(warmup)).await;
    let t0 = Instant::now();
    shared.measuring.store(true, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    shared.measuring.store(false, Ordering::Relaxed);
    let elapsed = t0.elapsed();
    shared.stop.store(true, Ordering::Relaxed);
    let mut stuck = 0;
    for t in tasks {
        if tokio::time::timeout(Duration::from_secs(30), t)
            .await
            .is_err()
        {
            stuck += 1;
        }
    }
    close_all(clients).await;
    if stuck > 0 {
        return Err(format!("{stuck} contenders did not stop"));
    }
    let mut handoffs =
        std::mem::take(&mut *shared.samples.lock().unwrap_or_else(|e| e.into_inner()));
    handoffs.sort_unstable();
    Ok(LockRun {
        acquisitions: shared.acquisitions.load(Ordering::Relaxed),
        elapsed,
        total: shared.total.load(Ordering::Relaxed),
        requests: None,
        handoffs,
        violations: shared.violations.load(Ordering::Relaxed),
        errors: shared.errors.load(Ordering::Relaxed),
    })
}

async fn ours_elect(connect_string: &str, path: &str, set: &Settings) -> ElectOutcome {
    let clients = connect_all(connect_string, set.participants).await?;
    let origin = Instant::now();
    let starts = Arc::new(StdMutex::new(Vec::new()));
    let exits = Arc::new(StdMutex::new(Vec::new()));
    let started = Arc::new(AtomicUsize::new(0));
    let enough = Arc::new(tokio::sync::Notify::new());
    let want = set.election_terms();
    let hold = Duration::from_millis(set.hold_ms);
    let selectors: Vec<LeaderSelector> = clients
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (starts, exits, started, enough) = (
                starts.clone(),
                exits.clone(),
                started.clone(),
                enough.clone(),
            );
            LeaderSelector::builder(c.clone(), path, move |_lead| {
                let (starts, exits, started, enough) = (
                    starts.clone(),
                    exits.clone(),
                    started.clone(),
                    enough.clone(),
                );
                async move {
                    let start = origin.elapsed().as_nanos() as u64;
                    starts.lock().unwrap_or_else(|e| e.into_inner()).push(start);
                    if started.fetch_add(1, Ordering::SeqCst) + 1 >= want {
                        enough.notify_one();
                    }
                    tokio::time::sleep(hold).await;
                    let exit = origin.elapsed().as_nanos() as u64;
                    exits.lock().unwrap_or_else(|e| e.into_inner()).push(exit);
                }
            })
            .id(format!("ours-{i}"))
            .auto_requeue(true)
            .start()
        })
        .collect();
    let limit = Duration::from_secs(30) + (hold + Duration::from_secs(1)) * want as u32;
    let finished = tokio::time::timeout(limit, enough.notified()).await.is_ok();
    for s in &selectors {
        s.close().await;
    }
    drop(selectors);
    close_all(clients).await;
    let starts = std::mem::take(&mut *starts.lock().unwrap_or_else(|e| e.into_inner()));
    let exits = std::mem::take(&mut *exits.lock().unwrap_or_else(|e| e.into_inner()));
    if !finished {
        return Err(format!(
            "only {} of {want} terms in {limit:?}",
            starts.len()
        ));
    }
    Ok(failovers("ours", starts, exits, set))
}

// ----- peers in other processes -----

/// What a peer printed: lock runs by contender count, the election, and error lines.
#[derive(Debug, Default)]
struct PeerOutput {
    locks: Vec<(usize, LockRun)>,
    starts: Option<Vec<u64>>,
    exits: Option<Vec<u64>>,
    errors: Vec<String>,
}

impl PeerOutput {
    fn parse(stdout: &str) -> PeerOutput {
        let mut out = PeerOutput::default();
        let mut handoffs: Vec<(usize, Vec<u64>)> = Vec::new();
        for line in stdout.lines() {
            let mut f = line.split_whitespace();
            let tag = f.next().unwrap_or_default();
            let nums = |f: std::str::SplitWhitespace<'_>| -> Vec<u64> {
                f.filter_map(|v| v.parse::<i64>().ok())
                    .map(|v| v.max(0) as u64)
                    .collect()
            };
            match tag {
                "LOCK" => {
                    let v: Vec<i64> = f.filter_map(|v| v.parse().ok()).collect();
                    let u = |x: i64| x.max(0) as u64;
                    if let [n, acq, ns, violations, errors, total, requests] = v[..] {
                        out.locks.push((
                            n as usize,
                            LockRun {
                                acquisitions: u(acq),
                                elapsed: Duration::from_nanos(u(ns)),
                                total: u(total),
                                requests: (requests >= 0).then_some(requests as u64),
                                handoffs: Vec::new(),
                                violations: u(violations),
                                errors: u(errors),
                            },
                        ));
                    }
                }
                "HANDOFF" => {
                    let v = nums(f);
                    if let Some((&n, rest)) = v.split_first() {
                        handoffs.push((n as usize, rest.to_vec()));
                    }
                }
                "STARTS" => out.starts = Some(nums(f).into_iter().skip(1).collect()),
                "EXITS" => out.exits = Some(nums(f).into_iter().skip(1).collect()),
                "ERROR" => out.errors.push(line["ERROR".len()..].trim().to_owned()),
                _ => {}
            }
        }
        for (n, mut h) in handoffs {
            h.sort_unstable();
            if let Some((_, run)) = out.locks.iter_mut().find(|(m, _)| *m == n) {
                run.handoffs = h;
            }
        }
        out
    }

    /// The failovers of the election workload, or why there are none.
    fn election(&self, set: &Settings) -> ElectOutcome {
        if let Some(e) = self.errors.iter().find(|e| e.starts_with("elect")) {
            return Err(e.clone());
        }
        match (&self.starts, &self.exits) {
            (Some(s), Some(e)) => Ok(failovers("curator", s.clone(), e.clone(), set)),
            _ => Err(self
                .errors
                .last()
                .cloned()
                .unwrap_or_else(|| "no result line".to_owned())),
        }
    }

    fn lock(&self, n: usize) -> LockOutcome {
        match self.locks.iter().find(|(m, _)| *m == n) {
            Some((_, run)) => Ok(run.clone()),
            None => Err(self
                .errors
                .first()
                .cloned()
                .unwrap_or_else(|| "no result line".to_owned())),
        }
    }
}

/// The Curator program, compiled once.
struct Curator(JavaProgram);

impl Curator {
    fn compile(tmp: &Path) -> Result<Curator, String> {
        let src = peers::write_file(tmp, "CuratorLockBench.java", CURATOR_SOURCE)?;
        JavaProgram::compile(&src, tmp, peers::CURATOR_JARS, "libcurator-recipes-java").map(Curator)
    }

    /// One JVM for `workloads`; the first lock workload gets the JIT warm-up.
    fn run(&self, connect: &str, base: &str, set: &Settings, workloads: &[String]) -> PeerOutput {
        let mut cmd = self.0.command();
        cmd.arg(connect)
            .arg(base)
            .arg(set.warmup.to_string())
            .arg(set.secs.to_string())
            .arg(set.jit_warmup.to_string())
            .args(workloads);
        let limit = Duration::from_secs_f64(
            90.0 + set.jit_warmup
                + (set.warmup + set.secs) * workloads.len() as f64
                + (set.hold_ms as f64 / 1000.0 + 1.0) * set.election_terms() as f64,
        );
        match run_child(&mut cmd, limit) {
            Ok(out) => PeerOutput::parse(&out),
            Err(e) => PeerOutput {
                errors: vec![format!("Curator program: {e}")],
                ..PeerOutput::default()
            },
        }
    }
}

/// The kazoo program, once kazoo imports.
struct Kazoo(KazooProgram);

impl Kazoo {
    fn prepare(tmp: &Path) -> Result<Kazoo, String> {
        let script = peers::write_file(tmp, "kazoo_lock_bench.py", KAZOO_SOURCE)?;
        KazooProgram::prepare(script).map(Kazoo)
    }

    fn run(&self, connect: &str, base: &str, set: &Settings, n: usize) -> LockOutcome {
        let mut cmd = self.0.command();
        cmd.arg(connect)
            .arg(base)
            .arg(set.warmup.to_string())
            .arg(set.secs.to_string())
            .arg(format!("lock:{n}"));
        let limit = Duration::from_secs_f64(90.0 + set.warmup + set.secs);
        let out = run_child(&mut cmd, limit).map_err(|e| format!("kazoo program: {e}"))?;
        PeerOutput::parse(&out).lock(n)
    }
}

// ----- report -----

fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_owned())
}

fn ms(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms < 10.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.1}")
    }
}

/// `median / p99` in ms.
struct Latency<'a>(&'a [u64]);

impl fmt::Display for Latency<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (percentile(self.0, 50.0), percentile(self.0, 99.0)) {
            (Some(p50), Some(p99)) => write!(f, "{} / {}", ms(p50), ms(p99)),
            _ => f.write_str("n/a"),
        }
    }
}

fn rate(o: &LockOutcome) -> String {
    o.as_ref()
        .map_or_else(|_| "n/a".to_owned(), |r| format!("{:.0}", r.per_sec()))
}

fn latency(o: &LockOutcome) -> String {
    o.as_ref()
        .map_or_else(|_| "n/a".to_owned(), |r| Latency(&r.handoffs).to_string())
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

fn show(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}×"))
}

fn verdict(r: Option<f64>, met: impl Fn(f64) -> bool) -> String {
    match r {
        Some(r) if met(r) => format!("met ({r:.2}×)"),
        Some(r) => format!("not met ({r:.2}×)"),
        None => "n/a".to_owned(),
    }
}

fn per_sec(o: &LockOutcome) -> Option<f64> {
    o.as_ref().ok().map(LockRun::per_sec)
}

fn median(o: &LockOutcome) -> Option<f64> {
    o.as_ref()
        .ok()
        .and_then(|r| percentile(&r.handoffs, 50.0))
        .map(|v| v as f64)
}

/// Every round's outcome.
struct Results {
    /// Per contender count, for ours, Curator and kazoo.
    locks: Vec<(usize, [Vec<LockOutcome>; 3])>,
    /// Ours and Curator's.
    elect: [Vec<ElectOutcome>; 2],
}

/// The round with the most acquisitions per second, else the first failure.
fn best_lock(runs: &[LockOutcome]) -> LockOutcome {
    runs.iter()
        .filter_map(|r| r.as_ref().ok())
        .max_by(|a, b| a.per_sec().total_cmp(&b.per_sec()))
        .cloned()
        .map_or_else(
            || {
                Err(runs
                    .iter()
                    .find_map(|r| r.clone().err())
                    .unwrap_or_default())
            },
            Ok,
        )
}

/// The round with the lowest median failover, else the first failure.
fn best_elect(runs: &[ElectOutcome]) -> ElectOutcome {
    runs.iter()
        .filter_map(|r| r.as_ref().ok())
        .filter(|r| !r.failovers.is_empty())
        .min_by_key(|r| percentile(&r.failovers, 50.0))
        .cloned()
        .map_or_else(
            || {
                Err(runs
                    .iter()
                    .find_map(|r| r.clone().err())
                    .unwrap_or_else(|| "no failover measured".to_owned()))
            },
            Ok,
        )
}

fn report(all: &Results, set: &Settings) {
    let res = Best {
        locks: all
            .locks
            .iter()
            .map(|(n, runs)| (*n, [0, 1, 2].map(|p| best_lock(&runs[p]))))
            .collect(),
        elect: [0, 1].map(|p| best_elect(&all.elect[p])),
    };
    println!();
    println!(
        "Mutex: acquisitions per second over {} s (best of {} rounds), and handoff latency in \
         that round (release called → next holder's acquire returns), median / p99 in ms:",
        set.secs, set.rounds
    );
    println!();
    println!(
        "| contenders | ours acq/s | Curator acq/s | kazoo acq/s | ours/Curator | ours/kazoo \
         | ours handoff | Curator handoff | kazoo handoff | handoff ours/Curator \
         | handoff ours/kazoo |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (n, [ours, curator, kazoo]) in &res.locks {
        println!(
            "| {n} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            rate(ours),
            rate(curator),
            rate(kazoo),
            show(ratio(per_sec(ours), per_sec(curator))),
            show(ratio(per_sec(ours), per_sec(kazoo))),
            latency(ours),
            latency(curator),
            latency(kazoo),
            show(ratio(median(ours), median(curator))),
            show(ratio(median(ours), median(kazoo))),
        );
    }

    println!();
    println!(
        "Every round, acq/s (handoff median ms), and server requests per acquisition (all the \
         server received during the workload, sessions and warm-up included, over all \
         acquisitions):"
    );
    println!();
    println!("| contenders | client | rounds | requests/acq |");
    println!("|---:|---|---|---:|");
    for (n, runs) in &all.locks {
        for p in Peer::ALL {
            let rounds: Vec<String> = runs[p as usize]
                .iter()
                .map(|o| match o {
                    Ok(r) => format!(
                        "{} ({})",
                        rate(o),
                        percentile(&r.handoffs, 50.0).map_or_else(|| "n/a".to_owned(), ms)
                    ),
                    Err(_) => "n/a".to_owned(),
                })
                .collect();
            let requests = best_lock(&runs[p as usize])
                .ok()
                .and_then(|r| r.requests_per_acquisition())
                .map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}"));
            println!(
                "| {n} | {} | {} | {requests} |",
                p.label(),
                rounds.join(", ")
            );
        }
    }

    let [ours_e, curator_e] = &res.elect;
    let fo = |o: &ElectOutcome, p: f64| {
        o.as_ref()
            .ok()
            .and_then(|r| percentile(&r.failovers, p))
            .map(|v| v as f64)
    };
    let cell =
        |o: &ElectOutcome, p: f64| fo(o, p).map_or_else(|| "n/a".to_owned(), |v| ms(v as u64));
    println!();
    println!(
        "Leader failover ({} participants, auto-requeue; the leader's task returns after {} ms; \
         time to the next leader's task starting; {} failovers after {} unmeasured, the round \
         with the lower median of {}), ms:",
        set.participants, set.hold_ms, set.terms, set.skip_terms, set.rounds
    );
    println!();
    println!("| | ours | Curator | ours/Curator |");
    println!("|---|---:|---:|---:|");
    for (label, p) in [("median", 50.0), ("p99", 99.0)] {
        println!(
            "| {label} | {} | {} | {} |",
            cell(ours_e, p),
            cell(curator_e, p),
            show(ratio(fo(ours_e, p), fo(curator_e, p)))
        );
    }
    let medians = |runs: &[ElectOutcome]| -> String {
        runs.iter()
            .map(|o| {
                o.as_ref()
                    .ok()
                    .and_then(|r| percentile(&r.failovers, 50.0))
                    .map_or_else(|| "n/a".to_owned(), ms)
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "| median, every round | {} | {} | |",
        medians(&all.elect[0]),
        medians(&all.elect[1])
    );

    println!();
    println!("Targets (printed, not asserted):");
    println!();
    println!(
        "| contenders | acq/s ≥ 1.2× Curator | acq/s ≥ 1.2× kazoo | median handoff < Curator \
         | median handoff < kazoo |"
    );
    println!("|---:|---|---|---|---|");
    for (n, [ours, curator, kazoo]) in &res.locks {
        println!(
            "| {n} | {} | {} | {} | {} |",
            verdict(ratio(per_sec(ours), per_sec(curator)), |r| r >= 1.2),
            verdict(ratio(per_sec(ours), per_sec(kazoo)), |r| r >= 1.2),
            verdict(ratio(median(ours), median(curator)), |r| r < 1.0),
            verdict(ratio(median(ours), median(kazoo)), |r| r < 1.0),
        );
    }
    println!(
        "| failover (not a target) | | | {} | |",
        verdict(ratio(fo(ours_e, 50.0), fo(curator_e, 50.0)), |r| r < 1.0)
    );

    // Anything missing, and anything suspect in any round.
    let mut notes: Vec<String> = Vec::new();
    let mut note = |s: String| {
        if !notes.contains(&s) {
            notes.push(s);
        }
    };
    for (n, runs) in &all.locks {
        for p in Peer::ALL {
            for o in &runs[p as usize] {
                match o {
                    Err(e) => note(format!("{} mutex n/a: {e}", p.label())),
                    Ok(r) if r.violations > 0 => note(format!(
                        "{} {n} contenders: {} times two holders at once",
                        p.label(),
                        r.violations
                    )),
                    Ok(r) if r.errors > 0 => note(format!(
                        "{} {n} contenders: {} failed acquires or releases",
                        p.label(),
                        r.errors
                    )),
                    Ok(_) => {}
                }
            }
        }
    }
    for (p, runs) in [Peer::Ours, Peer::Curator].into_iter().zip(&all.elect) {
        for o in runs {
            match o {
                Err(e) => note(format!("{} election n/a: {e}", p.label())),
                Ok(r) if r.overlaps > 0 => note(format!(
                    "{} election: {} terms began before the previous one ended",
                    p.label(),
                    r.overlaps
                )),
                Ok(r) if r.failovers.len() < set.terms => note(format!(
                    "{} election: only {} failovers measured",
                    p.label(),
                    r.failovers.len()
                )),
                Ok(_) => {}
            }
        }
    }
    if !notes.is_empty() {
        println!();
        for n in notes {
            println!("- {n}");
        }
    }
}

/// The best round of each.
struct Best {
    locks: Vec<(usize, [LockOutcome; 3])>,
    elect: [ElectOutcome; 2],
}

// ----- main -----

fn main() {
    let set = match Settings::from_args() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let started = Instant::now();
    let load_before = load_average();
    eprintln!("starting a standalone ZooKeeper server…");
    let zk = match Standalone::builder()
        .max_session_timeout(SESSION_TIMEOUT)
        .start()
    {
        Ok(zk) => zk,
        Err(e) => {
            eprintln!("cannot start ZooKeeper: {e}");
            std::process::exit(1);
        }
    };
    let connect = zk.connect_string();
    let addr = zk.client_addr();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let base = format!("/recipes-bench-{}", std::process::id());
    let setup = rt.block_on(async {
        let c = connect_all(&connect, 1).await?;
        c[0].create(&base, b"", &CreateOptions::persistent())
            .await
            .map_err(|e| format!("create: {e}"))?;
        close_all(c).await;
        Ok::<(), String>(())
    });
    if let Err(e) = setup {
        eprintln!("setting up {base}: {e}");
        std::process::exit(1);
    }
    let tmp = peers::process_dir(&env::temp_dir(), "recipes-bench");
    let want = |p: Peer| set.peers.contains(&p);

    let curator = if want(Peer::Curator) {
        eprintln!("compiling the Curator program…");
        Curator::compile(&tmp)
    } else {
        Err("not selected (--only)".to_owned())
    };
    let kazoo = if want(Peer::Kazoo) {
        Kazoo::prepare(&tmp)
    } else {
        Err("not selected (--only)".to_owned())
    };

    // The server's JIT warms up on a few seconds of contention, unmeasured.
    eprintln!("warming up the server…");
    let warm = format!("{base}/ours/warm-up");
    if let Err(e) = rt.block_on(ours_lock(&connect, &warm, 4, 2.0, 0.5)) {
        eprintln!("server warm-up: {e}");
    }

    // Per round and contender count, the three clients one after the other (in the opposite
    // order in odd rounds), so that each row's figures are taken close together in time.
    let mut lock_runs: Vec<(usize, [Vec<LockOutcome>; 3])> = set
        .contenders
        .iter()
        .map(|&n| (n, Default::default()))
        .collect();
    let mut elect_runs: [Vec<ElectOutcome>; 2] = Default::default();
    let last = set.contenders.len().saturating_sub(1);
    for round in 0..set.rounds {
        for (i, &n) in set.contenders.iter().enumerate() {
            let mut order = Peer::ALL;
            if round % 2 == 1 {
                order.reverse();
            }
            for peer in order {
                if !want(peer) {
                    continue;
                }
                let tag = format!("{round}/{n}");
                let outcome = match peer {
                    Peer::Ours => {
                        eprintln!("round {round}: ours     {n} contenders");
                        let path = format!("{base}/ours/lock-{tag}");
                        let run = counting(addr, || {
                            rt.block_on(ours_lock(&connect, &path, n, set.warmup, set.secs))
                        });
                        if i == last {
                            eprintln!("round {round}: ours     election");
                            let path = format!("{base}/ours/elect-{round}");
                            elect_runs[0].push(rt.block_on(ours_elect(&connect, &path, &set)));
                        }
                        run
                    }
                    Peer::Curator => match &curator {
                        Ok(c) => {
                            let mut workloads = vec![format!("lock:{n}")];
                            if i == last {
                                eprintln!("round {round}: Curator  {n} contenders, then election");
                                workloads.push(format!(
                                    "elect:{}:{}:{}",
                                    set.participants,
                                    set.election_terms(),
                                    set.hold_ms
                                ));
                            } else {
                                eprintln!("round {round}: Curator  {n} contenders");
                            }
                            let base = format!("{base}/curator/{tag}");
                            let out = c.run(&connect, &base, &set, &workloads);
                            if i == last {
                                elect_runs[1].push(out.election(&set));
                            }
                            out.lock(n)
                        }
                        Err(e) => Err(e.clone()),
                    },
                    Peer::Kazoo => match &kazoo {
                        Ok(k) => {
                            eprintln!("round {round}: kazoo    {n} contenders");
                            k.run(&connect, &format!("{base}/kazoo/{tag}"), &set, n)
                        }
                        Err(e) => Err(e.clone()),
                    },
                };
                lock_runs[i].1[peer as usize].push(outcome);
            }
        }
    }
    let not_run = |p: Peer| -> String {
        match p {
            Peer::Curator => curator.as_ref().err().cloned(),
            Peer::Kazoo => kazoo.as_ref().err().cloned(),
            Peer::Ours => None,
        }
        .unwrap_or_else(|| "not selected (--only)".to_owned())
    };
    let locks: Vec<(usize, [Vec<LockOutcome>; 3])> = lock_runs
        .into_iter()
        .map(|(n, mut runs)| {
            for p in Peer::ALL {
                if runs[p as usize].is_empty() {
                    runs[p as usize].push(Err(not_run(p)));
                }
            }
            (n, runs)
        })
        .collect();
    for (k, p) in [Peer::Ours, Peer::Curator].into_iter().enumerate() {
        if elect_runs[k].is_empty() {
            elect_runs[k].push(Err(not_run(p)));
        }
    }
    drop(rt);
    let _ = fs::remove_dir_all(&tmp);

    println!(
        "recipes_bench: {} rounds; per mutex workload {} s measured after {} s warm-up (+{} s \
         JIT warm-up per JVM); one standalone ZooKeeper 3.8 (forceSync=no, tickTime 200) on \
         {connect}; zk-recipes on a multi-threaded tokio runtime ({} workers)",
        set.rounds,
        set.secs,
        set.warmup,
        set.jit_warmup,
        thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "load average before: {load_before}; after: {}; total time {:.0} s",
        load_average(),
        started.elapsed().as_secs_f64()
    );
    report(
        &Results {
            locks,
            elect: elect_runs,
        },
        &set,
    );
    drop(zk);
}
