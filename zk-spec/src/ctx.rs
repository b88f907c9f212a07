//! [`Ctx`]: what a check runs with (the server, its paths, its connections) and [`Conn`], a
//! raw connection that logs every frame and checks every reply's xid and zxid.

use std::{
    collections::VecDeque,
    io,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use zk_proto::{
    decode_notification, decode_reply, jute::Record, xid, ConnectRequest, ConnectResponse,
    ErrorCode, OpCode, ReplyHeader, Request, Response, Stat, WatcherEvent,
};
pub use zk_testkit::raw::connect_request;
use zk_testkit::raw::{RawConnection, RawError};

use crate::{
    check::{fail, CheckResult, Finding, Frame},
    req,
    setup::Setup,
};

/// The session timeout checks ask for, in milliseconds.
pub const SESSION_TIMEOUT_MS: i32 = 10_000;

/// The frames of a check's connections, shared with the runner (which reads them even when
/// the check is stuck).
pub(crate) type FrameLog = Arc<Mutex<Vec<Frame>>>;

/// What a check runs with: see the [crate documentation](crate) for an example.
#[derive(Debug)]
pub struct Ctx {
    addr: SocketAddr,
    base: String,
    io_timeout: Duration,
    log: FrameLog,
    conns: usize,
    setup: Arc<Setup>,
}

impl Ctx {
    pub(crate) fn new(addr: SocketAddr, base: String, io_timeout: Duration, log: FrameLog) -> Ctx {
        Ctx {
            addr,
            base,
            io_timeout,
            log,
            conns: 0,
            setup: Arc::default(),
        }
    }

    /// The same context with `setup`.
    pub(crate) fn with_setup(mut self, setup: Arc<Setup>) -> Ctx {
        self.setup = setup;
        self
    }

    /// What the server is set up for (ensemble, TLS, SASL...).
    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// The server under test.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How long a check waits for any one frame.
    pub fn io_timeout(&self) -> Duration {
        self.io_timeout
    }

    /// A znode path of this check's own, under the run's root (which exists).
    pub fn path(&self, name: &str) -> String {
        format!("{}-{name}", self.base)
    }

    /// A TCP connection to the server; nothing sent yet.
    pub fn connect(&mut self) -> Result<Conn, Finding> {
        self.connect_to(self.addr)
    }

    /// A TCP connection to the server at `addr` (another ensemble member); nothing sent yet.
    pub fn connect_to(&mut self, addr: SocketAddr) -> Result<Conn, Finding> {
        let raw = RawConnection::connect(addr)
            .map_err(|e| fail(format!("{addr} accepts a connection"), e.to_string()))?;
        raw.set_timeout(self.io_timeout)?;
        self.conns += 1;
        Ok(Conn {
            raw,
            id: self.conns,
            log: self.log.clone(),
            next_xid: 1,
            session: None,
            last_zxid: 0,
            events: VecDeque::new(),
        })
    }

    /// A connection with a new session ([`SESSION_TIMEOUT_MS`]).
    pub fn session(&mut self) -> Result<Conn, Finding> {
        self.session_on(self.addr)
    }

    /// A connection with a new session logged in with SASL DIGEST-MD5 as `user`; fails
    /// unless the server accepts the login.
    pub fn sasl_session(&mut self, user: &crate::Credentials) -> Result<Conn, Finding> {
        let mut conn = self.session()?;
        let code = crate::sasl_login::login(&mut conn, user)?;
        if code != ErrorCode::Ok {
            return Err(fail(
                format!("a SASL login as {}", user.user),
                format!("{code:?} ({})", code.code()),
            ));
        }
        Ok(conn)
    }

    /// A connection to the TLS client port of [`Setup::tls`] with the client certificate
    /// (through a loopback relay, so frames are logged as on any connection); skips
    /// without TLS.
    pub fn connect_tls(&mut self) -> Result<Conn, Finding> {
        let target = self.setup.tls.clone().ok_or_else(|| {
            crate::check::skip(
                "needs a TLS client port and a client certificate: --tls HOST:PORT \
                 --tls-ca FILE --tls-cert FILE --tls-key FILE",
            )
        })?;
        let client = crate::tls_relay::TlsClient::new(&target)
            .map_err(|e| fail("the TLS files readable", e))?;
        let relay = client
            .relay()
            .map_err(|e| fail("a loopback relay for TLS", e.to_string()))?;
        self.connect_to(relay)
    }

    /// A connection with a new session over TLS; see [`Ctx::connect_tls`].
    pub fn tls_session(&mut self) -> Result<Conn, Finding> {
        let mut conn = self.connect_tls()?;
        let resp = conn.handshake(0, &[0; 16], SESSION_TIMEOUT_MS)?;
        if resp.is_expired() {
            return Err(fail("a new session over TLS", format!("{resp:?}")));
        }
        Ok(conn)
    }

    /// A connection with a new session on the server at `addr`.
    pub fn session_on(&mut self, addr: SocketAddr) -> Result<Conn, Finding> {
        let mut conn = self.connect_to(addr)?;
        let resp = conn.handshake(0, &[0; 16], SESSION_TIMEOUT_MS)?;
        if resp.is_expired() {
            return Err(fail("a new session", format!("{resp:?}")));
        }
        Ok(conn)
    }
}

/// The server's answer to a wait for the end of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It closed (or reset) the connection.
    Closed,
    /// It sent a frame first.
    Frame(Bytes),
}

