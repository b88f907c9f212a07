//! The byte stream under a connection: plain TCP, or TLS over TCP with the `tls` feature.
//!
//! Both halves are enums rather than boxed trait objects so that the plain case costs one
//! match per poll and the types stay `Debug`.
//!
//! A TLS stream may accept bytes from `poll_write` that it could not put on the socket yet.
//! The session writes only while it has bytes to write, so nothing would flush those: the
//! TLS read half, which the session always polls, flushes them first (see `TlsShared`).

use std::{
    fmt, io,
    pin::Pin,
    task::{Context, Poll},
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{
        tcp::{OwnedReadHalf, OwnedWriteHalf},
        TcpStream,
    },
};

use crate::{connect_error::ConnectFailure, security::Security};

#[cfg(feature = "tls")]
type TlsStream = tokio_rustls::client::TlsStream<TcpStream>;

/// Both halves of a TLS stream. The lock is never held across an await, and both halves are
/// polled by one task, so it is never contended.
#[cfg(feature = "tls")]
type TlsShared = std::sync::Arc<std::sync::Mutex<TlsStream>>;

/// The reading half of a connection's stream.
pub(crate) enum ReadHalf {
    Tcp(OwnedReadHalf),
    #[cfg(feature = "tls")]
    Tls(TlsShared),
}

/// The writing half of a connection's stream.
pub(crate) enum WriteHalf {
    Tcp(OwnedWriteHalf),
    #[cfg(feature = "tls")]
    Tls(TlsShared),
}

/// Opens a stream to `host:port`: TCP connect, then the TLS handshake if `security` asks for
/// it. The caller bounds the time it takes.
pub(crate) async fn open(
    host: &str,
    port: u16,
    security: &Security,
) -> Result<(ReadHalf, WriteHalf), ConnectFailure> {
    let stream = TcpStream::connect((host, port))
        .await
        .map_err(ConnectFailure::Io)?;
    stream.set_nodelay(true).map_err(ConnectFailure::Io)?;
    match security {
        Security::Plain => {
            let (rd, wr) = stream.into_split();
            Ok((ReadHalf::Tcp(rd), WriteHalf::Tcp(wr)))
        }
        #[cfg(feature = "tls")]
        Security::Tls(tls) => {
            let stream = tls.handshake(host, stream).await?;
            let shared = TlsShared::new(std::sync::Mutex::new(stream));
            Ok((ReadHalf::Tls(shared.clone()), WriteHalf::Tls(shared)))
        }
        // `blocking-tls` without `tls`: `build` refuses such a configuration first.
        #[cfg(all(feature = "blocking-tls", not(feature = "tls")))]
        Security::Tls(_) => Err(ConnectFailure::Io(async_tls_missing())),
    }
}

/// The async client was given TLS settings in a build with `blocking-tls` but not `tls`.
#[cfg(all(feature = "blocking-tls", not(feature = "tls")))]
pub(crate) fn async_tls_missing() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "the async client needs the `tls` feature (`blocking-tls` is the blocking client's)",
    )
}

impl fmt::Debug for ReadHalf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadHalf::Tcp(s) => s.fmt(f),
            #[cfg(feature = "tls")]
            ReadHalf::Tls(_) => f.write_str("ReadHalf::Tls"),
        }
    }
}

impl fmt::Debug for WriteHalf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteHalf::Tcp(s) => s.fmt(f),
            #[cfg(feature = "tls")]
            WriteHalf::Tls(_) => f.write_str("WriteHalf::Tls"),
        }
    }
}

impl AsyncRead for ReadHalf {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ReadHalf::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            ReadHalf::Tls(s) => {
                let mut s = lock(s);
                if s.get_ref().1.wants_write() {
                    // Bytes a write left inside the TLS layer. Pending registers this task for
                    // writability, so it comes back here; a failure shows on the next write.
                    let _ = Pin::new(&mut *s).poll_flush(cx);
                }
                Pin::new(&mut *s).poll_read(cx, buf)
            }
        }
    }
}

impl AsyncWrite for WriteHalf {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            WriteHalf::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            WriteHalf::Tls(s) => Pin::new(&mut *lock(s)).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Tcp(s) => Pin::new(s).poll_flush(cx),
            #[cfg(feature = "tls")]
            WriteHalf::Tls(s) => Pin::new(&mut *lock(s)).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            WriteHalf::Tls(s) => Pin::new(&mut *lock(s)).poll_shutdown(cx),
        }
    }
}

#[cfg(feature = "tls")]
fn lock(s: &TlsShared) -> std::sync::MutexGuard<'_, TlsStream> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}
