//! Requests: the xid counter, the in-flight FIFO, the queue of requests waiting for a
//! connection, and the delivery of every reply (with the watch it registers) exactly once.

use crate::ProtocolViolation;
use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use std::time::Instant;
use zk_proto::{
    jute::{Reader, Record},
    xid, ErrorCode, OpCode, RemoveWatchesRequest, ReplyHeader, Request, Response, WatcherEvent,
};

use super::{
    watch_table::WatchTable, Drop_, End, Key, Output, Phase, RequestCmd, SessionCore, WatchReg,
};
use crate::{trace, watched_event::WatchKind, Error};

/// The error (-124) a server that enforces SASL answers an unauthenticated request with.
const SASL_REQUIRED: i32 = -124;

/// The smallest queue of waiting requests worth scanning for abandoned ones.
const MIN_WAITING_PRUNE: usize = 64;

/// A request written (or about to be written) on the current connection.
#[derive(Debug)]
pub(super) struct InFlight {
    pub xid: i32,
    pub op: OpCode,
    /// `None` for the session's own requests (removeWatches after a drop, closeSession).
    pub reply: Option<Key>,
    pub watch: Option<WatchReg>,
    /// The znode path (the server's), kept only while debug events are on: the
    /// request-failed event names it.
    #[cfg(feature = "tracing")]
    pub path: Option<String>,
}

/// A request that came while there was no connection.
#[derive(Debug)]
pub(super) struct Waiting {
    pub cmd: RequestCmd,
    pub since: Instant,
}

#[derive(Debug)]
pub(super) struct Requests {
    next_xid: i32,
    pub inflight: VecDeque<InFlight>,
    /// Requests that arrived while disconnected, in order.
    pub waiting: VecDeque<Waiting>,
    /// Length of `waiting` at which the requests whose callers gave up are dropped from it.
    prune_at: usize,
}

impl Requests {
    /// A request that never went out ends its registration.
    pub fn end_unsent(&self, watches: &mut WatchTable, cmd: &RequestCmd) {
        end_unsent_registration(watches, cmd);
    }

    pub fn new() -> Self {
        Requests {
            next_xid: 1,
            inflight: VecDeque::new(),
            waiting: VecDeque::new(),
            prune_at: MIN_WAITING_PRUNE,
        }
    }

    pub fn xid(&mut self) -> i32 {
        let x = self.next_xid;
        self.next_xid = if x == i32::MAX { 1 } else { x + 1 };
        x
    }

    /// When the oldest waiting request came.
    pub fn oldest_waiting(&self) -> Option<Instant> {
        self.waiting.front().map(|w| w.since)
    }

    /// Queues a request until a connection is there.
    pub fn wait(&mut self, cmd: RequestCmd, since: Instant) {
        self.waiting.push_back(Waiting { cmd, since });
    }

    /// Whether the waiting queue has grown enough to be worth a
    /// [`prune_waiting`](SessionCore::prune_waiting).
    pub fn prune_due(&self) -> bool {
        self.waiting.len() >= self.prune_at
    }

    /// Drops the waiting requests whose callers `gone` says gave up.
    pub fn prune(&mut self, watches: &mut WatchTable, mut gone: impl FnMut(Key) -> bool) {
        self.waiting.retain(|w| {
            let abandoned = w.cmd.reply.is_none_or(&mut gone);
            if abandoned {
                end_unsent_registration(watches, &w.cmd);
            }
            !abandoned
        });
        self.prune_at = (self.waiting.len() * 2).max(MIN_WAITING_PRUNE);
    }

    /// Answers every waiting request with `err`.
    pub fn fail_waiting(
        &mut self,
        watches: &mut WatchTable,
        err: &Error,
        out: &mut VecDeque<Output>,
    ) {
        for w in std::mem::take(&mut self.waiting) {
            end_unsent_registration(watches, &w.cmd);
            reply(out, w.cmd.reply, Err(err.clone()));
        }
    }

    /// The session ended: answers everything with `err`.
    pub fn fail_all(&mut self, err: &Error, out: &mut VecDeque<Output>) {
        for p in self.inflight.drain(..) {
            reply(out, p.reply, Err(err.clone()));
        }
        for w in std::mem::take(&mut self.waiting) {
            fail_unsent(w.cmd, err, out);
        }
    }
}

