//! What a process costs, read from `/proc/self` (no `unsafe`, no libc): resident memory,
//! threads, and CPU time summed over every thread.

use std::{fs, time::Duration};

/// One reading of this process's costs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    /// Resident memory (`VmRSS`), KiB.
    pub(crate) rss_kib: u64,
    /// Threads of the process.
    pub(crate) threads: u64,
    /// CPU time of every thread so far (user + system).
    pub(crate) cpu: Duration,
}

pub(crate) fn sample() -> Sample {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    Sample {
        rss_kib: status_field(&status, "VmRSS:").unwrap_or(0),
        threads: status_field(&status, "Threads:").unwrap_or(0),
        cpu: cpu_time(),
    }
}

/// The number after `key` in the text of `/proc/<pid>/status`.
fn status_field(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The sum of the first field of `/proc/self/task/*/schedstat` (time on a CPU, in ns): ns
/// resolution, where `/proc/self/stat` counts 10 ms ticks, too coarse for 100 idle sessions.
/// A thread that has exited no longer counts: the measured runs keep theirs.
fn cpu_time() -> Duration {
    let mut ns = 0u64;
    if let Ok(tasks) = fs::read_dir("/proc/self/task") {
        for t in tasks.flatten() {
            let stat = fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
            ns += stat
                .split_whitespace()
                .next()
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Duration::from_nanos(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_read_by_key() {
        let status = "Name:\tx\nVmRSS:\t   1234 kB\nThreads:\t7\n";
        assert_eq!(status_field(status, "VmRSS:"), Some(1234));
        assert_eq!(status_field(status, "Threads:"), Some(7));
        assert_eq!(status_field(status, "VmHWM:"), None);
    }

    #[test]
    fn this_process_has_memory_threads_and_cpu_time() {
        let s = sample();
        assert!(
            s.rss_kib > 0 && s.threads >= 1 && s.cpu > Duration::ZERO,
            "{s:?}"
        );
    }
}
