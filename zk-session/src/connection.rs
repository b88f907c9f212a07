//! One connection to one server (plain TCP or TLS): the handshake (connect request and
//! response, then SASL when configured) and the read-write probe. All I/O of a connection
//! attempt is here; the session core only hears how it ended.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use zk_proto::{jute::Record, ConnectRequest, ConnectResponse, FrameCodec};

use crate::transport::{self, ReadHalf, Security, WriteHalf};

/// An established connection with a completed handshake. The session core owns everything
/// else (the write buffer, the requests in flight); the driver moves bytes through these
/// halves. `Debug` (in redact.rs) shows neither the session password nor the bytes read.
pub(crate) struct Connection {
    pub rd: ReadHalf,
    pub wr: WriteHalf,
    /// Bytes read behind the handshake, then every read.
    pub rbuf: BytesMut,
    pub response: ConnectResponse,
    /// The session's next xid: the handshake may have used some (SASL); the core goes on
    /// from here.
    pub next_xid: i32,
}

/// The SASL mechanism every new connection authenticates with, if any; without the `sasl`
/// feature there is none to give.
#[cfg(feature = "sasl")]
pub(crate) type SaslOption = Option<crate::sasl::SaslConfig>;
/// See the `sasl` feature's definition.
#[cfg(not(feature = "sasl"))]
pub(crate) type SaslOption = Option<NoSasl>;

/// No value: without the `sasl` feature a [`SaslOption`] is always `None`.
#[cfg(not(feature = "sasl"))]
#[derive(Debug, Clone)]
pub(crate) enum NoSasl {}

/// Why an attempt to connect failed; every failure means "try the next server", and the
/// last one is kept for the error [`ClientBuilder::connect`](crate::ClientBuilder::connect)
/// returns when no server could be reached.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectFailure {
    #[error("{0}")]
    Io(std::io::Error),
    #[error("no connect response in time")]
    Timeout,
    #[error("bad connect response: {0}")]
    Protocol(String),
    /// The server refused the client's credentials: final, not worth another server.
    #[cfg_attr(not(feature = "sasl"), allow(dead_code))]
    #[error("authentication failed: {0}")]
    AuthFailed(String),
    #[error(
        "the server closed the connection instead of answering the connect request \
         (a TLS port? a server behind the session's last zxid?)"
    )]
    Closed,
    /// The TLS handshake failed: rustls' error (unknown CA, name mismatch, an alert from the
    /// server) or the I/O error that ended it.
    #[cfg(feature = "tls")]
    #[error("TLS handshake failed: {0}")]
    Tls(String),
}

/// What a new connection says before anything else: the connect request, then SASL (when
/// set and the session is alive) numbered from `xid`.
pub(crate) struct Handshake {
    pub request: ConnectRequest,
    pub sasl: SaslOption,
    pub xid: i32,
}

/// Connects to `addr` (with TLS if `security` says so), sends the connect request, reads the
/// connect response and runs the rest of the `handshake`; all within `timeout`.
pub(crate) async fn connect(
    addr: (String, u16),
    handshake: Handshake,
    timeout: Duration,
    codec: FrameCodec,
    security: Security,
) -> Result<Connection, ConnectFailure> {
    let Handshake { request, sasl, xid } = handshake;
    let attempt = async move {
        let (mut rd, mut wr) = transport::open(&addr.0, addr.1, &security).await?;
        let mut out = BytesMut::with_capacity(64);
        codec
            .encode_with(&mut out, |b| request.encode(b))
            .map_err(|e| ConnectFailure::Protocol(e.to_string()))?;
        wr.write_all(&out).await.map_err(ConnectFailure::Io)?;
        let mut rbuf = BytesMut::with_capacity(64 * 1024);
        let mut codec_mut = codec;
        // The server closes without a word when our lastZxidSeen is ahead of it, and a TLS
        // port closes on a plain connect request.
        let frame = match read_frame(&mut rd, &mut rbuf, &mut codec_mut).await {
            Err(ConnectFailure::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(ConnectFailure::Closed)
            }
            r => r,
        }?;
        let response = ConnectResponse::decode_exact(frame, "ConnectResponse")
            .map_err(|e| ConnectFailure::Protocol(e.to_string()))?;
        // An expired session gets no SASL: the server hangs up after the response.
        #[cfg(feature = "sasl")]
        let next_xid = match &sasl {
            Some(sasl) if response.timeout > 0 => {
                let next = crate::sasl::authenticate(
                    &mut rd,
                    &mut wr,
                    &mut rbuf,
                    &mut codec_mut,
                    sasl,
                    &addr.0,
                    xid,
                )
                .await?;
                crate::trace::info!(
                    server = %crate::trace::Server(&addr),
                    session_id = %crate::trace::SessionId(response.session_id),
                    mechanism = sasl.mechanism_name(),
                    "SASL authenticated"
                );
                next
            }
            _ => xid,
        };
        #[cfg(not(feature = "sasl"))]
        let next_xid = {
            let _ = sasl;
            xid
        };
        Ok(Connection {
            rd,
            wr,
            rbuf,
            response,
            next_xid,
        })
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(r) => r,
        Err(_) => Err(ConnectFailure::Timeout),
    }
}

