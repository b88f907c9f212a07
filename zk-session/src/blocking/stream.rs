//! The byte stream under one connection of the blocking client: plain TCP, or (feature
//! `tls`) rustls over TCP. The I/O thread reads it while callers write it, so it is used
//! through `&self`: the TCP socket alone is read and written outside any lock; rustls'
//! state, which both sides need, is locked only while records are made or taken apart.

use std::{
    io::{self, Read, Write},
    net::{Shutdown, TcpStream, ToSocketAddrs},
    time::{Duration, Instant},
};

use bytes::BytesMut;

use crate::{connect_error::ConnectFailure, security::Security};

/// The most one read of the socket takes.
const READ_ROOM: usize = 64 * 1024;

/// What a stream is read into: the bytes not yet taken apart (`frames`, for the core), and
/// room the socket is read into first. The room is zeroed once, when it is made: reading
/// straight into `frames`' spare capacity would need it zeroed before every read (no
/// `unsafe`), a memset of the whole room for a reply of a hundred bytes; copying what a
/// read brought costs only its length.
#[derive(Debug)]
pub(crate) struct ReadBuf {
    pub frames: BytesMut,
    room: Vec<u8>,
    /// TLS records as they come from the socket, before rustls takes them apart.
    #[cfg(any(feature = "tls", feature = "blocking-tls"))]
    records: Vec<u8>,
}

impl ReadBuf {
    /// A buffer whose reads take at most `room` bytes at a time.
    pub fn new(room: usize) -> Self {
        ReadBuf {
            frames: BytesMut::new(),
            room: vec![0; room],
            #[cfg(any(feature = "tls", feature = "blocking-tls"))]
            records: Vec::new(),
        }
    }

    /// The I/O thread's: room for the largest reads.
    pub fn for_session() -> Self {
        ReadBuf::new(READ_ROOM)
    }

    /// Reads once, with `read`, into the room, and appends what came to `frames`.
    fn fill(&mut self, read: impl FnOnce(&mut [u8]) -> io::Result<usize>) -> io::Result<usize> {
        let n = read(&mut self.room)?;
        let got = &self.room[..n];
        if self.frames.capacity() - self.frames.len() < got.len() {
            // Room for many more reads than this one: frames are split off the front as
            // they are taken apart, and the buffer is reclaimed once they are all dropped.
            self.frames.reserve(got.len().max(READ_ROOM));
        }
        self.frames.extend_from_slice(got);
        Ok(n)
    }
}

/// One connection's stream; see the module documentation.
#[derive(Debug)]
pub(crate) enum Stream {
    Plain(TcpStream),
    #[cfg(any(feature = "tls", feature = "blocking-tls"))]
    Tls(Box<tls::TlsStream>),
}

impl Stream {
    /// Opens a stream to `host:port` (then TLS when `security` says so), within `timeout`.
    pub fn open(
        host: &str,
        port: u16,
        security: &Security,
        timeout: Duration,
    ) -> Result<Stream, ConnectFailure> {
        // The TLS handshake gets what the TCP connect left of the timeout.
        #[cfg_attr(
            not(any(feature = "tls", feature = "blocking-tls")),
            allow(unused_variables)
        )]
        let until = Instant::now() + timeout;
        let tcp = open_tcp(host, port, timeout)?;
        match security {
            Security::Plain => Ok(Stream::Plain(tcp)),
            #[cfg(any(feature = "tls", feature = "blocking-tls"))]
            Security::Tls(config) => tls::TlsStream::handshake(tcp, config, host, until)
                .map(|s| Stream::Tls(Box::new(s))),
        }
    }

    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            #[cfg(any(feature = "tls", feature = "blocking-tls"))]
            Stream::Tls(s) => &s.tcp,
        }
    }

    /// How long a read may block (`None`: for ever).
    pub fn set_read_timeout(&self, wait: Option<Duration>) {
        // A zero timeout is refused: at least a millisecond.
        let wait = wait.map(|w| w.max(Duration::from_millis(1)));
        let _ = self.tcp().set_read_timeout(wait);
    }

    /// Ends the connection both ways: a read or write under way returns.
    pub fn shutdown(&self) {
        let _ = self.tcp().shutdown(Shutdown::Both);
    }

    /// Reads what comes next (plaintext) onto `buf.frames`; `Ok(0)` at the end of the
    /// stream.
    pub fn read(&self, buf: &mut ReadBuf) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => buf.fill(|b| (&*s).read(b)),
            #[cfg(any(feature = "tls", feature = "blocking-tls"))]
            Stream::Tls(s) => s.read(buf),
        }
    }

    /// Writes all of `bytes`; one writer at a time (the session's write turn).
    pub fn write_all(&self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Stream::Plain(s) => (&*s).write_all(bytes),
            #[cfg(any(feature = "tls", feature = "blocking-tls"))]
            Stream::Tls(s) => s.write_all(bytes),
        }
    }
}

