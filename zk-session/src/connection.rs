//! One TCP connection to one server: the handshake, buffers, and the requests in flight on it.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{
        tcp::{OwnedReadHalf, OwnedWriteHalf},
        TcpStream,
    },
};
use tokio_util::codec::Decoder;
use zk_proto::{jute::Record, ConnectRequest, ConnectResponse, FrameCodec};

/// An established connection with a completed handshake. The session core owns everything
/// else (the write buffer, the requests in flight); the driver moves bytes through these
/// halves.
#[derive(Debug)]
pub(crate) struct Connection {
    pub rd: OwnedReadHalf,
    pub wr: OwnedWriteHalf,
    /// Bytes read behind the connect response, then every read.
    pub rbuf: BytesMut,
    pub response: ConnectResponse,
}

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
}

/// Connects to `addr`, sends the connect request and reads the connect response, all within
/// `timeout`.
pub(crate) async fn connect(
    addr: (String, u16),
    host: usize,
    request: ConnectRequest,
    timeout: Duration,
    codec: FrameCodec,
) -> Result<Connection, ConnectFailure> {
    let attempt = async move {
        let stream = TcpStream::connect((addr.0.as_str(), addr.1))
            .await
            .map_err(ConnectFailure::Io)?;
        stream.set_nodelay(true).map_err(ConnectFailure::Io)?;
        let (mut rd, mut wr) = stream.into_split();
        let mut out = BytesMut::with_capacity(64);
        codec
            .encode_with(&mut out, |b| request.encode(b))
            .map_err(|e| ConnectFailure::Protocol(e.to_string()))?;
        wr.write_all(&out).await.map_err(ConnectFailure::Io)?;
        let mut rbuf = BytesMut::with_capacity(64 * 1024);
        let mut codec_mut = codec;
        let frame: Bytes = loop {
            match codec_mut.decode(&mut rbuf) {
                Ok(Some(f)) => break f,
                Ok(None) => {}
                Err(e) => return Err(ConnectFailure::Protocol(e.to_string())),
            }
            // The server closes without a word when our lastZxidSeen is ahead of it.
            if rd.read_buf(&mut rbuf).await.map_err(ConnectFailure::Io)? == 0 {
                return Err(ConnectFailure::Io(std::io::ErrorKind::UnexpectedEof.into()));
            }
        };
        let response = ConnectResponse::decode_exact(frame, "ConnectResponse")
            .map_err(|e| ConnectFailure::Protocol(e.to_string()))?;
        let _ = host;
        Ok(Connection {
            rd,
            wr,
            rbuf,
            response,
        })
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(r) => r,
        Err(_) => Err(ConnectFailure::Timeout),
    }
}

/// Asks each server with the `isro` four-letter word whether it serves writes, until one does;
/// used while connected to a read-only server. Returns that server's index.
pub(crate) async fn find_read_write_server(hosts: Vec<(String, u16)>, skip: usize) -> usize {
    let mut pause = Duration::from_millis(200);
    loop {
        for (i, (h, p)) in hosts.iter().enumerate() {
            if i == skip && hosts.len() > 1 {
                continue;
            }
            let probe = async {
                let mut s = TcpStream::connect((h.as_str(), *p)).await.ok()?;
                s.write_all(b"isro").await.ok()?;
                // The answer is "rw" or "ro": read no more than that, whatever the peer sends.
                let mut buf = Vec::with_capacity(2);
                (&mut s).take(2).read_to_end(&mut buf).await.ok()?;
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
