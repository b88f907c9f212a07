//! One connection's GSSAPI exchange (RFC 4752) as a state machine over a GSS-API security
//! context, which is a trait here so that the steps are tested without a KDC.

use super::security_layer;
use crate::{SaslError, SaslExchange, SaslStep};

/// What the exchange needs from a GSS-API client context.
pub(crate) trait Context: Send {
    /// `gss_init_sec_context`: the server's token (none at first) in, the next token out.
    fn step(&mut self, token: Option<&[u8]>) -> Result<Option<Vec<u8>>, SaslError>;
    /// Whether the context is established.
    fn is_complete(&self) -> bool;
    /// `gss_wrap` without confidentiality.
    fn wrap(&mut self, message: &[u8]) -> Result<Vec<u8>, SaslError>;
    /// `gss_unwrap`.
    fn unwrap(&mut self, message: &[u8]) -> Result<Vec<u8>, SaslError>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Kerberos tokens go back and forth (AP-REQ, then the server's AP-REP).
    Context,
    /// The next server token is the wrapped security-layer offer.
    Layer,
    /// The layer answer was sent; ZooKeeper's server answers it once more, and only then is
    /// the client authenticated (the Java client waits for that packet too).
    Final,
    Done,
}

pub(crate) struct Exchange<C> {
    ctx: C,
    phase: Phase,
}

impl<C: Context> Exchange<C> {
    pub(crate) fn new(ctx: C) -> Self {
        Exchange {
            ctx,
            phase: Phase::Context,
        }
    }

    fn after_context_step(&mut self, out: Option<Vec<u8>>) -> Vec<u8> {
        if self.ctx.is_complete() {
            self.phase = Phase::Layer;
        }
        // An established context with nothing left to say sends an empty token, and the
        // server answers with its layer offer.
        out.unwrap_or_default()
    }
}

impl<C: Context> SaslExchange for Exchange<C> {
    fn initial_response(&mut self) -> Result<Vec<u8>, SaslError> {
        let out = self.ctx.step(None)?;
        Ok(self.after_context_step(out))
    }

    fn step(&mut self, token: Option<&[u8]>) -> Result<SaslStep, SaslError> {
        match self.phase {
            Phase::Context => {
                let token = token.ok_or(SaslError::NoServerToken {
                    mechanism: "GSSAPI",
                    expected: "Kerberos token",
                })?;
                let out = self.ctx.step(Some(token))?;
                Ok(SaslStep::Send(self.after_context_step(out)))
            }
            Phase::Layer => {
                let wrapped = token.ok_or(SaslError::NoServerToken {
                    mechanism: "GSSAPI",
                    expected: "security-layer offer",
                })?;
                let offer = self.ctx.unwrap(wrapped)?;
                let answer = security_layer::answer(&offer)?;
                let reply = self.ctx.wrap(&answer)?;
                self.phase = Phase::Final;
                Ok(SaslStep::Send(reply))
            }
            Phase::Final => {
                self.phase = Phase::Done;
                Ok(SaslStep::Done)
            }
            Phase::Done => Err(SaslError::AlreadyComplete {
                mechanism: "GSSAPI",
            }),
        }
    }
}

#[cfg(test)]
mod tests;
