//! Credentials: kept once each, re-sent on every connection before anything else, and the
//! callers of `add_auth` answered by the reply to their packet.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use zk_proto::{xid, AuthPacket, ErrorCode, FrameCodec, Request};

use super::{Key, Output};
use crate::{trace, Error};

/// Auth packet type the server expects (always 0).
const AUTH_TYPE: i32 = 0;

#[derive(Debug)]
struct Credential {
    scheme: String,
    auth: Bytes,
    /// Callers waiting for the first reply to this credential.
    waiters: Vec<Key>,
}

#[derive(Debug, Default)]
pub(super) struct Auths {
    /// Every credential ever added, each once however often it was added.
    list: Vec<Credential>,
    /// One entry per auth packet in flight (replies carry xid -4 and come in order).
    inflight: VecDeque<Sent>,
}

/// An auth packet in flight: its scheme (for the log; never the credentials) and who waits.
#[derive(Debug, Default)]
struct Sent {
    scheme: String,
    waiters: Vec<Key>,
}

/// Tells every caller in `waiters` `result`.
fn answer(
    waiters: impl IntoIterator<Item = Key>,
    result: &Result<(), Error>,
    out: &mut VecDeque<Output>,
) {
    out.extend(waiters.into_iter().map(|to| Output::Auth {
        to,
        result: result.clone(),
    }));
}

fn encode(
    codec: &FrameCodec,
    wbuf: &mut BytesMut,
    scheme: &str,
    auth: &Bytes,
) -> Result<(), Error> {
    let packet = Request::Auth(AuthPacket {
        auth_type: AUTH_TYPE,
        scheme: scheme.to_owned(),
        auth: Some(auth.clone()),
    });
    codec
        .encode_with(wbuf, |b| packet.encode(xid::AUTH, b))
        .map_err(|e| Error::InvalidArgument(e.into()))
}

impl Auths {
    pub fn new(initial: &[(String, Bytes)]) -> Self {
        let mut a = Auths::default();
        for (s, v) in initial {
            a.remember(s.clone(), v.clone(), None);
        }
        a
    }

    /// Keeps a credential for every reconnect; `waiter` is answered by its next reply.
    pub fn remember(&mut self, scheme: String, auth: Bytes, waiter: Option<Key>) {
        let cred = match self
            .list
            .iter_mut()
            .position(|c| c.scheme == scheme && c.auth == auth)
        {
            Some(i) => &mut self.list[i],
            None => {
                self.list.push(Credential {
                    scheme,
                    auth,
                    waiters: Vec::new(),
                });
                self.list.last_mut().expect("just pushed")
            }
        };
        cred.waiters.extend(waiter);
    }

    /// Sends a credential added while connected (every time it is added, as the Java client
    /// does) and keeps it for reconnects.
    pub fn send_now(
        &mut self,
        codec: &FrameCodec,
        wbuf: &mut BytesMut,
        scheme: String,
        auth: Bytes,
        waiter: Key,
        out: &mut VecDeque<Output>,
    ) {
        match encode(codec, wbuf, &scheme, &auth) {
            Ok(()) => {
                self.inflight.push_back(Sent {
                    scheme: scheme.clone(),
                    waiters: vec![waiter],
                });
                self.remember(scheme, auth, None);
            }
            Err(e) => answer([waiter], &Err(e), out),
        }
    }

    /// Writes one packet per credential on a new connection. Credentials that cannot fit a
    /// frame are refused (and forgotten), as they would have been if added while connected.
    pub fn resend(&mut self, codec: &FrameCodec, wbuf: &mut BytesMut, out: &mut VecDeque<Output>) {
        let inflight = &mut self.inflight;
        self.list.retain_mut(|c| {
            let waiters = std::mem::take(&mut c.waiters);
            match encode(codec, wbuf, &c.scheme, &c.auth) {
                Ok(()) => {
                    inflight.push_back(Sent {
                        scheme: c.scheme.clone(),
                        waiters,
                    });
                    true
                }
                Err(e) => {
                    answer(waiters, &Err(e), out);
                    false
                }
            }
        });
    }

    /// The reply to the oldest auth packet in flight. False when the server refused it (the
    /// session is over then).
    pub fn reply(&mut self, err: i32, out: &mut VecDeque<Output>) -> bool {
        let Sent { scheme, waiters } = self.inflight.pop_front().unwrap_or_default();
        let result = if err == 0 {
            trace::info!(scheme, "auth accepted");
            Ok(())
        } else {
            let code = ErrorCode::from_code(err);
            trace::warn!(scheme, err = ?code, "auth refused");
            Err(Error::Code(code))
        };
        let _ = &scheme; // Only the log reads it (none without the `tracing` feature).
        answer(waiters, &result, out);
        err != ErrorCode::AuthFailed.code()
    }

    /// The connection ended: the packets in flight are answered with `err`.
    pub fn connection_ended(&mut self, err: &Error, out: &mut VecDeque<Output>) {
        let err = Err(err.clone());
        answer(self.inflight.drain(..).flat_map(|s| s.waiters), &err, out);
    }

    /// The session ended: every waiter is answered with `err`.
    pub fn fail_all(&mut self, err: &Error, out: &mut VecDeque<Output>) {
        self.connection_ended(err, out);
        let err = Err(err.clone());
        for c in &mut self.list {
            answer(c.waiters.drain(..), &err, out);
        }
    }
}
