//! A scripted fake ZooKeeper server for the hostile-server tests.
//!
//! [`FakeServer`] listens on 127.0.0.1 with a port of the kernel's choosing. Each connection it
//! accepts is a [`Peer`]: the test reads the client's frames, decoded with zk-proto (the
//! connect request first, then a request header and body per frame), and answers with whatever
//! bytes the case scripts, well-formed or not. [`Peer::serve`] plays a well-behaved server for
//! the part of a case where the client has to show that it recovered. [`client`] holds the
//! client's side of a case.

// Two test binaries (hostile_server, hostile_server_timeouts) each use a part of it.
#![allow(dead_code)]

pub mod client;

use std::{
    future::Future,
    time::{Duration, Instant},
};

use bytes::{BufMut, Bytes, BytesMut};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};
use tokio_util::codec::Decoder;
use zk_proto::{
    jute::Record, xid, ConnectRequest, ConnectResponse, Create2Response, CreateResponse, ErrorCode,
    EventType, FrameCodec, GetDataResponse, KeeperState, ReplyHeader, Request, RequestHeader,
    Response, Stat, SyncResponse, WatcherEvent,
};

/// The session id every fake server hands out.
pub const SESSION_ID: i64 = 0x5eed_0000_0000_0001;
/// The session password every fake server hands out.
pub const PASSWD: [u8; 16] = [0xa5; 16];
/// The generous bound on any single wait in these tests: reaching it means a hang.
pub const STEP: Duration = Duration::from_secs(15);

/// Awaits `fut`, failing the test if it takes longer than `limit`.
pub async fn within<T>(limit: Duration, what: &str, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(limit, fut).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: still waiting after {limit:?}"),
    }
}

/// A length-prefixed frame around `body`.
pub fn frame(body: &[u8]) -> BytesMut {
    let mut out = BytesMut::with_capacity(body.len() + 4);
    out.put_i32(body.len() as i32);
    out.put_slice(body);
    out
}

/// A reply frame: header, then `body` (which a real server sends only when `err` is 0).
pub fn reply_frame(xid: i32, zxid: i64, err: i32, body: Option<&Response>) -> BytesMut {
    let mut b = BytesMut::new();
    ReplyHeader { xid, zxid, err }.encode(&mut b);
    if let Some(r) = body {
        r.encode(&mut b);
    }
    frame(&b)
}

/// A notification frame: header (-1, -1, 0) and a WatcherEvent.
pub fn notification_frame(event_type: EventType, path: &str) -> BytesMut {
    let mut b = BytesMut::new();
    ReplyHeader {
        xid: xid::NOTIFICATION,
        zxid: -1,
        err: 0,
    }
    .encode(&mut b);
    WatcherEvent {
        event_type,
        state: KeeperState::SyncConnected,
        path: path.to_owned(),
    }
    .encode(&mut b);
    frame(&b)
}

/// A connect response frame for [`SESSION_ID`]; without the trailing readOnly byte
/// (a 36-byte body, as servers before 3.4 send) when `read_only_byte` is false.
pub fn connect_response_frame(timeout_ms: i32, read_only_byte: bool) -> BytesMut {
    connect_response_frame_for(timeout_ms, SESSION_ID, read_only_byte)
}

/// Like [`connect_response_frame`], for any session id.
pub fn connect_response_frame_for(
    timeout_ms: i32,
    session_id: i64,
    read_only_byte: bool,
) -> BytesMut {
    let mut b = BytesMut::new();
    ConnectResponse {
        protocol_version: 0,
        timeout: timeout_ms,
        session_id,
        passwd: Bytes::from_static(&PASSWD),
        read_only: false,
    }
    .encode(&mut b);
    assert_eq!(b.len(), 37);
    if !read_only_byte {
        b.truncate(36);
    }
    frame(&b)
}

/// The Stat the well-behaved server reports for every znode.
pub fn stat(version: i32) -> Stat {
    Stat {
        czxid: 1,
        mzxid: 1,
        version,
        ..Stat::default()
    }
}

/// A getData reply whose data is `data`.
pub fn get_data_reply(xid: i32, zxid: i64, data: &[u8]) -> BytesMut {
    let body = Response::GetData(GetDataResponse {
        data: Some(Bytes::copy_from_slice(data)),
        stat: stat(1),
    });
    reply_frame(xid, zxid, 0, Some(&body))
}

/// What the well-behaved server answers: getData returns the path as data, so a test can
/// tell which reply went to which request.
fn normal_answer(req: &Request) -> (i32, Option<Response>) {
    match req {
        Request::GetData(r) => (
            0,
            Some(Response::GetData(GetDataResponse {
                data: Some(Bytes::copy_from_slice(r.path.as_bytes())),
                stat: stat(1),
            })),
        ),
        Request::Exists(_) | Request::SetData(_) => (0, Some(Response::Stat(stat(1)))),
        Request::Create(r) => (
            0,
            Some(Response::Create(CreateResponse {
                path: r.path.clone(),
            })),
        ),
        Request::Create2(r) | Request::CreateContainer(r) => (
            0,
            Some(Response::Create2(Create2Response {
                path: r.path.clone(),
                stat: stat(0),
            })),
        ),
        Request::Sync(r) => (
            0,
            Some(Response::Sync(SyncResponse {
                path: r.path.clone(),
            })),
        ),
        Request::Delete(_) | Request::CloseSession | Request::RemoveWatches(_) => {
            (0, Some(Response::Empty))
        }
        _ => (ErrorCode::Unimplemented.code(), None),
    }
}

