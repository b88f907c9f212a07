//! [`load_average`]: the machine's load, printed by the benchmarks beside their tables.

/// The 1, 5 and 15 minute load averages from `/proc/loadavg`, or `?` where there is none.
///
/// A benchmark prints it before and after a run: a busy machine explains slow figures.
///
/// ```
/// let load = conformance::load_average();
/// assert!(!load.is_empty());
/// ```
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_owned())
}
