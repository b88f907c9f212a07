//! Robustness mode: several sessions send valid and mutated requests at a bounded rate, cut
//! their connections now and then, check every reply (well-formed, for the request it
//! answers, zxids never going backwards) and a probe session checks that the server still
//! serves. A failing connection's frames are shrunk and saved as a replayable [`Case`].
//!
//! ```no_run
//! use std::time::Duration;
//! use zk_spec::fuzz::{self, FuzzConfig};
//!
//! let addr = "127.0.0.1:2181".parse().unwrap();
//! let report = fuzz::run(&FuzzConfig::new(addr, Duration::from_secs(30))).unwrap();
//! assert!(report.findings.is_empty(), "{:?}", report.findings);
//! ```

pub mod case;
pub mod gen;
pub mod rng;

use std::{
    net::SocketAddr,
    path::PathBuf,
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc, Mutex,
    },
    thread,
    time::{Duration, Instant},
};

pub use case::Case;

use self::{case::Judged, rng::Rng};
use crate::scratch;

/// What to fuzz, how hard and how long.
#[derive(Debug, Clone)]
pub struct FuzzConfig {
    /// The server; must be a loopback address.
    pub addr: SocketAddr,
    /// How long to run.
    pub duration: Duration,
    /// Concurrent sessions.
    pub sessions: usize,
    /// Requests per second, all sessions together.
    pub rate: u32,
    /// Seed of the generator (session `i` uses `seed + i`).
    pub seed: u64,
    /// Percent of requests mutated at the frame level.
    pub mutate_percent: usize,
    /// Percent of requests after which the connection is cut.
    pub cut_percent: usize,
    /// How long to wait for an answer.
    pub io_timeout: Duration,
    /// Where failing cases are saved; `None` keeps them in the report only.
    pub out_dir: Option<PathBuf>,
}

impl FuzzConfig {
    /// 4 sessions, 200 requests/s, 20% mutated, 2% cut, 3 s answers, seed from the clock.
    pub fn new(addr: SocketAddr, duration: Duration) -> FuzzConfig {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        FuzzConfig {
            addr,
            duration,
            sessions: 4,
            rate: 200,
            seed,
            mutate_percent: 20,
            cut_percent: 2,
            io_timeout: Duration::from_secs(3),
            out_dir: None,
        }
    }
}

/// Something the server did wrong, with the case that shows it.
#[derive(Debug, Clone)]
pub struct FuzzFinding {
    /// The failing connection's frames, shrunk when the failure replayed.
    pub case: Case,
    /// How many frames the connection had sent before shrinking.
    pub original_len: usize,
    /// Whether a replay on a new session failed the same way.
    pub reproduced: bool,
    /// Where the case was saved.
    pub saved: Option<PathBuf>,
}

/// What a fuzz run did and found.
#[derive(Debug, Clone, Default)]
pub struct FuzzReport {
    /// Requests sent.
    pub requests: u64,
    /// Of which mutated.
    pub mutated: u64,
    /// Connections the server closed (after malformed input).
    pub closes: u64,
    /// Connections the fuzzer cut.
    pub cuts: u64,
    /// Probe sessions served.
    pub probes: u64,
    /// Findings, at most one per session plus one for the probe.
    pub findings: Vec<FuzzFinding>,
    /// The run's time.
    pub elapsed: Duration,
    /// The seed used.
    pub seed: u64,
}

/// Shared counters and the stop switch.
#[derive(Default)]
struct Live {
    stop: AtomicBool,
    requests: AtomicU64,
    mutated: AtomicU64,
    closes: AtomicU64,
    cuts: AtomicU64,
    probes: AtomicU64,
    /// Each session's current connection, for a probe failure's case.
    current: Mutex<Vec<Vec<gen::Step>>>,
    failed: Mutex<Vec<Case>>,
}

/// Runs the fuzzer; fails when the address is not loopback or the run's root cannot be made.
pub fn run(config: &FuzzConfig) -> Result<FuzzReport, String> {
    if !config.addr.ip().is_loopback() {
        return Err(format!(
            "{}: the fuzzer only runs against loopback addresses",
            config.addr
        ));
    }
    let start = Instant::now();
    let root = scratch::create(config.addr, config.io_timeout, "zk-spec-fuzz")
        .map_err(|f| format!("cannot make the fuzz root: {f:?}"))?;
    let live = Arc::new(Live::default());
    *live.current.lock().unwrap_or_else(|e| e.into_inner()) = vec![Vec::new(); config.sessions];
    let deadline = start + config.duration;
    let threads: Vec<_> = (0..config.sessions)
        .map(|i| {
            let (config, live, root) = (config.clone(), live.clone(), root.clone());
            thread::spawn(move || session(&config, i, &root, deadline, &live))
        })
        .collect();
    probe_loop(config, deadline, &live);
    for t in threads {
        let _ = t.join();
    }
    let cases: Vec<Case> =
        std::mem::take(&mut *live.failed.lock().unwrap_or_else(|e| e.into_inner()));
    let findings = cases
        .into_iter()
        .enumerate()
        .map(|(n, c)| finish(config, n, c))
        .collect();
    scratch::remove(config.addr, config.io_timeout, &root);
    Ok(FuzzReport {
        requests: live.requests.load(Ordering::Relaxed),
        mutated: live.mutated.load(Ordering::Relaxed),
        closes: live.closes.load(Ordering::Relaxed),
        cuts: live.cuts.load(Ordering::Relaxed),
        probes: live.probes.load(Ordering::Relaxed),
        findings,
        elapsed: start.elapsed(),
        seed: config.seed,
    })
}