/// Reads one whole frame, leaving what follows it in `rbuf`. The end of the stream is an
/// `UnexpectedEof` error.
pub(crate) async fn read_frame<R: AsyncRead + Unpin>(
    rd: &mut R,
    rbuf: &mut BytesMut,
    codec: &mut FrameCodec,
) -> Result<Bytes, ConnectFailure> {
    loop {
        if speaks_tls(rbuf) {
            return Err(ConnectFailure::Protocol(
                "the server answered with TLS: connect with TLS to this port".into(),
            ));
        }
        match codec.decode_frame(rbuf) {
            Ok(Some(f)) => return Ok(f),
            Ok(None) => {}
            Err(e) => return Err(ConnectFailure::Protocol(e.to_string())),
        }
        if rd.read_buf(rbuf).await.map_err(ConnectFailure::Io)? == 0 {
            return Err(ConnectFailure::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
    }
}

/// Whether `rbuf` starts like a TLS record (an alert or a handshake, version 3.x) rather than
/// a frame: such a length would be over 350 MB, far above any frame limit.
fn speaks_tls(rbuf: &[u8]) -> bool {
    matches!(rbuf, [0x15 | 0x16, 0x03, ..])
}

/// Asks each server with the `isro` four-letter word whether it serves writes, until one does;
/// used while connected to a read-only server. Returns that server's index. The probe uses
/// the session's transport: a TLS-only port answers four-letter words over TLS only.
pub(crate) async fn find_read_write_server(
    hosts: Vec<(String, u16)>,
    skip: usize,
    security: Security,
) -> usize {
    let mut pause = Duration::from_millis(200);
    loop {
        for (i, (h, p)) in hosts.iter().enumerate() {
            if i == skip && hosts.len() > 1 {
                continue;
            }
            let probe = async {
                let (rd, mut wr) = transport::open(h, *p, &security).await.ok()?;
                wr.write_all(b"isro").await.ok()?;
                wr.flush().await.ok()?;
                // The answer is "rw" or "ro": read no more than that, whatever the peer sends.
                let mut buf = Vec::with_capacity(2);
                rd.take(2).read_to_end(&mut buf).await.ok()?;
                Some(buf)
            };
            if let Ok(Some(answer)) = tokio::time::timeout(Duration::from_secs(2), probe).await {
                if answer.starts_with(b"rw") {
                    return i;
                }
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tls_record_is_told_from_a_frame() {
        // A TLS alert (fatal, decode_error) and a ServerHello record header.
        assert!(speaks_tls(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32]));
        assert!(speaks_tls(&[0x16, 0x03, 0x01]));
        // A connect response frame starts with its length, well under 0x1503_0000.
        assert!(!speaks_tls(&[0x00, 0x00, 0x00, 0x24]));
        assert!(!speaks_tls(&[0x15]));
        assert!(!speaks_tls(&[]));
    }
}
