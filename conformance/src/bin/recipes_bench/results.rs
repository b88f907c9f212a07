//! What a run measures: lock acquisitions with their latencies and the requests the server
//! received, leader failovers, and the percentiles of both.

use std::{net::SocketAddr, time::Duration};

use crate::settings::Settings;
use conformance::server_received;

/// One lock workload of one client.
#[derive(Debug, Clone, Default)]
pub(crate) struct LockRun {
    pub(crate) acquisitions: u64,
    pub(crate) elapsed: Duration,
    /// Acquisitions from the first to the last, warm-up included.
    pub(crate) total: u64,
    /// Requests the server received while the workload ran (sessions, warm-up and all), when
    /// known.
    pub(crate) requests: Option<u64>,
    /// Handoff latencies in ns, sorted.
    pub(crate) handoffs: Vec<u64>,
    pub(crate) violations: u64,
    pub(crate) errors: u64,
}

impl LockRun {
    pub(crate) fn per_sec(&self) -> f64 {
        self.acquisitions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    pub(crate) fn requests_per_acquisition(&self) -> Option<f64> {
        Some(self.requests? as f64 / self.total.max(1) as f64)
    }
}

/// Runs `workload`, and counts the requests the server received meanwhile into its result.
pub(crate) fn counting(addr: SocketAddr, workload: impl FnOnce() -> LockOutcome) -> LockOutcome {
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
pub(crate) struct ElectRun {
    pub(crate) failovers: Vec<u64>,
    pub(crate) overlaps: usize,
}

pub(crate) type LockOutcome = Result<LockRun, String>;
pub(crate) type ElectOutcome = Result<ElectRun, String>;

/// Nearest-rank percentile of sorted samples.
pub(crate) fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
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
pub(crate) fn failovers(
    who: &str,
    mut starts: Vec<u64>,
    mut exits: Vec<u64>,
    set: &Settings,
) -> ElectRun {
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
