//! A SASL login over a check's raw connection: the client library's DIGEST-MD5 exchange,
//! each token sent as a sasl request (opcode 102, jute `GetSASLRequest`).

use zk_proto::{ErrorCode, GetSaslRequest, Request, Response};
use zk_session::{SaslConfig, SaslStep};

use crate::{
    check::{fail, Finding},
    ctx::Conn,
    setup::Credentials,
};

/// The most tokens an exchange may take (DIGEST-MD5 takes two).
const MAX_ROUNDS: usize = 8;

/// Logs `conn` in as `user` with DIGEST-MD5; `Ok` of the server's error code (`Ok` when
/// the server accepted the login).
pub fn login(conn: &mut Conn, user: &Credentials) -> Result<ErrorCode, Finding> {
    let config = SaslConfig::digest_md5(&user.user, &user.password);
    let mut exchange = config
        .start("zk-sasl-md5")
        .map_err(|e| fail("a SASL exchange", e.to_string()))?;
    let mut token = exchange
        .initial_response()
        .map_err(|e| fail("a SASL initial response", e.to_string()))?;
    for _ in 0..MAX_ROUNDS {
        let request = Request::Sasl(GetSaslRequest {
            token: Some(token.into()),
        });
        let (h, body) = conn.call(&request)?;
        if h.error_code() != ErrorCode::Ok {
            return Ok(h.error_code());
        }
        let answer = match body {
            Some(Response::Sasl(r)) => r.token,
            other => return Err(fail("a SetSASLResponse", format!("{other:?}"))),
        };
        match exchange.step(answer.as_deref()) {
            Ok(SaslStep::Send(next)) => token = next,
            Ok(SaslStep::Done) => return Ok(ErrorCode::Ok),
            Ok(other) => return Err(fail("a SASL step", format!("{other:?}"))),
            Err(e) => return Err(fail("the server's SASL tokens check out", e.to_string())),
        }
    }
    Err(fail(
        format!("a SASL exchange done within {MAX_ROUNDS} tokens"),
        "more tokens",
    ))
}
