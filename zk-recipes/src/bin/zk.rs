//! `zk`: run a command under a ZooKeeper lock or as an elected leader, and do everyday work
//! on znodes. `zk --help` tells how.

// A binary's root resolves modules beside itself; ours live in a directory of their own.
#[path = "zk/args.rs"]
mod args;
#[path = "zk/ops.rs"]
mod ops;
#[path = "zk/run.rs"]
mod run;

use std::time::Duration;

use tokio::signal::unix::{signal, SignalKind};
use zk_session::{Client, Error, ErrorCode};

use args::Command;

const HELP: &str = "\
zk - ZooKeeper from the command line

USAGE
    zk [--server HOSTS] [--session-timeout SECS] COMMAND ...

COMMANDS
    lock PATH [--timeout SECS] -- CMD [ARGS...]
        Runs CMD while holding the mutex at PATH (Curator's InterProcessMutex protocol:
        nodes PATH/_c_<uuid>-lock-<seq>) and exits with CMD's status. If the lock is lost
        while CMD runs (connection suspended, session lost or expired, node deleted), CMD
        and everything it started get SIGTERM (SIGKILL 10 s later) and zk exits with 5.
    elect PATH [--id ID] [--timeout SECS] -- CMD [ARGS...]
        Joins the leader election at PATH (Curator's LeaderLatch protocol, nodes
        PATH/_c_<uuid>-latch-<seq> holding ID), runs CMD once elected, on the same terms
        as lock. ID defaults to zk@HOST:PID.
    ls PATH                        The children of PATH, sorted, one per line.
    get PATH                       The data of PATH.
    set PATH DATA [--version N]    Replaces the data (only at version N, if given).
    create [-e] [-s] PATH [DATA]   Creates a node (-e ephemeral, -s sequential) and prints
                                   its path. With -e, zk keeps the session (and so the
                                   node) until interrupted.
    delete PATH [--version N]      Deletes a node (only at version N, if given).
    stat PATH                      The node's Stat.
    watch PATH [-r]                Prints each change at PATH (-r: and below it) until
                                   interrupted.
    help                           This text.

OPTIONS
    --server HOSTS           host:port[,host:port...][/chroot] (default 127.0.0.1:2181)
    --session-timeout SECS   The session timeout to ask for (default 10).
    --timeout SECS           lock/elect: give up waiting after SECS.

    CMD runs in a process group of its own, as with timeout(1): SIGINT and SIGTERM are
    passed on to the whole group; zk waits for CMD, then releases the lock. A CMD that
    reads from the terminal is stopped (it is not in the foreground); use a pipe or a file.

EXIT STATUS
    0        success (lock, elect: CMD succeeded)
    1        the ZooKeeper operation failed (no such node, node exists, bad version, ...)
    2        usage error (bad arguments, invalid path)
    3        no connection to ZooKeeper, or the session ended
    4        lock/elect: timed out waiting (--timeout)
    5        lock/elect: the lock or leadership was lost while CMD ran; CMD got SIGTERM
    126      CMD could not be run
    127      CMD was not found
    128+N    interrupted by signal N while waiting; or CMD was killed by signal N
    other    lock/elect: CMD's own exit status
";

/// zk's exit codes; `HELP` documents them.
pub mod exit {
    pub const OK: i32 = 0;
    pub const FAILED: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const CONNECTION: i32 = 3;
    pub const TIMEOUT: i32 = 4;
    pub const LOST: i32 = 5;
    pub const CANNOT_RUN: i32 = 126;
    pub const NOT_FOUND: i32 = 127;
}

/// Why zk stops unsuccessfully: an exit code and what to tell the user.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    pub fn new(code: i32, message: String) -> Self {
        Failure { code, message }
    }
}

/// The exit code and message for a failed client operation.
pub fn session_failure(what: &str, e: &Error) -> Failure {
    let code = match e {
        Error::InvalidPath { .. } | Error::InvalidArgument(_) => exit::USAGE,
        Error::ConnectTimeout { .. } | Error::Closed | Error::Config(_) => exit::CONNECTION,
        Error::Code(
            ErrorCode::ConnectionLoss
            | ErrorCode::SessionExpired
            | ErrorCode::RequestTimeout
            | ErrorCode::AuthFailed,
        ) => exit::CONNECTION,
        _ => exit::FAILED,
    };
    Failure::new(code, format!("{what}: {e}"))
}

/// Completes with the signal number at the next SIGINT or SIGTERM.
pub async fn interrupted() -> i32 {
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => 2,
        _ = term.recv() => 15,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // Take over SIGINT/SIGTERM from the start, so that one arriving early is not fatal
    // before a listener exists (tokio keeps the handler installed once registered).
    let _early = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    );
    let code = match args::parse(std::env::args().skip(1)) {
        Err(msg) => {
            eprintln!("zk: {msg}\nTry 'zk --help'.");
            exit::USAGE
        }
        Ok((_, Command::Help)) => {
            print!("{HELP}");
            exit::OK
        }
        Ok((global, cmd)) => match execute(global, cmd).await {
            Ok(code) => code,
            Err(f) => {
                eprintln!("zk: {}", f.message);
                f.code
            }
        },
    };
    std::process::exit(code);
}

async fn execute(global: args::Global, cmd: Command) -> Result<i32, Failure> {
    let client = Client::builder(&global.server)
        .session_timeout(global.session_timeout)
        .initial_connect_timeout(global.session_timeout.max(Duration::from_secs(1)))
        .connect()
        .await
        .map_err(|e| session_failure(&format!("connecting to {}", global.server), &e))?;
    let result = match cmd {
        Command::Lock { path, timeout, cmd } => run::lock(&client, &path, timeout, &cmd).await,
        Command::Elect {
            path,
            id,
            timeout,
            cmd,
        } => run::elect(&client, &path, id, timeout, &cmd).await,
        other => ops::run(&client, other).await.map(|()| exit::OK),
    };
    // Closing ends the session now, so its ephemeral nodes go at once rather than after
    // the session timeout.
    let _ = client.close().await;
    result
}
