//! One connection's SASL exchange as a plain value: the session core numbers and writes the
//! packets and hands over each answer; this checks the answer and asks the mechanism for the
//! next token.

use bytes::Bytes;
use zk_proto::{
    jute::{Reader, Record},
    ErrorCode, GetSaslResponse, ReplyHeader,
};

use super::{SaslConfig, SaslExchange, SaslStep};
use crate::{connection::ConnectFailure, AuthFailure, HandshakeError};

/// A SASL exchange under way on a fresh connection, between the ConnectResponse and anything
/// else.
pub(crate) struct SaslHandshake {
    exchange: Box<dyn SaslExchange>,
    mechanism: String,
    /// The xid of the packet whose answer comes next.
    sent: i32,
}

impl std::fmt::Debug for SaslHandshake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaslHandshake")
            .field("mechanism", &self.mechanism)
            .field("sent", &self.sent)
            .finish_non_exhaustive()
    }
}

impl SaslHandshake {
    /// Starts the exchange with `server_host`; returns it and the first token to send. A
    /// mechanism that cannot start is [`ConnectFailure::AuthFailed`].
    pub fn start(sasl: &SaslConfig, server_host: &str) -> Result<(Self, Vec<u8>), ConnectFailure> {
        let mechanism = sasl.mechanism_name().to_owned();
        let failed = |e| failure(&mechanism, AuthFailure::Mechanism(e));
        let (exchange, token) = may_block(|| {
            let mut exchange = sasl.start(server_host)?;
            let token = exchange.initial_response()?;
            Ok((exchange, token))
        })
        .map_err(failed)?;
        let me = SaslHandshake {
            exchange,
            mechanism,
            sent: 0,
        };
        Ok((me, token))
    }

    /// The mechanism's name, for the log (unused when the `tracing` feature is off).
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    pub fn mechanism(&self) -> &str {
        &self.mechanism
    }

    /// The last token went out with `xid`.
    pub fn sent(&mut self, xid: i32) {
        self.sent = xid;
    }

    /// Takes the server's answer to the last packet: `Some(token)` to send next, `None` when
    /// the client is authenticated. A refusal by the server or a failed exchange is
    /// [`ConnectFailure::AuthFailed`]; a malformed answer is a protocol failure (try another
    /// server).
    pub fn answer(&mut self, frame: Bytes) -> Result<Option<Vec<u8>>, ConnectFailure> {
        let mut r = Reader::new(frame);
        let header = ReplyHeader::decode(&mut r).map_err(protocol)?;
        if header.xid != self.sent {
            return Err(ConnectFailure::Protocol(HandshakeError::SaslXid {
                expected: self.sent,
                got: header.xid,
            }));
        }
        if header.err != 0 {
            // -115 for wrong credentials, -124 when the server enforces SASL; it hangs up.
            let code = ErrorCode::from_code(header.err);
            return Err(failure(&self.mechanism, AuthFailure::Refused { code }));
        }
        let reply = GetSaslResponse::decode(&mut r)
            .and_then(|reply| r.finish("SetSASLResponse").map(|()| reply))
            .map_err(protocol)?;
        let exchange = &mut self.exchange;
        match may_block(|| exchange.step(reply.token.as_deref())) {
            Ok(SaslStep::Send(next)) => Ok(Some(next)),
            Ok(SaslStep::Done) => Ok(None),
            Err(e) => Err(failure(&self.mechanism, AuthFailure::Mechanism(e))),
        }
    }
}

/// Runs a mechanism's call, which may block: GSSAPI asks the KDC for a ticket over the
/// network, for seconds when the KDC does not answer. On a multi-thread runtime the worker
/// hands its other tasks to another thread meanwhile (`block_in_place`), so the rest of the
/// application runs on; elsewhere (a current-thread runtime, the core's tests) it just runs.
fn may_block<T>(call: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(call),
        _ => call(),
    }
}

fn failure(mechanism: &str, reason: AuthFailure) -> ConnectFailure {
    let mechanism = mechanism.to_owned();
    ConnectFailure::AuthFailed { mechanism, reason }
}

fn protocol(e: zk_proto::DecodeError) -> ConnectFailure {
    e.into()
}

#[cfg(test)]
pub(crate) mod tests;
