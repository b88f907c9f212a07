//! The handshake on a fresh stream, as input to the core like any other frame: the connect
//! request goes out once the driver has opened the stream, the ConnectResponse and then the
//! SASL answers (when SASL is configured) come in through
//! [`handle_input`](SessionCore::handle_input). A failed handshake is a failed attempt: the
//! next server is tried, or, when the server refused the credentials, the session ends.

use bytes::BytesMut;
use std::time::Instant;
use zk_proto::{jute::Record, ConnectResponse};

use super::{Action, Phase, SessionCore};
use crate::{connect_error::ConnectFailure, security::speaks_tls, trace};

/// How far the handshake of the current stream is.
#[derive(Debug, Default)]
pub(super) enum Handshake {
    /// Waiting for the ConnectResponse.
    #[default]
    Response,
    /// The server hung up on the connect request without a byte, before any connection:
    /// the port may speak TLS only. A probe ([`Action::ProbeTls`]) tells.
    HungUp,
    /// SASL under way on a session the server accepted with `response`.
    #[cfg(feature = "sasl")]
    Sasl {
        response: ConnectResponse,
        sasl: crate::sasl::SaslHandshake,
    },
}

impl SessionCore {
    /// The driver opened the stream of the current attempt to `host`: the connect request
    /// goes out.
    pub fn handle_stream_opened(&mut self, host: usize, now: Instant) {
        if self.phase != (Phase::Connecting { host }) {
            return;
        }
        let _ = now;
        self.phase = Phase::Handshaking { host };
        self.handshake = Handshake::Response;
        self.handshake_heard = false;
        self.attempt_no += 1;
        let request = self.connect_request();
        if let Err(e) = self
            .codec
            .encode_with(&mut self.wbuf, |b| request.encode(b))
        {
            self.attempt_failed(host, e.into(), now);
        }
    }

    /// Takes the handshake's frames from `rbuf` until it is over (connected, or failed) or
    /// the bytes run out; what follows the handshake stays in `rbuf`.
    pub(super) fn handshake_input(&mut self, rbuf: &mut BytesMut, now: Instant) {
        if matches!(self.handshake, Handshake::HungUp) {
            return rbuf.clear();
        }
        self.handshake_heard |= !rbuf.is_empty();
        while let Phase::Handshaking { host } = self.phase {
            match self.handshake_frame(rbuf, host, now) {
                Ok(true) => {}
                Ok(false) => return,
                Err(f) => return self.attempt_failed(host, f, now),
            }
        }
    }

    /// One frame of the handshake, if a whole one is there (false otherwise).
    fn handshake_frame(
        &mut self,
        rbuf: &mut BytesMut,
        host: usize,
        now: Instant,
    ) -> Result<bool, ConnectFailure> {
        if speaks_tls(rbuf) {
            return Err(ConnectFailure::Tls(crate::TlsFailure::ServerExpectsTls));
        }
        let Some(frame) = self.codec.decode_frame(rbuf)? else {
            return Ok(false);
        };
        match std::mem::take(&mut self.handshake) {
            Handshake::HungUp => return Ok(false),
            Handshake::Response => {
                let response = ConnectResponse::decode_exact(frame, "ConnectResponse")?;
                self.connect_response(response, host, now)?;
            }
            #[cfg(feature = "sasl")]
            Handshake::Sasl { response, mut sasl } => {
                let work = sasl.answer(frame)?;
                self.handshake = Handshake::Sasl { response, sasl };
                self.actions.push_back(Action::Sasl {
                    attempt: self.attempt_no,
                    work,
                });
            }
        }
        let _ = now;
        Ok(true)
    }

    /// The driver ran the SASL work of attempt `attempt` ([`Action::Sasl`]): the next token
    /// goes out, or the client is authenticated and the handshake is over, or the attempt
    /// failed.
    #[cfg(feature = "sasl")]
    pub fn handle_sasl_done(&mut self, attempt: u64, done: crate::sasl::SaslDone, now: Instant) {
        let Phase::Handshaking { host } = self.phase else {
            return;
        };
        if attempt != self.attempt_no || !matches!(self.handshake, Handshake::Sasl { .. }) {
            return;
        }
        let Handshake::Sasl { response, mut sasl } = std::mem::take(&mut self.handshake) else {
            return;
        };
        let next = sasl.done(done).and_then(|token| match token {
            Some(token) => self.send_sasl(&mut sasl, token).map(|()| true),
            None => Ok(false),
        });
        match next {
            Ok(true) => self.handshake = Handshake::Sasl { response, sasl },
            Ok(false) => {
                trace::info!(
                    server = %trace::Server(&self.cfg.hosts[host]),
                    session_id = %trace::SessionId(response.session_id),
                    mechanism = sasl.mechanism(),
                    "SASL authenticated"
                );
                self.handshake_done(&response, host, now);
            }
            Err(f) => self.attempt_failed(host, f, now),
        }
    }

