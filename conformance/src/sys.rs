//! The few libc calls the harness needs, declared by hand (the workspace has no libc crate).
//!
//! Signal numbers are the Linux ones shared by x86, x86-64, ARM, AArch64 and RISC-V.

use std::{io, os::raw::c_int};

extern "C" {
    fn kill(pid: c_int, sig: c_int) -> c_int;
    fn getppid() -> c_int;
    fn geteuid() -> u32;
    fn atexit(cb: extern "C" fn()) -> c_int;
    #[cfg(target_os = "linux")]
    fn prctl(option: c_int, ...) -> c_int;
}

/// A signal the harness sends to server processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGKILL (9).
    Kill,
    /// SIGTERM (15).
    Term,
    /// SIGSTOP (19): freeze the process.
    Stop,
    /// SIGCONT (18): thaw it.
    Cont,
}

impl Signal {
    fn number(self) -> c_int {
        match self {
            Signal::Kill => 9,
            Signal::Term => 15,
            Signal::Stop => 19,
            Signal::Cont => 18,
        }
    }
}

/// Sends `sig` to process `pid`.
pub fn send_signal(pid: u32, sig: Signal) -> io::Result<()> {
    let pid = c_int::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: kill(2) has no memory-safety preconditions.
    if unsafe { kill(pid, sig.number()) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether the harness runs as root (apt-get then needs no sudo).
pub fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail and has no preconditions.
    unsafe { geteuid() == 0 }
}

/// Registers `cb` to run when the process exits normally (`exit`, or `main` returning).
pub fn at_exit(cb: extern "C" fn()) {
    // SAFETY: `cb` is a plain function that lives for the whole program.
    unsafe {
        atexit(cb);
    }
}

/// In a freshly forked child: ask the kernel to SIGKILL this process when the thread that forked
/// it exits, and fail if that already happened. Async-signal-safe (no allocation).
pub fn die_with_parent(expected_parent: u32) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        const PR_SET_PDEATHSIG: c_int = 1;
        // SAFETY: prctl(PR_SET_PDEATHSIG, sig) only changes this process's attributes.
        if unsafe {
            prctl(
                PR_SET_PDEATHSIG,
                Signal::Kill.number() as std::os::raw::c_ulong,
            )
        } != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY: getppid(2) has no preconditions.
    let parent = unsafe { getppid() };
    if parent as i64 != expected_parent as i64 {
        // The parent died between fork and prctl: the death signal will never come.
        return Err(io::Error::from_raw_os_error(3 /* ESRCH */));
    }
    Ok(())
}
