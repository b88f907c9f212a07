//! One connection's SASL exchange as a plain value: the session core numbers and writes the
//! packets and hands over each answer; this checks the answer and says what the mechanism
//! must do next, as [`SaslWork`] that the driver runs (on the blocking pool when the
//! mechanism may block: GSSAPI asks the KDC) and hands back as [`SaslDone`].

use std::sync::Arc;

use bytes::Bytes;
use zk_proto::{
    jute::{Reader, Record},
    ErrorCode, GetSaslResponse, ReplyHeader,
};

use super::{SaslConfig, SaslError, SaslExchange, SaslMechanism, SaslStep};
use crate::{connect_error::ConnectFailure, AuthFailure, HandshakeError};

/// A SASL exchange under way on a fresh connection, between the ConnectResponse and anything
/// else.
pub(crate) struct SaslHandshake {
    /// `None` while the mechanism works in the driver.
    exchange: Option<Box<dyn SaslExchange>>,
    mechanism: String,
    /// The mechanism's calls may block.
    blocks: bool,
    /// The server's name in the mechanism, for a refusal to name.
    server_principal: Option<String>,
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

/// A call into a mechanism, which may block: to run with [`SaslWork::run`] (on the blocking
/// pool when [`SaslWork::blocks`]).
pub(crate) struct SaslWork {
    call: Call,
    blocks: bool,
}

enum Call {
    /// Start the exchange with a server and make the first token.
    Start {
        mechanism: Arc<dyn SaslMechanism>,
        server_host: String,
    },
    /// Take the server's token and say what comes next.
    Step {
        exchange: Box<dyn SaslExchange>,
        token: Option<Bytes>,
    },
}

impl std::fmt::Debug for SaslWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let call = match &self.call {
            Call::Start { server_host, .. } => format!("start with {server_host}"),
            Call::Step { .. } => "step".to_owned(),
        };
        f.debug_struct("SaslWork")
            .field("call", &call)
            .field("blocks", &self.blocks)
            .finish()
    }
}

/// Works compare by what they do, for the core's tests (the exchange itself cannot compare).
impl PartialEq for SaslWork {
    fn eq(&self, other: &Self) -> bool {
        let what = |w: &SaslWork| match &w.call {
            Call::Start { server_host, .. } => Some(server_host.clone()),
            Call::Step { .. } => None,
        };
        what(self) == what(other) && self.blocks == other.blocks
    }
}

/// What a [`SaslWork`] came to: the exchange back, and the mechanism's answer.
pub(crate) struct SaslDone {
    exchange: Option<Box<dyn SaslExchange>>,
    result: Result<SaslStep, SaslError>,
}

impl std::fmt::Debug for SaslDone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaslDone")
            .field("result", &self.result.as_ref().map(|_| ()))
            .finish_non_exhaustive()
    }
}

impl SaslDone {
    /// A call that could not run to its end (it panicked): the exchange is lost.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub fn failed(why: SaslError) -> Self {
        SaslDone {
            exchange: None,
            result: Err(why),
        }
    }
}

impl SaslWork {
    /// Whether the call may block the thread (then the driver runs it on the blocking pool).
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub fn blocks(&self) -> bool {
        self.blocks
    }

    /// Runs the call: what a driver does with it, on whatever thread suits.
    pub fn run(self) -> SaslDone {
        match self.call {
            Call::Start {
                mechanism,
                server_host,
            } => match mechanism.start(&server_host) {
                Ok(mut exchange) => {
                    let result = exchange.initial_response().map(SaslStep::Send);
                    SaslDone {
                        exchange: Some(exchange),
                        result,
                    }
                }
                Err(e) => SaslDone {
                    exchange: None,
                    result: Err(e),
                },
            },
            Call::Step {
                mut exchange,
                token,
            } => {
                let result = exchange.step(token.as_deref());
                SaslDone {
                    exchange: Some(exchange),
                    result,
                }
            }
        }
    }
}

impl SaslHandshake {
    /// Starts the exchange with `server_host`: the handshake, and the work that makes the
    /// first token (hand its end to [`done`](Self::done)).
    pub fn start(sasl: &SaslConfig, server_host: &str) -> (Self, SaslWork) {
        let mechanism = sasl.mechanism_arc();
        let blocks = mechanism.may_block();
        let me = SaslHandshake {
            exchange: None,
            mechanism: mechanism.name().to_owned(),
            blocks,
            server_principal: mechanism.server_principal(server_host),
            sent: 0,
        };
        let call = Call::Start {
            mechanism,
            server_host: server_host.to_owned(),
        };
        (me, SaslWork { call, blocks })
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

    /// True while the mechanism works (a [`SaslWork`] is out).
    #[cfg(test)]
    pub fn working(&self) -> bool {
        self.exchange.is_none()
    }

    /// Takes the server's answer to the last packet: the work that makes the mechanism's
    /// next move. A refusal by the server is [`ConnectFailure::AuthFailed`]; a malformed
    /// answer (or one that comes while the mechanism works) is a protocol failure (try
    /// another server).
    pub fn answer(&mut self, frame: Bytes) -> Result<SaslWork, ConnectFailure> {
        let mut r = Reader::new(frame);
        let header = ReplyHeader::decode(&mut r).map_err(protocol)?;
        let Some(exchange) = self.exchange.take().filter(|_| header.xid == self.sent) else {
            return Err(ConnectFailure::Protocol(HandshakeError::SaslXid {
                expected: self.sent,
                got: header.xid,
            }));
        };
        if header.err != 0 {
            // -115 for wrong credentials, -124 when the server enforces SASL; it hangs up.
            let code = ErrorCode::from_code(header.err);
            let server_principal = self.server_principal.take();
            let refused = AuthFailure::Refused {
                code,
                server_principal,
            };
            return Err(failure(&self.mechanism, refused));
        }
        let reply = GetSaslResponse::decode(&mut r)
            .and_then(|reply| r.finish("SetSASLResponse").map(|()| reply))
            .map_err(protocol)?;
        let call = Call::Step {
            exchange,
            token: reply.token,
        };
        Ok(SaslWork {
            call,
            blocks: self.blocks,
        })
    }

    /// The mechanism's work is done: `Some(token)` to send next, `None` when the client is
    /// authenticated. A failed exchange is [`ConnectFailure::AuthFailed`].
    pub fn done(&mut self, done: SaslDone) -> Result<Option<Vec<u8>>, ConnectFailure> {
        self.exchange = done.exchange;
        match done.result {
            Ok(SaslStep::Send(next)) => Ok(Some(next)),
            Ok(SaslStep::Done) => Ok(None),
            Err(e) => Err(failure(&self.mechanism, AuthFailure::Mechanism(e))),
        }
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
