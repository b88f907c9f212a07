//! One connection to one server (plain TCP or TLS): opening its stream, and the read-write
//! probe. The handshake on the stream (connect request and response, then SASL) is the
//! session core's, fed with the bytes the driver reads.

use std::time::{Duration, Instant};

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{
    security::Security,
    transport::{self, ReadHalf, WriteHalf},
};

/// An open stream to a server. The session core owns everything else (the handshake, the
/// write buffer, the requests in flight); the driver moves bytes through these halves.
/// `Debug` (in redact.rs) does not show the bytes read.
pub(crate) struct Connection {
    pub rd: ReadHalf,
    pub wr: WriteHalf,
    /// Every read.
    pub rbuf: BytesMut,
    /// The room the next read gets: see [`READ_ROOM_MIN`] and [`READ_ROOM_MAX`].
    read_room: usize,
    /// When the last read returned bytes.
    last_read: Instant,
}

/// The room an idle connection reads into: it reads a ping reply (20 bytes) every few
/// seconds, and with thousands of sessions in a process every idle KiB counts.
const READ_ROOM_MIN: usize = 256;
/// The room a busy connection reads into: one read takes hundreds of replies.
const READ_ROOM_MAX: usize = 64 * 1024;
/// No read for this long (a ping period is seconds): the read buffer goes back to its least.
const IDLE: Duration = Duration::from_secs(1);

impl Connection {
    pub fn new(rd: ReadHalf, wr: WriteHalf) -> Connection {
        Connection {
            rd,
            wr,
            rbuf: BytesMut::new(),
            read_room: READ_ROOM_MIN,
            last_read: tokio::time::Instant::now().into_std(),
        }
    }

    /// Makes room for the next read. Below an eighth of the room left, the buffer gets the
    /// whole room again: moved to its front when nothing read is still in use, else anew.
    pub fn reserve_read(&mut self) {
        if self.rbuf.capacity() - self.rbuf.len() < self.read_room / 8 {
            self.rbuf.reserve(self.read_room);
        }
    }

    /// After a read at `now`, before its frames are taken: a read that filled all the room
    /// there was may have left bytes in the socket, so the next reads get more room.
    pub fn read_done(&mut self, now: Instant) {
        self.last_read = now;
        if self.rbuf.len() == self.rbuf.capacity() {
            self.read_room = (self.read_room * 4).min(READ_ROOM_MAX);
        }
    }

    /// Gives back the room a burst of replies grew, once nothing has been read for a while.
    pub fn shrink_if_idle(&mut self, now: Instant) {
        let idle = now.saturating_duration_since(self.last_read) >= IDLE;
        if idle && self.rbuf.is_empty() && self.read_room > READ_ROOM_MIN {
            self.rbuf = BytesMut::new();
            self.read_room = READ_ROOM_MIN;
        }
    }
}

/// Why an attempt to connect failed; every failure means "try the next server", and the
/// last one is kept for the error [`ClientBuilder::connect`](crate::ClientBuilder::connect)
/// returns when no server could be reached.
pub(crate) use crate::connect_error::ConnectFailure;

/// Opens a stream to `addr` (with TLS if `security` says so). The core bounds the time the
/// attempt takes, handshake included: the driver drops this future when it ends the attempt.
pub(crate) async fn open(
    addr: (String, u16),
    security: Security,
) -> Result<Connection, ConnectFailure> {
    let (rd, wr) = transport::open(&addr.0, addr.1, &security).await?;
    Ok(Connection::new(rd, wr))
}

/// Whether `host:port` answers a plain four-letter word (`srvr`): a ZooKeeper plain port
/// answers even when it is not serving or the word is not allowed, a TLS port hangs up
/// without a byte. `None` when the probe tells nothing (no connection, a reset, no answer in
/// a second).
pub(crate) async fn answers_plain(host: &str, port: u16) -> Option<bool> {
    let probe = async {
        let mut s = tokio::net::TcpStream::connect((host, port)).await.ok()?;
        // Five bytes: a TLS port needs a whole record header before it gives up on us.
        s.write_all(b"srvr\n").await.ok()?;
        let mut byte = [0u8; 1];
        match s.read(&mut byte).await {
            Ok(n) => Some(n > 0),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Some(false),
            Err(_) => None,
        }
    };
    tokio::time::timeout(Duration::from_secs(1), probe)
        .await
        .ok()
        .flatten()
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
