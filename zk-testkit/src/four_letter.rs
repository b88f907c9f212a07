//! Four-letter-word commands (`srvr`, `stat`, `cons`, `wchs`, …) and the server [`Mode`].

use std::{
    io::{self, Read, Write},
    net::{SocketAddr, TcpStream},
    time::{Duration, Instant},
};

/// Sends a four-letter word and reads the answer until the server closes the connection.
///
/// `timeout` bounds the whole exchange (connect, write, read). A paused (SIGSTOPped) server
/// accepts the connection in the kernel but never answers, so this returns `TimedOut`.
pub fn four_letter_word(addr: SocketAddr, word: &str, timeout: Duration) -> io::Result<String> {
    let deadline = Instant::now() + timeout;
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    let remaining = |d: Instant| {
        d.checked_duration_since(Instant::now())
            .filter(|r| !r.is_zero())
            .ok_or_else(|| io::Error::from(io::ErrorKind::TimedOut))
    };
    stream.set_write_timeout(Some(remaining(deadline)?))?;
    stream.write_all(word.as_bytes())?;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        stream.set_read_timeout(Some(remaining(deadline)?))?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                return Err(io::Error::from(io::ErrorKind::TimedOut))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The server's count of received packets (requests, pings and handshakes), from `srvr`'s
/// `Received:` line; `None` if it cannot be read.
pub fn server_received(addr: SocketAddr) -> Option<u64> {
    let srvr = four_letter_word(addr, "srvr", Duration::from_secs(10)).ok()?;
    srvr.lines()
        .find_map(|l| l.strip_prefix("Received:"))?
        .trim()
        .parse()
        .ok()
}

/// A server's role, from the `Mode:` line of `srvr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mode {
    /// A standalone server.
    Standalone,
    /// The ensemble's leader.
    Leader,
    /// A follower.
    Follower,
    /// An observer.
    Observer,
    /// A partitioned member serving reads only (`readonlymode.enabled`).
    ReadOnly,
}

impl Mode {
    /// Parses the `Mode:` line of a `srvr`/`stat` answer; `None` when the server is not serving.
    ///
    /// ```
    /// use zk_testkit::Mode;
    /// assert_eq!(Mode::from_srvr("Zxid: 0x0\nMode: leader\n"), Some(Mode::Leader));
    /// assert_eq!(Mode::from_srvr("This ZooKeeper instance is not currently serving requests\n"), None);
    /// ```
    pub fn from_srvr(srvr: &str) -> Option<Mode> {
        let value = srvr.lines().find_map(|l| l.strip_prefix("Mode:"))?.trim();
        Some(match value {
            "standalone" => Mode::Standalone,
            "leader" => Mode::Leader,
            "follower" => Mode::Follower,
            "observer" => Mode::Observer,
            "read-only" => Mode::ReadOnly,
            _ => return None,
        })
    }
}