/// A TCP stream to `host:port`, each address tried within `timeout` in all.
pub(crate) fn open_tcp(
    host: &str,
    port: u16,
    timeout: Duration,
) -> Result<TcpStream, ConnectFailure> {
    let until = Instant::now() + timeout;
    let addrs = (host, port).to_socket_addrs().map_err(ConnectFailure::Io)?;
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address for the host");
    for addr in addrs {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ConnectFailure::Timeout);
        }
        match TcpStream::connect_timeout(&addr, left) {
            Ok(s) => {
                s.set_nodelay(true).map_err(ConnectFailure::Io)?;
                return Ok(s);
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => return Err(ConnectFailure::Timeout),
            Err(e) => last = e,
        }
    }
    Err(ConnectFailure::Io(last))
}

#[cfg(any(feature = "tls", feature = "blocking-tls"))]
mod tls {
    use std::sync::{Mutex, MutexGuard};

    use rustls::ClientConnection;

    use super::*;
    use crate::{tls::TlsConfig, tls_error};

    /// The most one read of TLS records takes (a record is at most 16 KiB and a little).
    const RECORDS_ROOM: usize = 16 * 1024;

    /// rustls over a TCP socket; see the module documentation.
    #[derive(Debug)]
    pub(crate) struct TlsStream {
        pub tcp: TcpStream,
        conn: Mutex<ClientConnection>,
    }

    fn lock(m: &Mutex<ClientConnection>) -> MutexGuard<'_, ClientConnection> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    impl TlsStream {
        /// Runs the TLS handshake over `tcp` with the server written `host`, until `until`.
        pub fn handshake(
            tcp: TcpStream,
            config: &TlsConfig,
            host: &str,
            until: Instant,
        ) -> Result<TlsStream, ConnectFailure> {
            let c = config.client_for(host)?;
            let why = |e: &io::Error| match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ConnectFailure::Timeout,
                _ => ConnectFailure::Tls(tls_error::classify(e, c.had_client_cert, &c.name)),
            };
            let mut conn = ClientConnection::new(c.config.clone(), c.server_name.clone())
                .map_err(|e| why(&io::Error::new(io::ErrorKind::InvalidData, e)))?;
            while conn.is_handshaking() {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(ConnectFailure::Timeout);
                }
                let set = tcp
                    .set_read_timeout(Some(left))
                    .and(tcp.set_write_timeout(Some(left)));
                set.map_err(ConnectFailure::Io)?;
                conn.complete_io(&mut &tcp).map_err(|e| why(&e))?;
            }
            let _ = tcp.set_write_timeout(None);
            // The session bounds what it queues itself.
            conn.set_buffer_limit(None);
            Ok(TlsStream {
                tcp,
                conn: Mutex::new(conn),
            })
        }

        /// Plaintext onto `buf.frames`: what rustls holds already, else one read of the
        /// socket (outside the lock) taken apart.
        pub fn read(&self, buf: &mut ReadBuf) -> io::Result<usize> {
            if buf.records.is_empty() {
                // Zeroed once, like the room.
                buf.records = vec![0; RECORDS_ROOM];
            }
            loop {
                match buf.fill(|b| lock(&self.conn).reader().read(b)) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    r => return r,
                }
                let n = (&self.tcp).read(&mut buf.records)?;
                if n == 0 {
                    return Ok(0);
                }
                let mut c = lock(&self.conn);
                let mut records = &buf.records[..n];
                while !records.is_empty() {
                    c.read_tls(&mut records)?;
                    c.process_new_packets()
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                }
            }
        }

        /// Encrypts `bytes` (under the lock) and writes the records (outside it).
        pub fn write_all(&self, bytes: &[u8]) -> io::Result<()> {
            let mut records = Vec::with_capacity(bytes.len() + 64);
            {
                let mut c = lock(&self.conn);
                c.writer().write_all(bytes)?;
                while c.wants_write() {
                    c.write_tls(&mut records)?;
                }
            }
            (&self.tcp).write_all(&records)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_appends_what_came_to_the_frames() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut client = TcpStream::connect(addr).unwrap();
        let (server, _) = listener.accept().unwrap();
        client.write_all(b"abc").unwrap();
        let mut buf = ReadBuf::new(16);
        buf.frames.extend_from_slice(b"xy");
        let n = Stream::Plain(server).read(&mut buf).unwrap();
        assert_eq!(n, 3);
        assert_eq!(&buf.frames[..], b"xyabc");
    }

    #[test]
    fn a_refused_port_is_an_io_refusal() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let r = open_tcp("127.0.0.1", port, Duration::from_secs(5));
        assert!(matches!(r, Err(f) if f.is_refusal()));
    }
}
