//! What a benchmark's callers count while they run (ops done, ops failed), the flag that
//! stops them, and the repetitions sampled from the counts: on a tokio runtime
//! ([`Counters::measure`]) or on a thread ([`Counters::measure_blocking`]).
//!
//! ```
//! use std::{thread, time::Duration};
//! use conformance::{counters::Counters, workload::Schedule};
//!
//! let counters = Counters::default();
//! let caller = {
//!     let counters = counters.clone();
//!     thread::spawn(move || {
//!         while !counters.stopped() {
//!             thread::sleep(Duration::from_millis(1));
//!             counters.count(true);
//!         }
//!     })
//! };
//! let ms = Duration::from_millis(50);
//! let reps = counters.measure_blocking(Schedule { warmup: ms, secs: ms, reps: 2 });
//! caller.join().unwrap();
//! assert_eq!(reps.len(), 2);
//! assert!(reps.iter().all(|r| r.errors == 0));
//! ```

use std::{
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use crate::{bench::Throughput, cpu::process_cpu, workload::Schedule};

/// Ops done and failed by every clone, and the stop flag they share.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    done: Arc<AtomicU64>,
    errors: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

/// The counts, the clock and the process's CPU time at one moment.
#[derive(Debug, Clone, Copy)]
struct Mark {
    done: u64,
    errors: u64,
    at: Instant,
    cpu: Duration,
}

impl Mark {
    /// The repetition from `self` to `later`.
    fn until(self, later: Mark) -> Throughput {
        Throughput {
            ops: later.done - self.done,
            elapsed: later.at - self.at,
            cpu: later.cpu - self.cpu,
            errors: later.errors - self.errors,
        }
    }
}

impl Counters {
    /// One op done (`ok`: it succeeded).
    pub fn count(&self, ok: bool) {
        if !ok {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the callers should stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Tells the callers to stop.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    fn mark(&self) -> Mark {
        Mark {
            done: self.done.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            at: Instant::now(),
            cpu: process_cpu(),
        }
    }

    /// Samples the counts through the warm-up and repetitions of `s` (sleeping on the
    /// runtime), then stops the callers.
    pub async fn measure(&self, s: Schedule) -> Vec<Throughput> {
        tokio::time::sleep(s.warmup).await;
        let mut out = Vec::new();
        for _ in 0..s.reps {
            let a = self.mark();
            tokio::time::sleep(s.secs).await;
            out.push(a.until(self.mark()));
        }
        self.stop();
        out
    }

    /// [`measure`](Self::measure) on a thread of its own.
    pub fn measure_blocking(&self, s: Schedule) -> Vec<Throughput> {
        std::thread::sleep(s.warmup);
        let mut out = Vec::new();
        for _ in 0..s.reps {
            let a = self.mark();
            std::thread::sleep(s.secs);
            out.push(a.until(self.mark()));
        }
        self.stop();
        out
    }
}
