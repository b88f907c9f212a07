//! This process's CPU time (all threads): what a benchmark client costs per op.

use std::time::Duration;

/// Linux reports process times in USER_HZ ticks, fixed at 100 per second for user space.
const TICKS_PER_SECOND: u64 = 100;

/// CPU time used so far by every thread of this process (user + system), from
/// `/proc/self/stat`: 10 ms resolution, plenty for runs of seconds, and no `unsafe` call.
pub fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let ticks = cpu_ticks(&stat).expect("utime and stime in /proc/self/stat");
    Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND)
}

/// utime + stime (fields 14 and 15). The command name (field 2) may hold spaces and
/// parentheses, so the fields are counted from after its closing parenthesis.
fn cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_and_system_ticks_are_read_past_an_odd_command_name() {
        let stat = "4242 (a (b) c) S 1 2 3 4 5 6 7 8 9 10 250 31 0 0 20 0 9 0";
        assert_eq!(cpu_ticks(stat), Some(281));
        assert_eq!(cpu_ticks("garbage"), None);
    }

    #[test]
    fn the_process_time_grows_with_work() {
        let before = process_cpu();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(200) {
            x = x.wrapping_mul(31).wrapping_add(1);
        }
        std::hint::black_box(x);
        assert!(process_cpu() > before);
    }
}
