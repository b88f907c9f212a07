//! A misbehaving fake ZooKeeper server: a proxy in front of a real server that misbehaves in
//! one chosen way, so the tests can show that the checks catch it.
//!
//! Frames from the client are checked as a strict server would (a ConnectRequest first, then
//! a length in 1..=jute.maxbuffer, a request zk-proto decodes exactly, a valid xid); what the
//! proxy does with a frame that fails, and with the server's replies, is its [`Misbehaviour`].

// Two test binaries (misbehaving, fuzz) each use a part of it.
#![allow(dead_code)]

use std::{
    io::{self, Read, Write},
    net::{Shutdown, SocketAddr, TcpListener, TcpStream},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    thread,
    time::Duration,
};

use bytes::Bytes;
use zk_proto::{jute::Record, xid, ConnectRequest, Request};

/// How the fake server misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misbehaviour {
    /// None: every byte passes both ways (the control).
    Faithful,
    /// Malformed input from any client crashes the whole server.
    CrashOnMalformed,
    /// Malformed input leaves that connection open and silent forever.
    HangOnMalformed,
    /// A malformed request with a header is answered as a success; other malformed input
    /// hangs.
    AcceptMalformed,
    /// Two replies that come close together are sent in swapped order.
    ReorderReplies,
    /// Every third reply carries zxid 1.
    ZxidBackwards,
}

/// The fake server; dropping it stops it.
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    crashed: AtomicBool,
    /// Every socket, to close them all on a crash.
    sockets: Mutex<Vec<TcpStream>>,
    /// Hung connections, kept open until the server is dropped.
    hung: Mutex<Vec<TcpStream>>,
}

impl Shared {
    fn crash(&self, listener_addr: SocketAddr) {
        self.crashed.store(true, Ordering::SeqCst);
        for s in self.sockets.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        // Wake the accept loop so that it sees the crash and drops the listener.
        let _ = TcpStream::connect(listener_addr);
    }
}

impl FakeServer {
    /// Starts a fake server in front of the real one at `upstream`.
    pub fn start(upstream: SocketAddr, how: Misbehaviour) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        thread::spawn(move || {
            for client in listener.incoming() {
                if s.crashed.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(upstream) else {
                    continue;
                };
                let conn = Connection::new(client, server, how, addr, s.clone());
                conn.spawn();
            }
        });
        FakeServer { addr, shared }
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.shared.crash(self.addr);
        for s in self.shared.hung.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

struct Connection {
    client: TcpStream,
    server: TcpStream,
    how: Misbehaviour,
    listener: SocketAddr,
    shared: Arc<Shared>,
    /// Set when the connection hangs: the reply direction must not close the client then.
    hung: Arc<AtomicBool>,
    /// Writes to the client come from both directions' threads.
    to_client: Arc<Mutex<TcpStream>>,
}

impl Connection {
    fn new(
        client: TcpStream,
        server: TcpStream,
        how: Misbehaviour,
        listener: SocketAddr,
        shared: Arc<Shared>,
    ) -> Self {
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        {
            let mut sockets = shared.sockets.lock().unwrap();
            sockets.push(client.try_clone().unwrap());
            sockets.push(server.try_clone().unwrap());
        }
        let to_client = Arc::new(Mutex::new(client.try_clone().unwrap()));
        Connection {
            client,
            server,
            how,
            listener,
            shared,
            hung: Arc::default(),
            to_client,
        }
    }

    fn spawn(self) {
        let server = self.server.try_clone().unwrap();
        let to_client = self.to_client.clone();
        let hung = self.hung.clone();
        let how = self.how;
        thread::spawn(move || replies(server, to_client, hung, how));
        thread::spawn(move || self.requests());
    }