/// Resident memory of this process in KiB, from /proc (None elsewhere).
pub fn vm_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A listening fake server.
pub struct FakeServer {
    listener: TcpListener,
    /// Connections accepted so far.
    pub accepted: usize,
}

/// Whether `stream` is the client's `srvr` probe, which it sends to a server that hung up
/// before its first session to tell a plain port from a TLS one; answered as a plain
/// ZooKeeper port answers it, so the case sees only the client's real connections.
async fn answered_probe(stream: &TcpStream) -> bool {
    let mut head = [0u8; 4];
    let peeked = tokio::time::timeout(Duration::from_millis(200), stream.peek(&mut head)).await;
    if !matches!(peeked, Ok(Ok(4))) || &head != b"srvr" {
        return false;
    }
    // A few bytes into an empty socket buffer: a non-blocking write is enough.
    let _ = stream.try_write(b"Zookeeper version: fake\nMode: standalone\n");
    true
}

impl FakeServer {
    pub async fn bind() -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        FakeServer {
            listener,
            accepted: 0,
        }
    }

    /// `host:port`, for the client's connect string.
    pub fn addr(&self) -> String {
        self.listener.local_addr().expect("local addr").to_string()
    }

    /// The client's next connection; fails the test if none comes within [`STEP`].
    pub async fn accept(&mut self) -> Peer {
        let what = format!("connection #{}", self.accepted + 1);
        within(STEP, &what, self.next_peer()).await
    }

    /// The client's next connection, if one comes within `limit`.
    pub async fn try_accept(&mut self, limit: Duration) -> Option<Peer> {
        tokio::time::timeout(limit, self.next_peer()).await.ok()
    }

    async fn next_peer(&mut self) -> Peer {
        let stream = loop {
            let (stream, _) = self.listener.accept().await.expect("accept");
            if !answered_probe(&stream).await {
                break stream;
            }
        };
        stream.set_nodelay(true).expect("nodelay");
        self.accepted += 1;
        Peer {
            stream,
            rbuf: BytesMut::new(),
            codec: FrameCodec::new(),
            zxid: 0x100,
        }
    }

    /// Accepts the client's next connection and grants the new session it must ask for (see
    /// [`Peer::handshake_new`]).
    pub async fn accept_and_grant(&mut self, timeout_ms: i32) -> Peer {
        let mut peer = self.accept().await;
        peer.handshake_new(timeout_ms).await;
        peer
    }

    /// Accepts the client's next connection and reads its connect request, which must ask for
    /// a new session. The answer, if any, is the case's.
    pub async fn accept_new(&mut self) -> Peer {
        let mut peer = self.accept().await;
        assert_eq!(
            peer.read_connect().await.session_id,
            0,
            "a first connection asks for a new session"
        );
        peer
    }

    /// Accepts the client's reconnection and reads its connect request, which must resume
    /// [`SESSION_ID`]; the request is returned for the case to check further, and the answer
    /// is the case's.
    pub async fn accept_resuming(&mut self) -> (Peer, ConnectRequest) {
        let mut peer = self.accept().await;
        let req = peer.read_connect().await;
        assert_eq!(
            req.session_id, SESSION_ID,
            "the reconnection must resume the session"
        );
        (peer, req)
    }

    /// Accepts the client's reconnection, checks that it resumes [`SESSION_ID`] with
    /// [`PASSWD`] and reports `last_zxid` as the last zxid it saw, then serves it normally in
    /// the background.
    pub async fn resume_and_serve(&mut self, last_zxid: i64, timeout_ms: i32) {
        let (mut peer, req) = self.accept_resuming().await;
        assert_eq!(&req.passwd[..], &PASSWD, "with the session's password");
        assert_eq!(req.last_zxid_seen, last_zxid, "and the last zxid it saw");
        peer.write(&connect_response_frame(timeout_ms, true))
            .await
            .expect("connect response");
        peer.zxid = peer.zxid.max(last_zxid);
        tokio::spawn(peer.serve());
    }
}

/// One accepted connection.
pub struct Peer {
    stream: TcpStream,
    rbuf: BytesMut,
    codec: FrameCodec,
    /// The zxid of the last reply [`Peer::serve`] or [`Peer::next_zxid`] handed out.
    pub zxid: i64,
}

impl Peer {
    /// The next zxid for a reply that the client should count.
    pub fn next_zxid(&mut self) -> i64 {
        self.zxid += 1;
        self.zxid
    }

