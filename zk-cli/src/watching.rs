//! Waiting on ZooKeeper: persistent watches (watch, addWatch), the one event of `ls -w` and
//! `get -w`, holding an ephemeral's session; and saying on stderr when the connection is
//! suspended and when it comes back, instead of going silent.

use std::future::Future;

use zk_session::{AddWatchMode, EndReason, Error, OneshotWatch, SessionEvent, SessionState};

use crate::{cli::WatchMode, dispatch::Ctx, exit, interrupted, output, session_failure, Failure};

type Done = Result<i32, Failure>;

/// `watch` and `addWatch`: every change at PATH (or below it) until interrupted.
pub async fn persistent(ctx: &Ctx, path: &str, mode: WatchMode) -> Done {
    let mode = match mode {
        WatchMode::Persistent => AddWatchMode::Persistent,
        WatchMode::PersistentRecursive => AddWatchMode::PersistentRecursive,
    };
    let mut w = ctx
        .client
        .add_watch(path, mode)
        .await
        .map_err(|e| session_failure(&format!("watch {path}"), &e))?;
    let json = ctx.json;
    until_interrupted(ctx, async move {
        loop {
            match w.next().await {
                Some(Ok(ev)) => output::event(&ev, json)?,
                // The terminal (or pipe) is slower than the changes: say so and go on.
                Some(Err(Error::WatchLagged { missed })) => {
                    eprintln!("zk: {missed} events dropped: output fell behind");
                }
                Some(Err(e)) => return Err(session_failure(&format!("watch {path}"), &e)),
                None => return Err(Failure::new(exit::CONNECTION, "the watch ended".into())),
            }
        }
    })
    .await
}

/// `ls -w`, `get -w`: the one change the watch reports.
pub async fn one_event(ctx: &Ctx, w: OneshotWatch) -> Done {
    let json = ctx.json;
    until_interrupted(ctx, async move {
        let ev = w
            .await
            .map_err(|e| session_failure("waiting for the watch", &e))?;
        output::event(&ev, json)?;
        Ok(exit::OK)
    })
    .await
}

/// `create -e`: keeps the session (and so the node) until interrupted.
pub async fn hold_session(ctx: &Ctx) -> Done {
    until_interrupted(ctx, std::future::pending()).await
}

/// Runs `work` while reporting connection changes; an interrupt ends it with success, the end
/// of the session with exit 3.
pub(crate) async fn until_interrupted(ctx: &Ctx, work: impl Future<Output = Done>) -> Done {
    let mut events = ctx.client.session_events();
    tokio::pin!(work);
    loop {
        tokio::select! {
            done = &mut work => return done,
            _ = interrupted() => return Ok(exit::OK),
            ev = events.next() => report(ctx, ev)?,
        }
    }
}

/// Tells stderr about a connection change; the session's end is a failure.
fn report(ctx: &Ctx, ev: Option<SessionEvent>) -> Result<(), Failure> {
    match ev {
        Some(SessionEvent::Suspended) => {
            eprintln!("zk: connection suspended; waiting for it to come back");
        }
        Some(SessionEvent::Reconnected) => {
            let server = ctx.client.connected_server().unwrap_or_default();
            eprintln!("zk: connection back ({server}), same session");
        }
        Some(SessionEvent::Lost) => {
            eprintln!("zk: no connection for the session timeout: the session may be gone");
        }
        Some(SessionEvent::Expired | SessionEvent::Ended(_)) | None => {
            return Err(session_ended(ctx));
        }
        Some(_) => {}
    }
    Ok(())
}

fn session_ended(ctx: &Ctx) -> Failure {
    let why = match ctx.client.state() {
        SessionState::Expired | SessionState::Ended(EndReason::SessionExpired) => {
            "the session expired"
        }
        SessionState::Ended(EndReason::AuthFailed) => "authentication failed",
        _ => "the session ended",
    };
    Failure::new(exit::CONNECTION, why.to_owned())
}
