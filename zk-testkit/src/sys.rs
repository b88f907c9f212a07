//! What the harness asks of the operating system beyond the standard library: signals and the
//! effective user id, without `unsafe` or a libc dependency (the kill(1) command and
//! `/proc`). Signals are rare (pauses, graceful stops), so a process per signal costs
//! nothing that matters.

use std::{
    io,
    process::{Command, Stdio},
};

/// A signal the harness sends to server and client processes (SIGKILL goes through
/// [`std::process::Child::kill`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGTERM.
    Term,
    /// SIGSTOP: freeze the process.
    Stop,
    /// SIGCONT: thaw it.
    Cont,
}

impl Signal {
    /// The name kill(1) takes after `-s`.
    fn name(self) -> &'static str {
        match self {
            Signal::Term => "TERM",
            Signal::Stop => "STOP",
            Signal::Cont => "CONT",
        }
    }
}

/// Sends `sig` to process `pid` with kill(1).
pub fn send_signal(pid: u32, sig: Signal) -> io::Result<()> {
    let out = Command::new("kill")
        .args(["-s", sig.name(), "--", &pid.to_string()])
        .stdin(Stdio::null())
        .output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "kill -s {} {pid}: {}",
            sig.name(),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Waits until every thread of process `pid` is stopped (state `T` in
/// `/proc/<pid>/task/*/stat`), for at most `within`: SIGSTOP is delivered to each thread in
/// turn, and on a loaded machine a thread can still be running (and answering) for a while
/// after kill(1) returns. False if some thread is still running at the end.
pub fn wait_stopped(pid: u32, within: std::time::Duration) -> io::Result<bool> {
    let deadline = std::time::Instant::now() + within;
    loop {
        if all_threads_stopped(pid)? {
            return Ok(true);
        }
        if std::time::Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

fn all_threads_stopped(pid: u32) -> io::Result<bool> {
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        // A thread that exited between the listing and the read is not running.
        let Ok(stat) = std::fs::read_to_string(task?.path().join("stat")) else {
            continue;
        };
        if !matches!(thread_state(&stat), Some('T' | 't' | 'Z' | 'X')) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The state letter of a `/proc/<pid>/stat` line: the field after the command name, which is
/// in parentheses and may itself hold spaces and parentheses.
fn thread_state(stat: &str) -> Option<char> {
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Whether the harness runs as root (apt-get then needs no sudo).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| effective_uid(&s) == Some(0))
}

/// The effective uid in the text of `/proc/<pid>/status`: the second field of `Uid:` (real,
/// effective, saved, filesystem).
fn effective_uid(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_effective_uid_is_the_second_field() {
        let status = "Name:\tcat\nUmask:\t0022\nUid:\t1000\t0\t1000\t1000\nGid:\t5\t5\t5\t5\n";
        assert_eq!(effective_uid(status), Some(0));
        assert_eq!(effective_uid("Name:\tcat\n"), None);
    }

    #[test]
    fn the_state_follows_the_command_name_whatever_it_holds() {
        assert_eq!(thread_state("42 (java) T 1 42"), Some('T'));
        assert_eq!(thread_state("42 (a) b) c) S 1 42"), Some('S'));
        assert_eq!(thread_state("garbage"), None);
    }

    #[test]
    fn a_stopped_process_is_seen_stopped_and_a_running_one_is_not() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let short = std::time::Duration::from_millis(200);
        assert!(!wait_stopped(child.id(), short).unwrap());
        send_signal(child.id(), Signal::Stop).unwrap();
        assert!(wait_stopped(child.id(), std::time::Duration::from_secs(5)).unwrap());
        send_signal(child.id(), Signal::Cont).unwrap();
        assert!(!wait_stopped(child.id(), short).unwrap());
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn signals_reach_the_process() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        send_signal(child.id(), Signal::Term).unwrap();
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(15));
        // The process is gone (reaped): kill(1) fails, and says why.
        assert!(send_signal(child.id(), Signal::Cont).is_err());
    }
}