    /// The server's ConnectResponse: an expired session, SASL next, or connected.
    fn connect_response(
        &mut self,
        response: ConnectResponse,
        host: usize,
        now: Instant,
    ) -> Result<(), ConnectFailure> {
        if response.timeout <= 0 {
            trace::info!(
                server = %trace::Server(&self.cfg.hosts[host]),
                session_id = %trace::SessionId(self.session_id),
                "the server says the session is expired"
            );
            // The server hangs up after the response; an expired session gets no SASL.
            self.timers.attempt_until = None;
            if self.cfg.new_session_on_expiry && self.ever_connected && !self.closing {
                self.actions.push_back(Action::Disconnect);
                self.wbuf.clear();
                self.session_expired(now);
            } else {
                self.end(super::End::Expired);
            }
            return Ok(());
        }
        #[cfg(feature = "sasl")]
        if let Some(config) = &self.cfg.sasl {
            let (sasl, work) = crate::sasl::SaslHandshake::start(config, &self.cfg.hosts[host].0);
            self.handshake = Handshake::Sasl { response, sasl };
            self.actions.push_back(Action::Sasl {
                attempt: self.attempt_no,
                work,
            });
            return Ok(());
        }
        self.handshake_done(&response, host, now);
        Ok(())
    }

    /// Writes a SASL token as a packet with the session's next xid.
    #[cfg(feature = "sasl")]
    fn send_sasl(
        &mut self,
        sasl: &mut crate::sasl::SaslHandshake,
        token: Vec<u8>,
    ) -> Result<(), ConnectFailure> {
        let xid = self.requests.xid();
        sasl.sent(xid);
        let packet = zk_proto::Request::Sasl(zk_proto::GetSaslRequest {
            token: Some(token.into()),
        });
        self.codec
            .encode_with(&mut self.wbuf, |b| packet.encode(xid, b))
            .map_err(ConnectFailure::from)
    }

    /// The handshake is over: connected; auth, watches and waiting requests go out, or,
    /// when every handle went during the handshake, the close.
    fn handshake_done(&mut self, response: &ConnectResponse, host: usize, now: Instant) {
        self.timers.attempt_until = None;
        self.established(response, host, now);
        if self.closing {
            return self.send_close(now);
        }
        self.replay();
        if response.read_only && self.cfg.hosts.len() > 1 {
            self.actions
                .push_back(Action::ProbeReadWrite { skip: host });
        }
    }
}

impl SessionCore {
    /// The server hung up during the handshake. A plain connect request that got no byte
    /// before the first connection may have reached a TLS port: the driver probes
    /// ([`Action::ProbeTls`]), so that `connect` can stop trying a port that will never
    /// answer in plain. Any other hang-up fails the attempt.
    pub(super) fn handshake_hung_up(&mut self, host: usize, now: Instant) {
        let failure = match self.handshake {
            Handshake::Response
                if !self.handshake_heard
                    && !self.ever_connected
                    && matches!(self.cfg.security, crate::security::Security::Plain) =>
            {
                self.handshake = Handshake::HungUp;
                self.actions.push_back(Action::Disconnect);
                self.actions.push_back(Action::ProbeTls { host });
                return;
            }
            Handshake::HungUp => return,
            // The server closes without a word when our lastZxidSeen is ahead of it, and a
            // TLS port closes on a plain connect request.
            Handshake::Response => ConnectFailure::Closed,
            #[cfg(feature = "sasl")]
            Handshake::Sasl { .. } => ConnectFailure::Io(std::io::ErrorKind::UnexpectedEof.into()),
        };
        self.attempt_failed(host, failure, now);
    }

    /// What the probe of [`Action::ProbeTls`] found: `Some(false)` when `host` does not
    /// answer in plain (a TLS port), `None` when it could not tell.
    pub fn handle_tls_probe(&mut self, host: usize, answers_plain: Option<bool>, now: Instant) {
        if self.phase != (Phase::Handshaking { host })
            || !matches!(self.handshake, Handshake::HungUp)
        {
            return;
        }
        let failure = match answers_plain {
            Some(false) => ConnectFailure::Tls(crate::TlsFailure::ServerExpectsTls),
            _ => ConnectFailure::Closed,
        };
        self.attempt_failed(host, failure, now);
    }
}
