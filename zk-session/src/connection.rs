//! One connection to one server (plain TCP or TLS): opening its stream, and the read-write
//! probe. The handshake on the stream (connect request and response, then SASL) is the
//! session core's, fed with the bytes the driver reads.

use std::time::Duration;

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::transport::{self, ReadHalf, Security, WriteHalf};

/// An open stream to a server. The session core owns everything else (the handshake, the
/// write buffer, the requests in flight); the driver moves bytes through these halves.
/// `Debug` (in redact.rs) does not show the bytes read.
pub(crate) struct Connection {
    pub rd: ReadHalf,
    pub wr: WriteHalf,
    /// Every read.
    pub rbuf: BytesMut,
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

/// Opens a stream to `addr` (with TLS if `security` says so). The core bounds the time the
/// attempt takes, handshake included: the driver drops this future when it ends the attempt.
pub(crate) async fn open(
    addr: (String, u16),
    security: Security,
) -> Result<Connection, ConnectFailure> {
    let (rd, wr) = transport::open(&addr.0, addr.1, &security).await?;
    Ok(Connection {
        rd,
        wr,
        rbuf: BytesMut::with_capacity(64 * 1024),
    })
}

/// Whether `rbuf` starts like a TLS record (an alert or a handshake, version 3.x) rather than
/// a frame: such a length would be over 350 MB, far above any frame limit.
pub(crate) fn speaks_tls(rbuf: &[u8]) -> bool {
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
