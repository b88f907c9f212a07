//! What the core does with each command from the handle, in each phase.

use std::{collections::VecDeque, time::Duration};

use std::time::Instant;
use zk_proto::Request;

use super::{requests, Away, Command, End, Output, Phase, SessionCore, WatchReg};
use crate::Error;

impl SessionCore {
    /// Takes one command from the handle.
    pub fn handle_command(&mut self, cmd: Command, now: Instant) {
        self.owed = self.owed.saturating_sub(1);

        match self.phase {
            Phase::Connected { .. } => self.command_connected(cmd, now),
            Phase::Ended(end) => command_ended(cmd, end, &mut self.out),
            Phase::Backoff { .. } | Phase::Connecting { .. } | Phase::Handshaking { .. } => {
                self.command_disconnected(cmd, now)
            }
        }
    }

    /// Every handle is gone: close the session politely if connected, end it otherwise.
    /// A session that is on the server would live there until it expires, its ephemerals
    /// with it: the handshake under way goes on only to close it (a connect request went
    /// out: see `handshake_done`), and a session that was connected before this reconnect,
    /// or whose close a dropped connection kept from the server, is reconnected only to
    /// close it, until it would have expired (`closes_on_reconnect`).
    pub fn handle_handles_gone(&mut self, now: Instant) {
        self.handles_gone = true;
        match self.phase {
            Phase::Connected { .. } if !self.closing => self.send_close(now),
            Phase::Handshaking { .. } => self.closing = true,
            Phase::Backoff { .. } | Phase::Connecting { .. } if self.closes_on_reconnect() => {
                self.closing = true
            }
            Phase::Connected { .. } | Phase::Ended(_) => {}
            Phase::Backoff { .. } | Phase::Connecting { .. } => self.end(End::Closed),
        }
    }

    /// Every handle is gone (nobody waits for a close) and the session is known to the
    /// server (connected before, not yet presumed lost): worth reconnecting to, only to
    /// close it.
    pub(super) fn closes_on_reconnect(&self) -> bool {
        self.handles_gone && self.ever_connected && self.session_id != 0 && self.away != Away::Lost
    }

    fn command_connected(&mut self, cmd: Command, now: Instant) {
        match cmd {
            Command::Request(rc) => {
                if let Some(path) = rc.watch.as_ref().and_then(WatchReg::registers) {
                    self.watches.begin_registration(path);
                }
                self.send(*rc);
            }
            Command::AddAuth(a) => {
                let (scheme, auth, reply) = (*a).into_parts();
                let (codec, wbuf) = (&self.codec, &mut self.wbuf);
                self.auths
                    .send_now(codec, wbuf, scheme, auth, reply, &mut self.out)
            }
            Command::WatchDropped { path, kind, id } => {
                self.watches.forget(&path, kind, id);
                self.drop_watch(&path, kind);
            }
            Command::ServerList { hosts, reply } => {
                self.update_hosts(hosts.into_vec(), now);
                self.out.push_back(Output::Done { to: reply });
            }
            Command::Close { reply } => {
                self.close_waiters.push(reply);
                if !self.closing {
                    self.send_close(now);
                }
            }
        }
    }

    fn command_disconnected(&mut self, cmd: Command, now: Instant) {
        match cmd {
            Command::Request(rc) if self.away == Away::Lost => {
                requests::fail_unsent(*rc, &Error::connection_loss(), &mut self.out);
            }
            Command::Request(rc) => {
                if let Some(path) = rc.watch.as_ref().and_then(WatchReg::registers) {
                    self.watches.begin_registration(path);
                }
                self.requests.wait(*rc, now);
            }
            Command::AddAuth(a) => {
                let (scheme, auth, reply) = (*a).into_parts();
                self.auths.remember(scheme, auth, Some(reply))
            }
            // Without a connection the server holds no watch to remove, and the next
            // connection re-registers only the watches still held: the watch is forgotten,
            // and nothing deferred until a registration on the path ends.
            Command::WatchDropped { path, kind, id } => self.watches.forget(&path, kind, id),
            Command::ServerList { hosts, reply } => {
                self.update_hosts(hosts.into_vec(), now);
                self.out.push_back(Output::Done { to: reply });
            }
            Command::Close { reply } => {
                self.close_waiters.push(reply);
                self.end(End::Closed);
            }
        }
    }

    pub(super) fn send_close(&mut self, now: Instant) {
        self.closing = true;
        self.send_internal(Request::CloseSession);
        let wait = self.timers.read_timeout.max(Duration::from_millis(100));
        self.timers.close_at = Some(now + wait);
    }
}

/// The session is over: every command gets the end's error.
fn command_ended(cmd: Command, end: End, out: &mut VecDeque<Output>) {
    let err = end.error();
    match cmd {
        Command::Request(rc) => requests::fail_unsent(*rc, &err, out),
        Command::AddAuth(a) => out.push_back(Output::Auth {
            to: a.reply,
            result: Err(err),
        }),
        Command::WatchDropped { .. } => {}
        Command::Close { reply } | Command::ServerList { reply, .. } => {
            out.push_back(Output::Done { to: reply })
        }
    }
}