    /// Client to server.
    fn requests(mut self) {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        let mut first = true;
        loop {
            // A reset counts as a close.
            let n: usize = self.client.read(&mut chunk).unwrap_or_default();
            if n == 0 {
                if !buf.is_empty() && self.how != Misbehaviour::Faithful {
                    // The client gave up in the middle of a frame.
                    return self.misbehave();
                }
                let _ = self.server.shutdown(Shutdown::Write);
                return;
            }
            if self.how != Misbehaviour::CrashOnMalformed
                && self.how != Misbehaviour::HangOnMalformed
                && self.how != Misbehaviour::AcceptMalformed
            {
                if self.server.write_all(&chunk[..n]).is_err() {
                    return;
                }
                continue;
            }
            buf.extend_from_slice(&chunk[..n]);
            while buf.len() >= 4 {
                let len = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
                if len <= 0 || len > 0xfffff {
                    return self.misbehave();
                }
                let end = 4 + len as usize;
                if buf.len() < end {
                    break;
                }
                let frame: Vec<u8> = buf.drain(..end).collect();
                let body = Bytes::copy_from_slice(&frame[4..]);
                let valid = if first {
                    valid_connect(body.clone())
                } else {
                    valid_request(body.clone())
                };
                first = false;
                if valid {
                    if self.server.write_all(&frame).is_err() {
                        return;
                    }
                } else if self.how == Misbehaviour::AcceptMalformed && body.len() >= 8 {
                    // A success reply to whatever the header's xid was.
                    let mut reply = vec![0, 0, 0, 16];
                    reply.extend_from_slice(&body[..4]);
                    reply.extend_from_slice(&1i64.to_be_bytes());
                    reply.extend_from_slice(&0i32.to_be_bytes());
                    let _ = self.to_client.lock().unwrap().write_all(&reply);
                } else {
                    return self.misbehave();
                }
            }
        }
    }

    fn misbehave(self) {
        match self.how {
            Misbehaviour::CrashOnMalformed => self.shared.crash(self.listener),
            _ => {
                self.hung.store(true, Ordering::SeqCst);
                self.shared
                    .hung
                    .lock()
                    .unwrap()
                    .push(self.client.try_clone().unwrap());
                let _ = self.server.shutdown(Shutdown::Both);
            }
        }
    }
}

fn valid_connect(body: Bytes) -> bool {
    ConnectRequest::decode_exact(body, "ConnectRequest")
        .is_ok_and(|c| c.protocol_version == 0 && c.passwd.len() == 16)
}

fn valid_request(body: Bytes) -> bool {
    Request::decode(body).is_ok_and(|(h, r)| match r {
        Request::Ping => h.xid == xid::PING,
        Request::Auth(_) => h.xid == xid::AUTH,
        Request::SetWatches(_) | Request::SetWatches2(_) => h.xid == xid::SET_WATCHES,
        _ => h.xid > 0,
    })
}

/// Server to client, misbehaving as `how` says for replies.
fn replies(
    mut server: TcpStream,
    to_client: Arc<Mutex<TcpStream>>,
    hung: Arc<AtomicBool>,
    how: Misbehaviour,
) {
    let rewrite = matches!(
        how,
        Misbehaviour::ReorderReplies | Misbehaviour::ZxidBackwards
    );
    if how == Misbehaviour::ReorderReplies {
        let _ = server.set_read_timeout(Some(Duration::from_millis(50)));
    }
    let send = |bytes: &[u8]| to_client.lock().unwrap().write_all(bytes);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    let mut first = true;
    let mut held: Option<Vec<u8>> = None;
    let mut replies = 0u64;
    loop {
        let n = match server.read(&mut chunk) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                // Nothing came to swap with: let the held reply go.
                if let Some(h) = held.take() {
                    let _ = send(&h);
                }
                continue;
            }
            Err(_) => 0,
        };
        if n == 0 {
            if let Some(h) = held.take() {
                let _ = send(&h);
            }
            if !hung.load(Ordering::SeqCst) {
                let _ = to_client.lock().unwrap().shutdown(Shutdown::Both);
            }
            return;
        }
        if hung.load(Ordering::SeqCst) {
            continue;
        }
        if !rewrite {
            if send(&chunk[..n]).is_err() {
                return;
            }
            continue;
        }
        buf.extend_from_slice(&chunk[..n]);
        while buf.len() >= 4 {
            let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
            if buf.len() < 4 + len {
                break;
            }
            let mut frame: Vec<u8> = buf.drain(..4 + len).collect();
            let reply_xid = (!first && frame.len() >= 20)
                .then(|| i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]));
            first = false;
            match (how, reply_xid) {
                (Misbehaviour::ReorderReplies, Some(x)) if x > 0 => match held.take() {
                    Some(h) => {
                        let _ = send(&frame);
                        let _ = send(&h);
                    }
                    None => held = Some(frame),
                },
                (Misbehaviour::ZxidBackwards, Some(x)) if x > 0 => {
                    replies += 1;
                    let zxid = i64::from_be_bytes(frame[8..16].try_into().unwrap());
                    if replies % 3 == 0 && zxid > 1 {
                        frame[8..16].copy_from_slice(&1i64.to_be_bytes());
                    }
                    let _ = send(&frame);
                }
                _ => {
                    let _ = send(&frame);
                }
            }
        }
    }
}
