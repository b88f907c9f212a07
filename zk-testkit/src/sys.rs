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