/// Shrinks and saves a failing case.
fn finish(config: &FuzzConfig, n: usize, case: Case) -> FuzzFinding {
    let original_len = case.steps.len();
    let reproduced = case::replay(config.addr, &case.steps, config.io_timeout).is_some();
    let case = if reproduced {
        case::shrink(config.addr, &case, config.io_timeout, 48)
    } else {
        case
    };
    let saved = config.out_dir.as_ref().and_then(|dir| {
        let path = dir.join(format!("zk-spec-fuzz-{}-{n}.case", config.seed));
        std::fs::write(&path, case.to_text()).ok().map(|()| path)
    });
    FuzzFinding {
        case,
        original_len,
        reproduced,
        saved,
    }
}

fn record_failure(live: &Live, case: Case) {
    live.failed
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(case);
    live.stop.store(true, Ordering::SeqCst);
}

/// One session's loop: connect, send steps until a close, a cut, a finding or the end.
fn session(config: &FuzzConfig, i: usize, root: &str, deadline: Instant, live: &Live) {
    let mut rng = Rng::new(config.seed.wrapping_add(i as u64));
    let interval = Duration::from_secs_f64(config.sessions as f64 / f64::from(config.rate.max(1)));
    let mut next_send = Instant::now();
    while Instant::now() < deadline && !live.stop.load(Ordering::SeqCst) {
        let mut conn = match case::open(config.addr, config.io_timeout) {
            Ok(c) => c,
            Err(e) => {
                return record_failure(
                    live,
                    Case {
                        what: format!("session not served: {e}"),
                        steps: vec![],
                    },
                )
            }
        };
        let mut steps: Vec<gen::Step> = Vec::new();
        let (mut after_mutation, mut last_zxid, mut xid) = (false, 0i64, 1);
        while Instant::now() < deadline && !live.stop.load(Ordering::SeqCst) {
            // Bounded rate: each session sends at most one request per interval.
            let now = Instant::now();
            if next_send > now {
                thread::sleep(next_send - now);
            }
            next_send += interval;
            let step = gen::step(&mut rng, root, xid, config.mutate_percent);
            xid += 1;
            live.requests.fetch_add(1, Ordering::Relaxed);
            if step.mutation.is_some() {
                live.mutated.fetch_add(1, Ordering::Relaxed);
            }
            steps.push(step.clone());
            if let Some(cur) = live
                .current
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_mut(i)
            {
                cur.clone_from(&steps);
            }
            match case::exchange(&mut conn, &step, after_mutation) {
                Judged::Answered(zxid) if zxid > 0 && zxid < last_zxid => {
                    let what = format!("zxid went back from {last_zxid:#x} to {zxid:#x}");
                    return record_failure(live, Case { what, steps });
                }
                Judged::Answered(zxid) => {
                    last_zxid = last_zxid.max(zxid);
                    after_mutation |= step.mutation.is_some();
                }
                Judged::Closed => {
                    live.closes.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                Judged::Finding(what) => return record_failure(live, Case { what, steps }),
            }
            if rng.chance(config.cut_percent) {
                live.cuts.fetch_add(1, Ordering::Relaxed);
                break;
            }
        }
    }
}

/// A probe session every half second until the end; a failure stops the run.
fn probe_loop(config: &FuzzConfig, deadline: Instant, live: &Live) {
    while Instant::now() < deadline && !live.stop.load(Ordering::SeqCst) {
        match case::probe(config.addr, config.io_timeout) {
            Ok(()) => {
                live.probes.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                // The connection that broke it is not known: keep the longest current one.
                let steps = live
                    .current
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .iter()
                    .max_by_key(|s| s.len())
                    .cloned()
                    .unwrap_or_default();
                return record_failure(
                    live,
                    Case {
                        what: format!("probe session not served: {e}"),
                        steps,
                    },
                );
            }
        }
        thread::sleep(Duration::from_millis(500));
    }
}
