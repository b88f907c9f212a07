//! Spawning processes that cannot outlive the test process.
//!
//! A [`TiedCommand`] runs its program through `setpriv --pdeathsig KILL` (util-linux), which
//! asks the kernel for SIGKILL when the *thread* that forked the child exits, then execs in
//! place, so the child's pid is the program's. Forking from short-lived test threads would
//! kill the server at the end of the test that happened to start it (for example the shared
//! server), so every such child is forked from one dedicated thread that lives as long as the
//! process: the signal arrives exactly when the whole process dies, including by SIGKILL,
//! where no destructor runs, and at a normal exit, where statics are not dropped.
//!
//! Had the process died between the fork and setpriv's request, no signal would come: a shell
//! between setpriv and the program checks that its parent is still this process and exits
//! otherwise. The spawner thread lives as long as the process, so that happens only when the
//! process dies while spawning (a Ctrl-C as servers start).
//!
//! Without setpriv, children are spawned plainly and a warning says so once.
//!
//! Normal exits and panics are handled by `Drop` on the server types; this is the backstop.

use std::{
    env,
    ffi::{OsStr, OsString},
    io,
    ops::{Deref, DerefMut},
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::{Child, Command},
    sync::{mpsc, Mutex, OnceLock},
    thread,
};

/// Run by `sh -c` after setpriv, with the expected parent pid as `$0` and the program and its
/// arguments as `"$@"`. `$PPID` is read as the shell starts, after setpriv's prctl: if the
/// parent is another process by then (this one died, the child was reparented), the death
/// signal will never come, so the program must not run.
const PARENT_CHECK: &str = r#"[ "$PPID" = "$0" ] || exit 125; exec "$@""#;

/// A [`Command`] whose process gets SIGKILL when this process dies.
///
/// Configure it like a `Command` (arguments, environment, directory, stdio; it dereferences
/// to one) and start it with [`TiedCommand::spawn`].
///
/// ```no_run
/// use zk_testkit::spawner::TiedCommand;
///
/// let mut cmd = TiedCommand::new("sleep");
/// cmd.arg("60");
/// let child = cmd.spawn().unwrap(); // killed with this process at the latest
/// ```
#[derive(Debug)]
pub struct TiedCommand {
    cmd: Command,
    program: OsString,
}

impl TiedCommand {
    /// A command that runs `program` tied to this process.
    pub fn new(program: impl AsRef<OsStr>) -> TiedCommand {
        TiedCommand::with_parent(program.as_ref(), std::process::id())
    }

    /// `parent` is the pid the child checks its parent against (this process's, but for a
    /// test).
    fn with_parent(program: &OsStr, parent: u32) -> TiedCommand {
        let cmd = match setpriv() {
            Some(setpriv) => {
                let mut cmd = Command::new(setpriv);
                cmd.args(["--pdeathsig", "KILL", "--", "/bin/sh", "-c", PARENT_CHECK])
                    .arg(parent.to_string())
                    .arg(program);
                cmd
            }
            None => Command::new(program),
        };
        TiedCommand {
            cmd,
            program: program.to_owned(),
        }
    }

    /// Spawns the command from the spawner thread.
    ///
    /// Fails with [`io::ErrorKind::NotFound`] when the program does not exist, as
    /// [`Command::spawn`] does, rather than leaving that to the shell in the child.
    pub fn spawn(self) -> io::Result<Child> {
        if find_program(Path::new(&self.program)).is_none() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: no such program", Path::new(&self.program).display()),
            ));
        }
        let mut cmd = self.cmd;
        let (reply_tx, reply_rx) = mpsc::channel();
        let job: Job = Box::new(move || {
            let _ = reply_tx.send(cmd.spawn());
        });
        spawner()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(job)
            .map_err(|_| io::Error::other("zk-testkit spawner thread is gone"))?;
        reply_rx
            .recv()
            .map_err(|_| io::Error::other("zk-testkit spawner thread dropped the request"))?
    }
}

impl Deref for TiedCommand {
    type Target = Command;

    fn deref(&self) -> &Command {
        &self.cmd
    }
}

impl DerefMut for TiedCommand {
    fn deref_mut(&mut self) -> &mut Command {
        &mut self.cmd
    }
}

type Job = Box<dyn FnOnce() + Send>;

fn spawner() -> &'static Mutex<mpsc::Sender<Job>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        thread::Builder::new()
            .name("zk-testkit-spawner".into())
            .spawn(move || {
                // The sender lives in a static, so this loop ends only with the process.
                for job in rx {
                    job();
                }
            })
            .expect("cannot start the zk-testkit spawner thread");
        Mutex::new(tx)
    })
}

/// setpriv's path, looked up once; `None` (with a warning) when it is not installed.
fn setpriv() -> Option<&'static Path> {
    static SETPRIV: OnceLock<Option<PathBuf>> = OnceLock::new();
    SETPRIV
        .get_or_init(|| {
            let found = find_program(Path::new("setpriv"));
            if found.is_none() {
                eprintln!(
                    "zk-testkit: setpriv (util-linux) not found: server processes will \
                     outlive this process if it is killed"
                );
            }
            found
        })
        .as_deref()
}

/// Where `program` is, as execvp(3) would find it: a path when it has a `/`, else searched
/// in `$PATH`.
fn find_program(program: &Path) -> Option<PathBuf> {
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.as_os_str().as_encoded_bytes().contains(&b'/') {
        return executable(program).then(|| program.to_owned());
    }
    env::split_paths(&env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use std::{
        fs,
        time::{Duration, Instant},
    };

    use super::*;

    #[test]
    fn the_child_is_the_program_itself() {
        assert!(setpriv().is_some(), "setpriv (util-linux) is not installed");
        let mut cmd = TiedCommand::new("sleep");
        cmd.arg("30");
        let mut child = cmd.spawn().unwrap();
        // setpriv and the shell exec in place: the pid ends up running the program.
        let comm = format!("/proc/{}/comm", child.id());
        let t = Instant::now();
        while fs::read_to_string(&comm).unwrap().trim() != "sleep" {
            assert!(t.elapsed() < Duration::from_secs(10), "never became sleep");
            thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap();
        child.wait().unwrap();

        let mut cmd = TiedCommand::new("sh");
        cmd.args(["-c", "exit 7"]);
        assert_eq!(cmd.spawn().unwrap().wait().unwrap().code(), Some(7));
    }

    #[test]
    fn a_child_whose_parent_is_another_process_does_not_run() {
        assert!(setpriv().is_some(), "setpriv (util-linux) is not installed");
        // As if this process had died between fork and prctl: the parent is not the one
        // expected, so the death signal would never come.
        let mut cmd = TiedCommand::with_parent(OsStr::new("sh"), std::process::id() + 1);
        cmd.args(["-c", "exit 0"]);
        assert_eq!(cmd.spawn().unwrap().wait().unwrap().code(), Some(125));
    }

    #[test]
    fn a_missing_program_fails_to_spawn() {
        let e = TiedCommand::new("/nonexistent/zk-testkit").spawn();
        assert_eq!(e.unwrap_err().kind(), io::ErrorKind::NotFound);
        assert!(find_program(Path::new("sh")).is_some());
        assert!(find_program(Path::new("zk-testkit-no-such-program")).is_none());
    }
}
