//! Runs a [`SaslExchange`](super::SaslExchange) on a fresh connection, between the
//! ConnectResponse and anything else.

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use zk_proto::{
    jute::{Reader, Record},
    ErrorCode, FrameCodec, GetSaslRequest, GetSaslResponse, ReplyHeader, Request,
};

use super::SaslConfig;
use crate::connection::{read_frame, ConnectFailure};

/// Authenticates the connection with `sasl`, numbering its packets from `xid`. Returns the
/// next xid. A refusal by the server or a failed exchange is [`ConnectFailure::AuthFailed`];
/// a lost connection is an ordinary failure.
pub(crate) async fn authenticate<R, W>(
    rd: &mut R,
    wr: &mut W,
    rbuf: &mut BytesMut,
    codec: &mut FrameCodec,
    sasl: &SaslConfig,
    server_host: &str,
    mut xid: i32,
) -> Result<i32, ConnectFailure>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let failed =
        |why: String| ConnectFailure::AuthFailed(format!("SASL {}: {why}", sasl.mechanism_name()));
    let mut exchange = sasl.start(server_host).map_err(|e| failed(e.to_string()))?;
    let mut token = exchange
        .initial_response()
        .map_err(|e| failed(e.to_string()))?;
    let mut out = BytesMut::new();
    loop {
        let sent = xid;
        xid = if xid == i32::MAX { 1 } else { xid + 1 };
        let packet = Request::Sasl(GetSaslRequest {
            token: Some(token.into()),
        });
        out.clear();
        codec
            .encode_with(&mut out, |b| packet.encode(sent, b))
            .map_err(|e| ConnectFailure::Protocol(e.to_string()))?;
        wr.write_all(&out).await.map_err(ConnectFailure::Io)?;
        let mut r = Reader::new(read_frame(rd, rbuf, codec).await?);
        let header =
            ReplyHeader::decode(&mut r).map_err(|e| ConnectFailure::Protocol(e.to_string()))?;
        if header.xid != sent {
            return Err(ConnectFailure::Protocol(format!(
                "reply xid {} to the SASL packet with xid {sent}",
                header.xid
            )));
        }
        if header.err != 0 {
            // -115 for wrong credentials, -124 when the server enforces SASL; it hangs up.
            let code = ErrorCode::from_code(header.err);
            return Err(failed(format!(
                "the server refused: {code} ({})",
                header.err
            )));
        }
        let reply = GetSaslResponse::decode(&mut r)
            .and_then(|reply| r.finish("SetSASLResponse").map(|()| reply))
            .map_err(|e| ConnectFailure::Protocol(e.to_string()))?;
        match exchange
            .step(reply.token.as_deref())
            .map_err(|e| failed(e.to_string()))?
        {
            super::SaslStep::Send(next) => token = next,
            super::SaslStep::Done => return Ok(xid),
        }
    }
}

#[cfg(test)]
mod tests;