/// Tells the caller `to`, if any, `result`.
pub(super) fn reply(out: &mut VecDeque<Output>, to: Option<Key>, result: Result<Response, Error>) {
    if let Some(to) = to {
        out.push_back(Output::Reply { to, result });
    }
}

/// A request that never went out fails with `err`, and so does the one-shot watch it would
/// have set.
pub(super) fn fail_unsent(cmd: RequestCmd, err: &Error, out: &mut VecDeque<Output>) {
    match cmd.watch {
        Some(WatchReg::Oneshot { id, .. }) => out.push_back(Output::Watch {
            to: id,
            result: Err(err.clone()),
        }),
        Some(WatchReg::Stream { id, .. }) => out.push_back(Output::WatchEnded { to: id }),
        _ => {}
    }
    reply(out, cmd.reply, Err(err.clone()));
}

/// The path of `request` for its failure event, when that event would be seen: the
/// allocation is spared otherwise.
#[cfg(feature = "tracing")]
fn failure_path(request: &Request) -> Option<String> {
    if tracing::enabled!(tracing::Level::DEBUG) {
        trace::znode_path(request).map(str::to_owned)
    } else {
        None
    }
}

/// A request that never went out ends its registration: nothing reached the server for it,
/// so nothing dropped meanwhile has to be removed on its account.
fn end_unsent_registration(watches: &mut WatchTable, cmd: &RequestCmd) {
    if let Some(w) = &cmd.watch {
        if let (Some(path), Some(id)) = (w.registers(), w.id()) {
            let _ = watches.end_registration(path);
            watches.take_abandoned(id);
        }
    }
}

impl SessionCore {
    fn connected(&self) -> bool {
        matches!(self.phase, Phase::Connected { .. })
    }

    /// Encodes a caller's request and queues it for its reply.
    pub(super) fn send(&mut self, rc: RequestCmd) {
        if rc.reply.is_none() {
            // The caller gave up (timeout or cancel) while it waited for a connection.
            self.registration_failed(&rc);
            return;
        }
        let xid = self.requests.xid();
        let op = rc.request.op_code();
        match self
            .codec
            .encode_with(&mut self.wbuf, |b| rc.request.encode(xid, b))
        {
            Ok(()) => self.requests.inflight.push_back(InFlight {
                xid,
                op,
                reply: rc.reply,
                watch: rc.watch,
                #[cfg(feature = "tracing")]
                path: failure_path(&rc.request),
            }),
            Err(e) => {
                self.registration_failed(&rc);
                let err = Error::InvalidArgument(e.into());
                if let Some(id) = rc.watch.as_ref().and_then(WatchReg::id) {
                    self.out.push_back(Output::WatchEnded { to: id });
                }
                reply(&mut self.out, rc.reply, Err(err));
            }
        }
    }

    /// A request that would have registered a watch is not sent after all: watches dropped
    /// on its path meanwhile are checked for removal now.
    fn registration_failed(&mut self, rc: &RequestCmd) {
        let Some(w) = &rc.watch else { return };
        if let (Some(path), Some(id)) = (w.registers(), w.id()) {
            self.watches.take_abandoned(id);
            for kind in self.watches.end_registration(path) {
                self.drop_watch(path, kind);
            }
        }
    }

    /// Whether enough requests wait for a connection that those whose callers gave up
    /// should be dropped: then the driver calls [`prune_waiting`](Self::prune_waiting).
    pub fn wants_prune(&self) -> bool {
        self.requests.prune_due()
    }

    /// Drops the requests waiting for a connection whose callers `gone` says gave up (timed
    /// out or cancelled), so that a long outage cannot grow the queue without bound and a
    /// request nobody waits for is never sent. The driver calls it when
    /// [`wants_prune`](Self::wants_prune) says so, and before each input of a handshake
    /// (whose end sends the waiting requests).
    pub fn prune_waiting(&mut self, gone: impl FnMut(Key) -> bool) {
        self.requests.prune(&mut self.watches, gone);
    }

    /// Whether requests wait for a connection.
    pub fn has_waiting(&self) -> bool {
        !self.requests.waiting.is_empty()
    }

