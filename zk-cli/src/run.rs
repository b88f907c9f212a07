//! `zk lock`, `zk semaphore` and `zk elect`: run a command while holding a lock, a lease or
//! leadership, and stop it when that is lost.

use std::{
    ffi::OsString, future::Future, os::unix::process::ExitStatusExt, process::ExitStatus,
    time::Duration,
};

use tokio::process::{Child, Command};
use zk_recipes::{
    InterProcessMutex, InterProcessSemaphoreV2, LatchStatus, LeaderLatch, LostReason, RecipeError,
};
use zk_session::Client;

use crate::{exit, interrupted, session_failure, Failure};

/// How long a command has to exit after SIGTERM before it gets SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(10);

const SIGTERM: i32 = 15;

const SIGKILL: i32 = 9;

/// kill(1) on CMD's whole process group (CMD leads it; a group id is not reused while any
/// member lives). The kill command rather than kill(2): the project has no `unsafe` and no
/// libc dependency, and signals are rare enough that a process per signal costs nothing.
fn kill_group(pgid: u32, sig: i32) -> bool {
    std::process::Command::new("kill")
        .arg(format!("-{sig}"))
        .arg("--")
        .arg(format!("-{pgid}"))
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Signals CMD's whole process group, so that what CMD started — the commands of a shell
/// script, say — stops with it and does not run on without the lock.
fn signal_group(pgid: u32, sig: i32) {
    kill_group(pgid, sig);
}

/// `zk lock`: CMD's exit status once it is done under the lock.
pub async fn lock(
    client: &Client,
    path: &str,
    timeout: Option<Duration>,
    cmd: &[OsString],
) -> Result<i32, Failure> {
    let mutex = InterProcessMutex::builder(client.clone(), path)
        .data(default_id().as_bytes())
        .build();
    let acquire = async {
        match timeout {
            Some(t) => mutex.acquire_timeout(t).await,
            None => mutex.acquire().await,
        }
    };
    // Dropping the acquire on a signal leaves no node behind.
    let guard = tokio::select! {
        r = acquire => r.map_err(|e| recipe_failure(&format!("lock {path}"), e))?,
        sig = interrupted() => return Err(interrupted_failure(sig, "waiting for the lock")),
    };
    let env = fencing_env(path, guard.path(), guard.fencing_token());
    let outcome = supervise(cmd, &env, async {
        let why = match guard.lost().await {
            LostReason::NodeDeleted => "lock node deleted",
            other => other.as_str(),
        };
        format!("lost the lock at {path} ({why})")
    })
    .await;
    // Whatever happened, the lock is given up before we exit (the node is deleted now if
    // the connection allows, else with the session when the client closes).
    let _ = guard.release().await;
    outcome
}

/// `zk semaphore`: CMD's exit status once it is done holding a lease.
pub async fn semaphore(
    client: &Client,
    path: &str,
    leases: u32,
    timeout: Option<Duration>,
    cmd: &[OsString],
) -> Result<i32, Failure> {
    let semaphore = InterProcessSemaphoreV2::builder(client.clone(), path)
        .max_leases(leases)
        .data(default_id().as_bytes())
        .build();
    let acquire = async {
        match timeout {
            Some(t) => semaphore.acquire_timeout(t).await,
            None => semaphore.acquire().await,
        }
    };
    // Dropping the acquire on a signal leaves no node behind.
    let lease = tokio::select! {
        r = acquire => r.map_err(|e| recipe_failure(&format!("semaphore {path}"), e))?,
        sig = interrupted() => return Err(interrupted_failure(sig, "waiting for a lease")),
    };
    let env = fencing_env(path, lease.path(), lease.fencing_token());
    // The lease says when it can no longer be trusted: its node deleted, or the session
    // suspended, lost or over (the default policy, as `zk lock`'s).
    let outcome = supervise(cmd, &env, async {
        let why = match lease.lost().await {
            LostReason::NodeDeleted => "lease node deleted",
            other => other.as_str(),
        };
        format!("lost the lease at {path} ({why})")
    })
    .await;
    let _ = lease.release().await;
    outcome
}

/// `zk elect`: CMD's exit status once it is done as leader.
pub async fn elect(
    client: &Client,
    path: &str,
    id: Option<String>,
    timeout: Option<Duration>,
    cmd: &[OsString],
) -> Result<i32, Failure> {
    let what = format!("elect {path}");
    let joined = LeaderLatch::builder(client.clone(), path)
        .id(id.unwrap_or_else(default_id))
        .start();
    let latch = tokio::select! {
        r = joined => r.map_err(|e| recipe_failure(&what, e))?,
        sig = interrupted() => return Err(interrupted_failure(sig, "joining the election")),
    };
    let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
    let outcome = async {
        let mut status = latch.status();
        let leading = |s: &LatchStatus| s.is_leader() || s.has_ended();
        let now = {
            let wait = async {
                match deadline {
                    Some(d) => tokio::time::timeout_at(d, status.wait_for(leading))
                        .await
                        .unwrap_or(Err(RecipeError::Timeout)),
                    None => status.wait_for(leading).await,
                }
            };
            tokio::select! {
                r = wait => r.map_err(|e| recipe_failure(&what, e))?,
                sig = interrupted() => {
                    return Err(interrupted_failure(sig, "waiting for leadership"))
                }
            }
        };
        match now {
            LatchStatus::Ended(e) => return Err(recipe_failure(&what, e)),
            LatchStatus::Closed => return Err(recipe_failure(&what, RecipeError::Closed)),
            _ => {}
        }
        let node = latch.our_path().unwrap_or_default();
        // The fencing token is the latch node's czxid, as for a lock.
        let token = match client.exists(&node).await {
            Ok(Some(stat)) => stat.czxid as u64,
            Ok(None) => {
                return Err(Failure::new(
                    exit::LOST,
                    format!("lost leadership at {path} (node deleted)"),
                ))
            }
            Err(e) => return Err(session_failure(&what, &e)),
        };
        let env = fencing_env(path, &node, token);
        supervise(cmd, &env, async {
            // Not leading, or the latch ended: either way the term is over.
            let _ = status.wait_for(|s| !s.is_leader()).await;
            format!("lost leadership at {path}")
        })
        .await
    }
    .await;
    // Leaving is best effort: the session's end removes the node anyway.
    let _ = latch.close().await;
    outcome
}

/// Runs CMD, in a process group of its own, until it exits, forwarding SIGINT/SIGTERM to the
/// group. If `lost` completes first, the group gets SIGTERM (SIGKILL after a grace period)
/// and the result is [`exit::LOST`].
///
/// As with `timeout(1)`, the group is not the terminal's foreground group: a CMD that reads
/// from the terminal is stopped (SIGTTIN). Input from a pipe or a file is not affected.
pub(crate) async fn supervise(
    cmd: &[OsString],
    env: &[(&str, String)],
    lost: impl Future<Output = String>,
) -> Result<i32, Failure> {
    let name = cmd[0].to_string_lossy().into_owned();
    // CMD writes to the same stdout, past our own output.
    crate::output::finish_line()?;
    let mut child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .process_group(0)
        .spawn()
        .map_err(|e| {
            let code = match e.kind() {
                std::io::ErrorKind::NotFound => exit::NOT_FOUND,
                _ => exit::CANNOT_RUN,
            };
            Failure::new(code, format!("cannot run {name}: {e}"))
        })?;
    let pid = child.id().expect("a child not yet waited for has a pid");
    tokio::pin!(lost);
    loop {
        tokio::select! {
            status = child.wait() => {
                let status = status.map_err(|e| Failure::new(exit::FAILED, format!("waiting for {name}: {e}")))?;
                return Ok(status_code(status));
            }
            why = &mut lost => {
                eprintln!("zk: {why}; sending SIGTERM to {name} (process group {pid})");
                terminate(&mut child, pid).await;
                return Err(Failure::new(exit::LOST, why));
            }
            // The command is the one to decide what an interrupt means; we wait for it.
            sig = interrupted() => signal_group(pid, sig),
        }
    }
}

/// True while any process of the group lives (signal 0 checks without sending anything).
fn group_alive(pgid: u32) -> bool {
    kill_group(pgid, 0)
}

/// SIGTERM to CMD's group; SIGKILL to whatever of it is left after the grace period, CMD's
/// own children included (they may outlive CMD: nothing started under the lock runs on).
async fn terminate(child: &mut Child, pgid: u32) {
    signal_group(pgid, SIGTERM);
    let deadline = tokio::time::Instant::now() + TERM_GRACE;
    // Reaped first: a zombie still counts as a member of its group.
    let _ = tokio::time::timeout_at(deadline, child.wait()).await;
    while group_alive(pgid) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if group_alive(pgid) {
        eprintln!("zk: process group {pgid} still running after {TERM_GRACE:?}; sending SIGKILL");
        signal_group(pgid, SIGKILL);
    }
    let _ = child.wait().await;
}

/// What CMD is told so that it can fence its writes: the lock (or election) path, our node
/// under it, and the node's czxid, which grows with every new holder.
fn fencing_env<'a>(path: &str, node: &str, token: u64) -> [(&'a str, String); 3] {
    [
        ("ZK_LOCK_PATH", path.to_owned()),
        ("ZK_LOCK_NODE", node.to_owned()),
        ("ZK_FENCING_TOKEN", token.to_string()),
    ]
}

/// The exit code a shell would report: the status, or 128 + the signal.
fn status_code(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(exit::FAILED)
}

pub(crate) fn recipe_failure(what: &str, e: RecipeError) -> Failure {
    match e {
        RecipeError::Session(e) => session_failure(what, &e),
        RecipeError::Timeout => Failure::new(exit::TIMEOUT, format!("{what}: timed out")),
        RecipeError::Lost(why) => Failure::new(exit::CONNECTION, format!("{what}: {why}")),
        e => Failure::new(exit::FAILED, format!("{what}: {e}")),
    }
}

fn interrupted_failure(sig: i32, doing: &str) -> Failure {
    Failure::new(128 + sig, format!("interrupted while {doing}"))
}

/// What other participants see as ours: `zk@host:pid`.
fn default_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    format!("zk@{host}:{}", std::process::id())
}
