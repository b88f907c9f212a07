//! The tables: lock throughput and latency, failover times, ratios and the targets.

use std::fmt;

use crate::{
    results::{percentile, ElectOutcome, LockOutcome, LockRun},
    settings::{Peer, Settings},
};

pub(crate) fn ms(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms < 10.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.1}")
    }
}

/// `median / p99` in ms.
pub(crate) struct Latency<'a>(&'a [u64]);

impl fmt::Display for Latency<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (percentile(self.0, 50.0), percentile(self.0, 99.0)) {
            (Some(p50), Some(p99)) => write!(f, "{} / {}", ms(p50), ms(p99)),
            _ => f.write_str("n/a"),
        }
    }
}

pub(crate) fn rate(o: &LockOutcome) -> String {
    o.as_ref()
        .map_or_else(|_| "n/a".to_owned(), |r| format!("{:.0}", r.per_sec()))
}

pub(crate) fn latency(o: &LockOutcome) -> String {
    o.as_ref()
        .map_or_else(|_| "n/a".to_owned(), |r| Latency(&r.handoffs).to_string())
}

pub(crate) fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

pub(crate) fn show(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}×"))
}

pub(crate) fn verdict(r: Option<f64>, met: impl Fn(f64) -> bool) -> String {
    match r {
        Some(r) if met(r) => format!("met ({r:.2}×)"),
        Some(r) => format!("not met ({r:.2}×)"),
        None => "n/a".to_owned(),
    }
}

pub(crate) fn per_sec(o: &LockOutcome) -> Option<f64> {
    o.as_ref().ok().map(LockRun::per_sec)
}

pub(crate) fn median(o: &LockOutcome) -> Option<f64> {
    o.as_ref()
        .ok()
        .and_then(|r| percentile(&r.handoffs, 50.0))
        .map(|v| v as f64)
}

/// Every round's outcome.
pub(crate) struct Results {
    /// Per contender count, for ours, Curator and kazoo.
    pub(crate) locks: Vec<(usize, [Vec<LockOutcome>; 3])>,
    /// Ours and Curator's.
    pub(crate) elect: [Vec<ElectOutcome>; 2],
}

/// The round with the most acquisitions per second, else the first failure.
pub(crate) fn best_lock(runs: &[LockOutcome]) -> LockOutcome {
    runs.iter()
        .filter_map(|r| r.as_ref().ok())
        .max_by(|a, b| a.per_sec().total_cmp(&b.per_sec()))
        .cloned()
        .ok_or_else(|| first_error(runs).unwrap_or_default())
}

/// The round with the lowest median failover, else the first failure.
pub(crate) fn best_elect(runs: &[ElectOutcome]) -> ElectOutcome {
    runs.iter()
        .filter_map(|r| r.as_ref().ok())
        .filter(|r| !r.failovers.is_empty())
        .min_by_key(|r| percentile(&r.failovers, 50.0))
        .cloned()
        .ok_or_else(|| first_error(runs).unwrap_or_else(|| "no failover measured".to_owned()))
}

/// Why the first failed round failed.
fn first_error<T>(runs: &[Result<T, String>]) -> Option<String> {
    runs.iter().find_map(|r| r.as_ref().err().cloned())
}

pub(crate) fn report(all: &Results, set: &Settings) {
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
        set.timing.secs, set.timing.rounds
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
        set.participants, set.hold_ms, set.terms, set.skip_terms, set.timing.rounds
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
pub(crate) struct Best {
    pub(crate) locks: Vec<(usize, [LockOutcome; 3])>,
    pub(crate) elect: [ElectOutcome; 2],
}