/// One connection of a check; see [`Ctx::connect`] and [`Ctx::session`].
#[derive(Debug)]
pub struct Conn {
    raw: RawConnection,
    id: usize,
    log: FrameLog,
    next_xid: i32,
    /// The connect response, once the handshake is done.
    pub session: Option<ConnectResponse>,
    last_zxid: i64,
    events: VecDeque<WatcherEvent>,
}

impl From<RawError> for Finding {
    fn from(e: RawError) -> Finding {
        let got = match &e {
            RawError::Io(io) if is_timeout(io) => "no answer before the read timed out".into(),
            RawError::Closed => "the server closed the connection".into(),
            other => other.to_string(),
        };
        fail("a well-formed answer", got)
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl Conn {
    fn record(&self, sent: bool, bytes: &[u8]) {
        if let Ok(mut log) = self.log.lock() {
            log.push(Frame {
                conn: self.id,
                sent,
                bytes: bytes.to_vec(),
            });
        }
    }

    /// The session id (0 before the handshake).
    pub fn session_id(&self) -> i64 {
        self.session.as_ref().map_or(0, |s| s.session_id)
    }

    /// The session password (empty before the handshake).
    pub fn password(&self) -> Bytes {
        self.session
            .as_ref()
            .map(|s| s.passwd.clone())
            .unwrap_or_default()
    }

    /// The highest zxid a reply on this connection carried.
    pub fn last_zxid(&self) -> i64 {
        self.last_zxid
    }

    /// Sets the read and write timeout.
    pub fn set_timeout(&self, t: Duration) -> Result<(), Finding> {
        Ok(self.raw.set_timeout(t)?)
    }

    /// The socket (to half-close it, for example).
    pub fn stream(&self) -> &std::net::TcpStream {
        self.raw.stream()
    }

    /// Sends bytes as they are.
    pub fn send_bytes(&mut self, bytes: &[u8]) -> Result<(), Finding> {
        self.record(true, bytes);
        Ok(self.raw.send_bytes(bytes)?)
    }

    /// Sends a connect request.
    pub fn send_connect(&mut self, request: &ConnectRequest) -> Result<(), Finding> {
        let sent = self.raw.send_connect(request)?;
        self.record(true, &sent);
        Ok(())
    }

    /// Connects with `session_id` (0 for a new session) and `password`; the answer, also kept
    /// in [`Conn::session`].
    pub fn handshake(
        &mut self,
        session_id: i64,
        password: &[u8],
        timeout_ms: i32,
    ) -> Result<ConnectResponse, Finding> {
        self.handshake_with(&connect_request(session_id, password, timeout_ms))
    }

    /// Sends `request` (a read-only one, say) and reads the connect response, also kept in
    /// [`Conn::session`].
    pub fn handshake_with(&mut self, request: &ConnectRequest) -> Result<ConnectResponse, Finding> {
        self.send_connect(request)?;
        let frame = self
            .recv_frame()?
            .ok_or_else(|| fail("a connect response", "the server closed the connection"))?;
        // The readOnly byte is optional: 36- and 37-byte bodies both decode.
        let resp = ConnectResponse::decode_exact(frame, "ConnectResponse")
            .map_err(|e| fail("a ConnectResponse record", e.to_string()))?;
        self.session = Some(resp.clone());
        Ok(resp)
    }

    /// The next frame's body, `None` when the server closed the connection.
    pub fn recv_frame(&mut self) -> Result<Option<Bytes>, Finding> {
        let frame = self.raw.recv_frame()?;
        if let Some(f) = &frame {
            let mut bytes = (f.len() as u32).to_be_bytes().to_vec();
            bytes.extend_from_slice(f);
            self.record(false, &bytes);
        }
        Ok(frame)
    }

    /// Waits for the server to close the connection or send a frame, up to the read
    /// timeout; fails when it does neither.
    pub fn ending(&mut self) -> Result<Ending, Finding> {
        match self.raw.recv_frame() {
            Ok(None) => Ok(Ending::Closed),
            Ok(Some(f)) => {
                let mut bytes = (f.len() as u32).to_be_bytes().to_vec();
                bytes.extend_from_slice(&f);
                self.record(false, &bytes);
                Ok(Ending::Frame(f))
            }
            Err(RawError::Io(e)) if is_timeout(&e) => Err(fail(
                "the server closes the connection or answers",
                "the connection stayed open and silent until the read timed out",
            )),
            // A reset or a connection cut inside a frame is a close too.
            Err(RawError::Io(_) | RawError::Closed | RawError::Decode(_)) => Ok(Ending::Closed),
            Err(e) => Err(e.into()),
        }
    }

    /// Waits until the server closes the connection, reading any frames before that.
    pub fn expect_closed(&mut self, why: &str) -> CheckResult {
        for _ in 0..16 {
            if self.ending().map_err(|f| with_expected(f, why))? == Ending::Closed {
                return Ok(());
            }
        }
        Err(fail(why, "frame after frame, never a close"))
    }

    /// Sends `request` with the next xid; returns the xid.
    pub fn send(&mut self, request: &Request) -> Result<i32, Finding> {
        let x = self.next_xid;
        self.next_xid += 1;
        self.send_with_xid(x, request)?;
        Ok(x)
    }

    /// Sends `request` with `xid`.
    pub fn send_with_xid(&mut self, xid: i32, request: &Request) -> Result<(), Finding> {
        let sent = self.raw.send_request(xid, request)?;
        self.record(true, &sent);
        Ok(())
    }

    /// Reads the reply to the request with `xid` and opcode `op`, which must be the next
    /// frame other than notifications (queued for [`Conn::event`]). Fails on a reply out of
    /// order and on a zxid lower than an earlier reply's.
    pub fn recv(
        &mut self,
        xid: i32,
        op: OpCode,
    ) -> Result<(ReplyHeader, Option<Response>), Finding> {
        loop {
            let frame = self.recv_frame()?.ok_or_else(|| {
                fail(
                    format!("the reply to xid {xid}"),
                    "the server closed the connection",
                )
            })?;
            if frame.get(..4) == Some(&xid::NOTIFICATION.to_be_bytes()[..]) {
                let (_, ev) = decode_notification(frame)
                    .map_err(|e| fail("a well-formed notification", e.to_string()))?;
                self.events.push_back(ev);
                continue;
            }
            // The xid first: a reply out of order would not decode as this op's.
            let got = frame
                .get(..4)
                .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            if got != Some(xid) {
                return Err(fail(
                    format!("the reply to xid {xid} ({op:?}) next: replies in request order"),
                    format!("a reply with xid {}", got.unwrap_or_default()),
                ));
            }
            let (h, body) = decode_reply(frame, op)
                .map_err(|e| fail(format!("a well-formed reply to {op:?}"), e.to_string()))?;
            if h.zxid > 0 && h.zxid < self.last_zxid {
                return Err(fail(
                    format!(
                        "a zxid >= {:#x}, the highest seen in this session",
                        self.last_zxid
                    ),
                    format!("zxid {:#x} in the reply to {op:?}", h.zxid),
                ));
            }
            self.last_zxid = self.last_zxid.max(h.zxid);
            return Ok((h, body));
        }
    }

    /// Sends `request` and reads its reply.
    pub fn call(&mut self, request: &Request) -> Result<(ReplyHeader, Option<Response>), Finding> {
        let x = self.send(request)?;
        self.recv(x, request.op_code())
    }

    /// Sends `request`, which must succeed; its reply body.
    pub fn ok(&mut self, request: &Request) -> Result<Response, Finding> {
        let op = request.op_code();
        let (h, body) = self.call(request)?;
        if h.err != 0 {
            return Err(fail(
                format!("{op:?} on {} succeeds", target(request)),
                format!("error {:?} ({})", h.error_code(), h.err),
            ));
        }
        body.ok_or_else(|| fail(format!("a reply body for {op:?}"), "none"))
    }

    /// Sends `request`, which must fail with `code`.
    pub fn err(&mut self, request: &Request, code: ErrorCode) -> CheckResult {
        let op = request.op_code();
        let (h, _) = self.call(request)?;
        if h.error_code() != code {
            return Err(fail(
                format!(
                    "{op:?} on {} fails with {code:?} ({})",
                    target(request),
                    code.code()
                ),
                format!("{:?} ({})", h.error_code(), h.err),
            ));
        }
        Ok(())
    }

    /// A notification: one already queued, or the next frame, which must be one.
    pub fn event(&mut self) -> Result<WatcherEvent, Finding> {
        if let Some(ev) = self.events.pop_front() {
            return Ok(ev);
        }
        let frame = self
            .recv_frame()
            .map_err(|f| with_expected(f, "a watch notification"))?
            .ok_or_else(|| fail("a watch notification", "the server closed the connection"))?;
        decode_notification(frame)
            .map(|(_, ev)| ev)
            .map_err(|e| fail("a watch notification (xid -1)", e.to_string()))
    }

    /// A round trip (exists on `/`) after which every notification the server owed this
    /// connection has arrived; fails when any did. Use after another session's write.
    pub fn no_event(&mut self, why: &str) -> CheckResult {
        self.ok(&req::exists("/", false))?;
        match self.events.pop_front() {
            None => Ok(()),
            Some(ev) => Err(fail(why, format!("a notification {ev:?}"))),
        }
    }

    /// Notifications received so far and not yet taken.
    pub fn queued_events(&mut self) -> Vec<WatcherEvent> {
        self.events.drain(..).collect()
    }

    /// create with open ACL; the created path.
    pub fn create(
        &mut self,
        path: &str,
        data: &[u8],
        mode: zk_proto::CreateMode,
    ) -> Result<String, Finding> {
        match self.ok(&req::create(path, data, mode))? {
            Response::Create(c) => Ok(c.path),
            other => Err(unexpected("a create response", &other)),
        }
    }

    /// getData; the data and Stat.
    pub fn get_data(&mut self, path: &str, watch: bool) -> Result<(Option<Bytes>, Stat), Finding> {
        match self.ok(&req::get_data(path, watch))? {
            Response::GetData(d) => Ok((d.data, d.stat)),
            other => Err(unexpected("a getData response", &other)),
        }
    }

    /// exists; the Stat, or `None` on NONODE.
    pub fn exists(&mut self, path: &str, watch: bool) -> Result<Option<Stat>, Finding> {
        let (h, body) = self.call(&req::exists(path, watch))?;
        match (h.error_code(), body) {
            (ErrorCode::Ok, Some(Response::Stat(s))) => Ok(Some(s)),
            (ErrorCode::NoNode, _) => Ok(None),
            (code, body) => Err(fail("a Stat or NONODE", format!("{code:?} {body:?}"))),
        }
    }

    /// setData; the new Stat.
    pub fn set_data(&mut self, path: &str, data: &[u8], version: i32) -> Result<Stat, Finding> {
        match self.ok(&req::set_data(path, data, version))? {
            Response::Stat(s) => Ok(s),
            other => Err(unexpected("a Stat", &other)),
        }
    }

    /// getChildren; the names, sorted.
    pub fn children(&mut self, path: &str, watch: bool) -> Result<Vec<String>, Finding> {
        match self.ok(&req::get_children(path, watch))? {
            Response::GetChildren(c) => {
                let mut names = c.children;
                names.sort();
                Ok(names)
            }
            other => Err(unexpected("a getChildren response", &other)),
        }
    }

    /// delete, any version.
    pub fn delete(&mut self, path: &str) -> CheckResult {
        self.ok(&req::delete(path, -1)).map(drop)
    }

    /// Sends an auth packet (xid -4) for `scheme`; its reply's error code.
    pub fn auth(&mut self, scheme: &str, credentials: &[u8]) -> Result<ErrorCode, Finding> {
        let packet = Request::Auth(zk_proto::AuthPacket {
            auth_type: 0,
            scheme: scheme.into(),
            auth: req::data(credentials),
        });
        self.send_with_xid(xid::AUTH, &packet)?;
        let (h, _) = self.recv(xid::AUTH, OpCode::Auth)?;
        Ok(h.error_code())
    }

    /// closeSession, then the server must close the connection.
    pub fn close(&mut self) -> CheckResult {
        self.ok(&Request::CloseSession)?;
        self.expect_closed("the server closes the connection after closeSession")
    }
}

fn with_expected(f: Finding, expected: &str) -> Finding {
    match f {
        Finding::Fail { got, .. } => fail(expected, got),
        other => other,
    }
}

/// A reply body of the wrong kind.
pub fn unexpected(expected: &str, got: &Response) -> Finding {
    fail(expected, format!("{got:?}"))
}

/// The path a request names, for messages.
fn target(request: &Request) -> String {
    let mut body = bytes::BytesMut::new();
    request.encode_body(&mut body);
    // Most records start with the path: a jute string.
    let len = body
        .get(..4)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .unwrap_or(-1);
    match usize::try_from(len).ok().and_then(|n| body.get(4..4 + n)) {
        Some(p) if p.first() == Some(&b'/') => String::from_utf8_lossy(p).into_owned(),
        _ => "the request".into(),
    }
}
