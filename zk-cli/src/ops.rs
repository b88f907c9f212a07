//! The everyday commands: ls, get, set, create, delete, stat, watch.

use std::io::Write;

use zk_session::{AddWatchMode, Client, CreateMode, CreateOptions, Error, SessionState, Version};

use crate::{args::Command, exit, interrupted, session_failure, Failure};

/// Runs one everyday command.
pub async fn run(client: &Client, cmd: Command) -> Result<(), Failure> {
    match cmd {
        Command::Ls { path } => {
            let mut children = client
                .get_children(&path)
                .await
                .map_err(|e| session_failure(&format!("ls {path}"), &e))?;
            children.sort();
            let mut out = String::new();
            for c in children {
                out.push_str(&c);
                out.push('\n');
            }
            print_raw(out.as_bytes())
        }
        Command::Get { path } => {
            let (data, _) = client
                .get_data(&path)
                .await
                .map_err(|e| session_failure(&format!("get {path}"), &e))?;
            // The data as it is, and a newline for the terminal unless it ends in one.
            let mut out = data.to_vec();
            if !out.is_empty() && !out.ends_with(b"\n") {
                out.push(b'\n');
            }
            print_raw(&out)
        }
        Command::Set {
            path,
            data,
            version,
        } => {
            let version = version.map_or(Version::Any, Version::Exact);
            client
                .set_data(&path, data.as_bytes(), version)
                .await
                .map_err(|e| session_failure(&format!("set {path}"), &e))?;
            Ok(())
        }
        Command::Create {
            path,
            data,
            ephemeral,
            sequential,
        } => {
            let mode = match (ephemeral, sequential) {
                (false, false) => CreateMode::Persistent,
                (false, true) => CreateMode::PersistentSequential,
                (true, false) => CreateMode::Ephemeral,
                (true, true) => CreateMode::EphemeralSequential,
            };
            let created = client
                .create(&path, data.as_bytes(), &CreateOptions::new(mode))
                .await
                .map_err(|e| session_failure(&format!("create {path}"), &e))?;
            print_raw(format!("{created}\n").as_bytes())?;
            if ephemeral {
                // An ephemeral node lives as long as this session: keep it open until told.
                hold_session(client).await?;
            }
            Ok(())
        }
        Command::Delete { path, version } => {
            let version = version.map_or(Version::Any, Version::Exact);
            client
                .delete(&path, version)
                .await
                .map_err(|e| session_failure(&format!("delete {path}"), &e))
        }
        Command::Stat { path } => {
            let s = client
                .exists(&path)
                .await
                .map_err(|e| session_failure(&format!("stat {path}"), &e))?
                .ok_or_else(|| Failure::new(exit::FAILED, format!("stat {path}: no node")))?;
            let text = format!(
                "czxid = {:#x}\nmzxid = {:#x}\npzxid = {:#x}\nctime = {}\nmtime = {}\n\
                 version = {}\ncversion = {}\naversion = {}\nephemeralOwner = {:#x}\n\
                 dataLength = {}\nnumChildren = {}\n",
                s.czxid,
                s.mzxid,
                s.pzxid,
                s.ctime,
                s.mtime,
                s.version,
                s.cversion,
                s.aversion,
                s.ephemeral_owner,
                s.data_length,
                s.num_children
            );
            print_raw(text.as_bytes())
        }
        Command::Watch { path, recursive } => watch(client, &path, recursive).await,
        Command::Help | Command::Lock { .. } | Command::Elect { .. } => {
            unreachable!("dispatched elsewhere")
        }
    }
}

/// Prints every change at `path` (or below it, with `recursive`) until interrupted.
async fn watch(client: &Client, path: &str, recursive: bool) -> Result<(), Failure> {
    let mode = if recursive {
        AddWatchMode::PersistentRecursive
    } else {
        AddWatchMode::Persistent
    };
    let mut w = client
        .add_watch(path, mode)
        .await
        .map_err(|e| session_failure(&format!("watch {path}"), &e))?;
    loop {
        tokio::select! {
            ev = w.next() => match ev {
                Some(Ok(ev)) => print_raw(format!("{:?} {}\n", ev.event_type, ev.path).as_bytes())?,
                // The terminal (or pipe) is slower than the changes: say so and go on.
                Some(Err(Error::WatchLagged { missed })) => {
                    eprintln!("zk: {missed} events dropped: output fell behind");
                }
                Some(Err(e)) => return Err(session_failure(&format!("watch {path}"), &e)),
                None => return Err(session_ended(client)),
            },
            _ = interrupted() => return Ok(()),
        }
    }
}

/// Waits for SIGINT/SIGTERM (success) or the end of the session (failure).
async fn hold_session(client: &Client) -> Result<(), Failure> {
    let mut state = client.watch_state();
    tokio::select! {
        _ = interrupted() => Ok(()),
        _ = state.wait_for(|s| s.is_terminal()) => Err(session_ended(client)),
    }
}

fn session_ended(client: &Client) -> Failure {
    let why = match client.state() {
        SessionState::Expired => "the session expired",
        SessionState::AuthFailed => "authentication failed",
        _ => "the session ended",
    };
    Failure::new(exit::CONNECTION, why.to_owned())
}

/// Writes to stdout; a closed pipe (`zk ls / | head`) is not worth an error message.
fn print_raw(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::new(exit::FAILED, format!("writing output: {e}"))),
    }
}
