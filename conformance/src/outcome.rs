//! A benchmark client's best repetition on a workload (or why it has none), and how the
//! tables show it: ops per second, CPU per op, ratios between clients, targets met or missed.
//!
//! ```
//! use std::time::Duration;
//! use conformance::{bench::Throughput, outcome::{best, ratio, show, verdict}};
//!
//! let rep = |ops| Throughput { ops, elapsed: Duration::from_secs(1), cpu: Duration::ZERO, errors: 0 };
//! let ours = best(&[rep(90), rep(95)]);
//! let raw = best(&[rep(100)]);
//! let r = ratio(&ours, &raw, |m| m.ops_per_sec());
//! assert_eq!(show(r), "0.95");
//! assert_eq!(verdict(r, |r| r >= 0.95), "yes (0.95)");
//! assert_eq!(show(ratio(&ours, &Err("not run".into()), |m| m.ops_per_sec())), "n/a");
//! ```

use std::fmt;

use crate::bench::Throughput;

/// The best repetition, or why there is none.
pub type Outcome = Result<Throughput, String>;

/// The repetition with the most ops per second: noise from other processes only ever slows
/// a run down.
pub fn best(reps: &[Throughput]) -> Outcome {
    reps.iter()
        .copied()
        .max_by(|a, b| a.ops_per_sec().total_cmp(&b.ops_per_sec()))
        .ok_or_else(|| "no repetition finished".to_owned())
}

/// Ops per second, or "n/a".
pub struct Cell<'a>(pub &'a Outcome);

impl fmt::Display for Cell<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Ok(m) => write!(f, "{:.0}", m.ops_per_sec()),
            Err(_) => f.write_str("n/a"),
        }
    }
}

/// `value` of `a` over `value` of `b`, when both have one.
pub fn ratio(a: &Outcome, b: &Outcome, value: fn(&Throughput) -> f64) -> Option<f64> {
    match (a, b) {
        (Ok(a), Ok(b)) => Some(value(a) / value(b)),
        _ => None,
    }
}

/// A ratio with two decimals, or "n/a".
pub fn show(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}"))
}

/// CPU µs per op with one decimal, or "n/a".
pub fn cpu_cell(o: &Outcome) -> String {
    o.as_ref().map_or_else(
        |_| "n/a".to_owned(),
        |m| format!("{:.1}", m.cpu_us_per_op()),
    )
}

/// "yes (r)" when `ok(r)`, "NO (r)" when not, "n/a" without a ratio.
pub fn verdict(r: Option<f64>, ok: impl Fn(f64) -> bool) -> String {
    match r {
        Some(r) if ok(r) => format!("yes ({r:.2})"),
        Some(r) => format!("NO ({r:.2})"),
        None => "n/a".to_owned(),
    }
}
