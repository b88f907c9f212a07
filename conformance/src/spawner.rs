//! Spawning server processes that cannot outlive the test process.
//!
//! Every JVM is forked from one dedicated thread that lives as long as the process, after
//! `prctl(PR_SET_PDEATHSIG, SIGKILL)` in the child. Linux delivers the death signal when the
//! *thread* that forked the child exits, so forking from short-lived test threads would kill the
//! server at the end of the test that happened to start it (for example the shared server);
//! forking from the long-lived spawner thread means the signal arrives exactly when the whole
//! process dies, including by SIGKILL, where no destructor or `atexit` handler runs.
//!
//! Normal exits and panics are handled by `Drop` on the server types; this is the backstop.

use std::{
    io,
    os::unix::process::CommandExt,
    process::{Child, Command},
    sync::{mpsc, Mutex, OnceLock},
    thread,
};

use crate::sys;

type Job = Box<dyn FnOnce() + Send>;

fn spawner() -> &'static Mutex<mpsc::Sender<Job>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        thread::Builder::new()
            .name("zk-conformance-spawner".into())
            .spawn(move || {
                // The sender lives in a static, so this loop ends only with the process.
                for job in rx {
                    job();
                }
            })
            .expect("cannot start the zk-conformance spawner thread");
        Mutex::new(tx)
    })
}

/// Spawns `cmd` from the spawner thread; the child gets SIGKILL when this process dies.
pub fn spawn_tied_to_process(mut cmd: Command) -> io::Result<Child> {
    let me = std::process::id();
    // SAFETY: the hook only calls async-signal-safe functions (prctl, getppid) and allocates
    // nothing.
    unsafe {
        cmd.pre_exec(move || sys::die_with_parent(me));
    }
    let (reply_tx, reply_rx) = mpsc::channel();
    let job: Job = Box::new(move || {
        let _ = reply_tx.send(cmd.spawn());
    });
    spawner()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job)
        .map_err(|_| io::Error::other("zk-conformance spawner thread is gone"))?;
    reply_rx
        .recv()
        .map_err(|_| io::Error::other("zk-conformance spawner thread dropped the request"))?
}