    /// Sends a request of the session's own, whose reply nobody waits for.
    pub(super) fn send_internal(&mut self, req: Request) {
        let xid = self.requests.xid();
        if self
            .codec
            .encode_with(&mut self.wbuf, |b| req.encode(xid, b))
            .is_ok()
        {
            self.requests.inflight.push_back(InFlight {
                xid,
                op: req.op_code(),
                reply: None,
                watch: None,
                #[cfg(feature = "tracing")]
                path: failure_path(&req),
            });
        }
    }

    pub(super) fn send_ping(&mut self, now: Instant) {
        let _ = self
            .codec
            .encode_with(&mut self.wbuf, |b| Request::Ping.encode(xid::PING, b));
        self.timers.last_send = now;
    }

    /// Decodes every complete frame in `rbuf`, read from the current connection at `now`.
    pub fn handle_input(&mut self, rbuf: &mut BytesMut, now: Instant) {
        if let Phase::Handshaking { .. } = self.phase {
            self.handshake_input(rbuf, now);
            if let Phase::Handshaking { .. } = self.phase {
                return;
            }
        }
        if !self.connected() {
            rbuf.clear();
            return;
        }
        let mut frames = 0;
        let result = loop {
            match self.codec.decode_frame(rbuf) {
                Ok(Some(f)) => {
                    frames += 1;
                    if let Err(d) = self.frame(f) {
                        break Err(d);
                    }
                }
                Ok(None) => break Ok(()),
                // A length over the limit or below zero: nothing after it can be trusted.
                Err(_) => break Err(Drop_::Reconnect),
            }
        };
        if frames > 0 {
            self.timers.last_recv = now;
        }
        if let Err(d) = result {
            self.connection_ended(d, now);
        }
    }

    fn frame(&mut self, frame: Bytes) -> Result<(), Drop_> {
        let mut r = Reader::new(frame);
        let header = ReplyHeader::decode(&mut r).map_err(|_| Drop_::Reconnect)?;
        match header.xid {
            xid::NOTIFICATION => {
                let event = WatcherEvent::decode(&mut r).map_err(|_| Drop_::Reconnect)?;
                // Notifications never advance lastZxidSeen: their zxid is -1.
                self.watches.dispatch(
                    event.event_type,
                    &event.path,
                    &self.cfg.chroot,
                    &mut self.out,
                );
                Ok(())
            }
            // A server that enforces SASL answers whatever comes first with -124 and hangs
            // up; no server will take this client without credentials.
            xid::PING | xid::SET_WATCHES if header.err == SASL_REQUIRED => {
                trace::warn!(
                    xid = header.xid,
                    err = header.err,
                    "the server requires SASL authentication: the session ends"
                );
                Err(Drop_::End(End::AuthFailed))
            }
            xid::PING | xid::SET_WATCHES => Ok(()),
            xid::AUTH => {
                if self.auths.reply(header.err, &mut self.out) {
                    Ok(())
                } else {
                    Err(Drop_::End(End::AuthFailed))
                }
            }
            got => self.reply(got, header, r),
        }
    }

    fn reply(&mut self, got: i32, header: ReplyHeader, mut r: Reader) -> Result<(), Drop_> {
        let Some(p) = self.requests.inflight.pop_front() else {
            return Err(Drop_::Reconnect);
        };
        if p.reply.is_some() {
            self.owed += 1;
        }
        if p.xid != got {
            trace::warn!(
                xid = got,
                expected_xid = p.xid,
                "reply out of order: reconnecting"
            );
            let expected = p.xid;
            let err =
                Error::ProtocolViolation(ProtocolViolation::ReplyOutOfOrder { expected, got });
            self.answer(p, Err(err));
            return Err(Drop_::Reconnect);
        }
        if header.zxid > 0 {
            self.last_zxid = self.last_zxid.max(header.zxid);
        }
        let is_close = p.op == OpCode::CloseSession;
        let result = if header.err != 0 {
            let code = ErrorCode::from_code(header.err);
            // The path as the caller gave it, under the chroot.
            trace::debug!(
                xid = got,
                zxid = header.zxid,
                op = ?p.op,
                path = p.path.as_deref().map(|s| self.cfg.chroot.to_client(s)).as_deref(),
                err = ?code,
                "request failed"
            );
            Err(Error::Code(code))
        } else {
            match Response::decode(p.op, &mut r) {
                Ok(resp) => Ok(resp),
                Err(e) => {
                    self.answer(p, Err(Error::Protocol(e)));
                    return Err(Drop_::Reconnect);
                }
            }
        };
        if header.err == SASL_REQUIRED {
            // Ended (and published) before the caller hears of it, as for any end; the
            // others hear AuthFailed, this caller the server's own code.
            self.end(End::AuthFailed);
            self.answer(p, result);
            return Err(Drop_::End(End::AuthFailed));
        }
        self.answer(p, result);
        if is_close {
            return Err(Drop_::End(End::Closed));
        }
        Ok(())
    }