    /// The next whole frame from the client; `None` once it closed (or reset) the connection.
    pub async fn read_frame(&mut self) -> Option<Bytes> {
        loop {
            match self.codec.decode(&mut self.rbuf) {
                Ok(Some(f)) => return Some(f),
                Ok(None) => {}
                Err(e) => panic!("the client sent an unframeable stream: {e}"),
            }
            match self.stream.read_buf(&mut self.rbuf).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    /// The client's connect request.
    pub async fn read_connect(&mut self) -> ConnectRequest {
        let f = within(STEP, "connect request", self.read_frame())
            .await
            .expect("the client closed before its connect request");
        ConnectRequest::decode_exact(f, "ConnectRequest").expect("a valid connect request")
    }

    /// Reads the connect request, checks it asks for a new session, and answers it with
    /// [`SESSION_ID`] and the given negotiated timeout.
    pub async fn handshake_new(&mut self, timeout_ms: i32) -> ConnectRequest {
        let req = self.read_connect().await;
        assert_eq!(
            req.session_id, 0,
            "a first connection asks for a new session"
        );
        assert_eq!(req.protocol_version, 0);
        self.write(&connect_response_frame(timeout_ms, true))
            .await
            .expect("connect response");
        req
    }

    /// The client's next request other than a ping, setWatches or auth, which it answers on
    /// the way as a server would; `None` once the client closed the connection.
    pub async fn next_request(&mut self) -> Option<(RequestHeader, Request)> {
        loop {
            let f = self.read_frame().await?;
            let (h, req) = Request::decode(f).expect("the client sent an undecodable request");
            match req {
                Request::Ping
                | Request::SetWatches(_)
                | Request::SetWatches2(_)
                | Request::Auth(_) => {
                    let zxid = self.zxid;
                    if self
                        .write(&reply_frame(h.xid, zxid, 0, None))
                        .await
                        .is_err()
                    {
                        return None;
                    }
                }
                _ => return Some((h, req)),
            }
        }
    }

    /// [`next_request`](Self::next_request), failing the test on a close or a wait past [`STEP`].
    pub async fn expect_request(&mut self) -> (RequestHeader, Request) {
        within(STEP, "the client's next request", self.next_request())
            .await
            .expect("the client closed the connection instead of sending a request")
    }

    /// The next `n` requests, as (xid, path of the getData they must be).
    pub async fn expect_get_data(&mut self, n: usize) -> Vec<(i32, String)> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            match self.expect_request().await {
                (h, Request::GetData(r)) => out.push((h.xid, r.path)),
                (_, other) => panic!("expected getData, got {other:?}"),
            }
        }
        out
    }

    /// Writes raw bytes.
    pub async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes).await
    }

    /// Writes `bytes` (ignoring a failure once the client hung up) and waits for the client to
    /// close the connection. Returns how long that took from the start of the write, or `None`
    /// if the connection was still open after `limit`.
    pub async fn send_and_wait_closed(
        &mut self,
        bytes: &[u8],
        limit: Duration,
    ) -> Option<Duration> {
        let start = Instant::now();
        let (mut rd, mut wr) = self.stream.split();
        let write = async {
            let _ = wr.write_all(bytes).await;
        };
        let closed = async {
            let mut scratch = vec![0u8; 64 * 1024];
            loop {
                match rd.read(&mut scratch).await {
                    Ok(0) | Err(_) => return start.elapsed(),
                    Ok(_) => {}
                }
            }
        };
        let both = async {
            let (_, at) = tokio::join!(write, closed);
            at
        };
        tokio::time::timeout(limit, both).await.ok()
    }

    /// [`send_and_wait_closed`](Self::send_and_wait_closed) within [`STEP`], failing the test
    /// with `why` if the client keeps the connection. Returns how long it took to drop it.
    pub async fn expect_drop(&mut self, bytes: &[u8], why: &str) -> Duration {
        self.send_and_wait_closed(bytes, STEP)
            .await
            .unwrap_or_else(|| panic!("{why}"))
    }

    /// Sends `bytes` one at a time, `every` apart, until they are all sent or the client closes
    /// the connection. Returns how many were sent and, if the client closed, when.
    pub async fn dribble(&mut self, bytes: &[u8], every: Duration) -> (usize, Option<Instant>) {
        let mut scratch = vec![0u8; 64 * 1024];
        for (i, b) in bytes.iter().enumerate() {
            if self.stream.write_all(&[*b]).await.is_err() {
                return (i, Some(Instant::now()));
            }
            let deadline = tokio::time::Instant::now() + every;
            loop {
                match tokio::time::timeout_at(deadline, self.stream.read(&mut scratch)).await {
                    Err(_) => break,
                    Ok(Ok(0)) | Ok(Err(_)) => return (i + 1, Some(Instant::now())),
                    Ok(Ok(_)) => {}
                }
            }
        }
        (bytes.len(), None)
    }

    /// Plays a well-behaved server until the client closes the connection or the session.
    pub async fn serve(mut self) {
        while let Some((h, req)) = self.next_request().await {
            let zxid = self.next_zxid();
            let (err, body) = normal_answer(&req);
            if self
                .write(&reply_frame(h.xid, zxid, err, body.as_ref()))
                .await
                .is_err()
            {
                return;
            }
            if h.op == zk_proto::OpCode::CloseSession.code() {
                return;
            }
        }
    }
}