    /// Delivers a reply, registering the watch the request asked for when it succeeded.
    pub(super) fn answer(&mut self, p: InFlight, result: Result<Response, Error>) {
        if let Some(w) = p.watch {
            // Watches dropped on this path while the request was in flight: checked once the
            // reply's own watch is in the table.
            let deferred = w.registers().and_then(|path| {
                let kinds = self.watches.end_registration(path);
                (!kinds.is_empty()).then(|| (path.to_owned(), kinds))
            });
            self.register(p.op, &result, w);
            if let Some((path, kinds)) = deferred {
                for kind in kinds {
                    self.drop_watch(&path, kind);
                }
            }
        }
        reply(&mut self.out, p.reply, result);
    }

    /// Registers the watch `w` that a request answered with `result` set; a watch that
    /// the reply did not set, or whose caller dropped it meanwhile, ends (its channel
    /// closes).
    fn register(&mut self, op: OpCode, result: &Result<Response, Error>, w: WatchReg) {
        let (path, kind, id) = match w {
            WatchReg::Oneshot { path, id, .. } => {
                let kind = match (op, result) {
                    (OpCode::Exists, Ok(_)) | (OpCode::GetData, Ok(_)) => Some(WatchKind::Data),
                    // exists on a missing znode still leaves a watch for its creation.
                    (OpCode::Exists, Err(Error::Code(ErrorCode::NoNode))) => Some(WatchKind::Exist),
                    (OpCode::GetChildren | OpCode::GetChildren2, Ok(_)) => Some(WatchKind::Child),
                    _ => None,
                };
                (path, kind, id)
            }
            WatchReg::Stream { path, kind, id, .. } => (path, result.is_ok().then_some(kind), id),
            WatchReg::Remove { path, watcher_type } => {
                if result.is_ok() {
                    self.watches
                        .remove_local(&path, watcher_type, &mut self.out);
                }
                return;
            }
        };
        let abandoned = self.watches.take_abandoned(id);
        let Some(kind) = kind else {
            return self.out.push_back(Output::WatchEnded { to: id });
        };
        if abandoned {
            // The caller dropped the watch while the request was in flight: the server set
            // it, so remove it unless another watch needs it.
            self.drop_watch(&path, kind);
        } else {
            self.watches.add(kind, path.clone(), id);
        }
        if !matches!(kind, WatchKind::Persistent | WatchKind::PersistentRecursive) {
            // Wanted or not, it took the place of a persistent watch on the server.
            self.oneshot_registered(kind, &path);
        }
    }

    /// Removes a server-side watch nobody listens to any more. Sent at once, so that it
    /// reaches the server before any later request that sets a watch on the same path.
    /// Without a connection there is nothing on the server to remove: the next connection
    /// re-registers only the watches still held.
    pub(super) fn drop_watch(&mut self, path: &str, kind: WatchKind) {
        if !self.connected() {
            return;
        }
        if let Some(watcher_type) = self.watches.watch_dropped(path, kind) {
            self.send_internal(Request::RemoveWatches(RemoveWatchesRequest {
                path: path.to_owned(),
                watcher_type,
            }));
            if matches!(kind, WatchKind::Persistent | WatchKind::PersistentRecursive) {
                self.set_oneshots_again(path);
            }
        }
    }

    /// The connection ended: whatever was in flight on it is answered now with `err`.
    pub(super) fn fail_inflight(&mut self, err: &Error) {
        while let Some(p) = self.requests.inflight.pop_front() {
            self.answer(p, Err(err.clone()));
        }
        self.auths.connection_ended(err, &mut self.out);
    }
}
