//! A deterministic harness for the session core: a virtual clock, and an in-memory server
//! that decodes what the core writes, keeps the watches of its connection the way a 3.8
//! server does, and answers when told to.

use std::{
    cell::RefCell,
    collections::{HashMap, VecDeque},
    rc::Rc,
    sync::Arc,
    time::Duration,
};

use bytes::{BufMut, Bytes, BytesMut};
use std::time::Instant;
use zk_proto::{
    jute::{Reader, Record},
    xid, AddWatchMode, AddWatchRequest, ConnectRequest, ConnectResponse, EventType, FrameCodec,
    GetDataRequest, KeeperState, OpCode, ReplyHeader, Request, RequestHeader, Response,
    WatcherEvent,
};

pub(crate) use super::driven::Driven;
pub use super::driven::{Outbox, Slot};
use super::server::ServerWatches;
use crate::{
    chroot::Chroot,
    command::AddAuthCmd,
    connect_error::ConnectFailure,
    redact::Redacted,
    session::{Action, Command, Config, Key, Phase, RequestCmd, SessionCore, WatchId, WatchReg},
    shared::Shared,
    state::SessionState,
    watched_event::WatchKind,
    Error, WatchedEvent,
};

pub const SESSION: i64 = 0x1234;
pub const TIMEOUT_MS: i32 = 6000;

/// A GetData request for `path`, without a watch.
pub fn get_data(path: &str) -> Request {
    Request::GetData(GetDataRequest {
        path: path.into(),
        watch: false,
    })
}

pub fn config(hosts: usize) -> Config {
    Config {
        hosts: (0..hosts).map(|i| (format!("h{i}"), 2181)).collect(),
        chroot: Chroot::none(),
        session_timeout: Duration::from_millis(TIMEOUT_MS as u64),
        connect_timeout: None,
        read_only: false,
        max_frame_len: zk_proto::DEFAULT_MAX_FRAME_LEN,
        auths: Vec::new(),
        backoff_base: Duration::from_millis(50),
        backoff_max: Duration::from_secs(1),
        resume: None,
        new_session_on_expiry: true,
        fail_fast_on_refusal: false,
        sasl: None,
        security: crate::security::Security::Plain,
    }
}

/// A request the core wrote, as the server decodes it.
#[derive(Debug)]
pub struct Written {
    pub xid: i32,
    pub op: OpCode,
    pub request: Request,
}

pub struct Harness {
    pub core: Driven,
    pub shared: Arc<Shared>,
    pub now: Instant,
    /// Written and not yet answered, in order.
    pub pending: VecDeque<Written>,
    pub watches: ServerWatches,
    /// Every request the server has seen, for tests that look at the wire.
    pub log: Vec<(i32, OpCode)>,
    pub connects: usize,
    codec: FrameCodec,
    next_key: u32,
}

impl Harness {
    pub fn new(cfg: Config) -> Self {
        let shared = Arc::new(Shared::new());
        let now = Instant::now();
        let mut core = Driven {
            core: SessionCore::new(cfg, 7, now),
            shared: shared.clone(),
            record: Rc::default(),
            #[cfg(feature = "sasl")]
            auto_sasl: true,
            kept: VecDeque::new(),
            #[cfg(feature = "sasl")]
            sasl_work: VecDeque::new(),
        };
        core.settle(now);
        Harness {
            core,
            shared,
            next_key: 0,
            now,
            pending: VecDeque::new(),
            watches: ServerWatches::default(),
            log: Vec::new(),
            connects: 0,
            codec: FrameCodec::new(),
        }
    }

    /// A harness whose session is connected, with nothing in flight.
    pub fn connected() -> Self {
        let mut h = Harness::new(config(3));
        assert!(h.accept(), "the first attempt connects");
        h
    }

    /// Takes the core's pending connect action, if any, and answers it with a handshake for
    /// [`SESSION`]. False when the core is not connecting.
    pub fn accept(&mut self) -> bool {
        self.accept_as(SESSION, TIMEOUT_MS).is_some()
    }

    /// Like [`accept`](Self::accept), granting `session_id` with `timeout_ms` (0: expired);
    /// returns the session id the core asked for.
    pub fn accept_as(&mut self, session_id: i64, timeout_ms: i32) -> Option<i64> {
        let (_, asked) = self.open()?;
        self.respond(&response(session_id, timeout_ms, false));
        self.take_written();
        Some(asked.session_id)
    }

    /// Takes the core's pending connect action, if any, opens the stream, and decodes the
    /// connect request the core writes on it: returns the host and the request.
    pub fn open(&mut self) -> Option<(usize, ConnectRequest)> {
        let (host, _) = self.connect_action()?;
        self.connects += 1;
        self.core.handle_stream_opened(host, self.now);
        let mut buf = std::mem::take(self.core.transmit());
        let frame = self
            .codec
            .decode_frame(&mut buf)
            .unwrap()
            .expect("a connect request");
        assert!(
            buf.is_empty(),
            "nothing but the connect request before the response"
        );
        let request = ConnectRequest::decode_exact(frame, "ConnectRequest").unwrap();
        self.core.handle_written(self.now);
        Some((host, request))
    }

    /// The server answers the connect request with `response`.
    pub fn respond(&mut self, response: &ConnectResponse) {
        let mut b = BytesMut::new();
        response.encode(&mut b);
        let mut rbuf = frame(&b);
        self.core.handle_input(&mut rbuf, self.now);
    }

    /// Feeds `bytes` as read from the stream.
    pub fn input(&mut self, bytes: &[u8]) {
        let mut rbuf = BytesMut::from(bytes);
        self.core.handle_input(&mut rbuf, self.now);
    }

    /// Why the last attempt failed, as `connect` would report it.
    pub fn last_error(&self) -> String {
        let why = self.shared.last_connect_error.lock().unwrap();
        why.as_ref().map(ToString::to_string).unwrap_or_default()
    }

    /// Runs the core's actions; returns the host and the session id of a connect action.
    pub fn connect_action(&mut self) -> Option<(usize, i64)> {
        let mut host = None;
        while let Some(a) = self.core.poll_action() {
            // The rest (disconnects, probes, server lists) need nothing from the test.
            if let Action::Connect {
                host: h, request, ..
            } = a
            {
                host = Some((h, request.session_id));
            }
        }
        // A backoff first: let the virtual clock run to it.
        if host.is_none() {
            if let Phase::Backoff { until, .. } = self.core.phase() {
                self.now = until;
                self.core.handle_timeout(self.now);
                return self.connect_action();
            }
        }
        host
    }

    /// The connection drops (the server's watches die with it).
    pub fn cut(&mut self) {
        self.core.handle_disconnected(self.now);
        self.pending.clear();
        self.watches = ServerWatches::default();
        self.core.transmit().clear();
    }

    /// Decodes what the core wrote; the server takes in order what it registers at once
    /// (SetWatches), and keeps the rest pending for [`serve`](Self::serve).
    pub fn take_written(&mut self) {
        let mut buf = std::mem::take(self.core.transmit());
        while let Some(frame) = self.codec.decode_frame(&mut buf).unwrap() {
            let mut r = Reader::new(frame);
            let header = RequestHeader::decode(&mut r).unwrap();
            let op = OpCode::from_code(header.op).unwrap();
            let request = Request::decode_body(op, &mut r).unwrap();
            self.log.push((header.xid, op));
            self.pending.push_back(Written {
                xid: header.xid,
                op,
                request,
            });
        }
        self.core.handle_written(self.now);
    }

    /// The server processes and answers `n` pending requests (all of them for `usize::MAX`).
    pub fn serve(&mut self, n: usize) -> usize {
        let mut done = 0;
        while done < n {
            self.take_written();
            let Some(w) = self.pending.pop_front() else {
                break;
            };
            let frame = self.process(w);
            let mut rbuf = BytesMut::from(&frame[..]);
            self.core.handle_input(&mut rbuf, self.now);
            done += 1;
        }
        self.take_written();
        done
    }

    /// Serves everything, including what the replies make the core send.
    pub fn serve_all(&mut self) {
        while self.serve(usize::MAX) > 0 {}
    }

    fn process(&mut self, w: Written) -> BytesMut {
        let (err, body) = self.watches.apply(&w.request);
        let zxid = if w.xid > 0 { 10 } else { -1 };
        reply_frame(w.xid, zxid, err, body.as_ref())
    }

    /// Another client changes `path`: the server notifies the core if it holds a watch.
    pub fn change(&mut self, event_type: EventType, path: &str) {
        if self.watches.fire(event_type, path) {
            self.notify(event_type, path);
        }
    }

    /// Sends a notification to the core.
    pub fn notify(&mut self, event_type: EventType, path: &str) {
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
        let mut rbuf = frame(&b);
        self.core.handle_input(&mut rbuf, self.now);
    }

    /// Moves the virtual clock by `d`, running every deadline on the way. Returns how often
    /// the core was woken.
    pub fn advance(&mut self, d: Duration) -> usize {
        let end = self.now + d;
        let mut wakeups = 0;
        while let Some(t) = self.core.poll_timeout() {
            if t > end {
                break;
            }
            // A driver cannot sleep less than a millisecond; a deadline in the past wakes it
            // again at once.
            self.now = t.max(self.now + Duration::from_millis(1));
            if self.now > end {
                break;
            }
            wakeups += 1;
            self.core.handle_timeout(self.now);
        }
        self.now = end;
        self.core.handle_timeout(self.now);
        wakeups
    }

    fn key(&mut self) -> Key {
        self.next_key += 1;
        Key(self.next_key)
    }

    fn slot<K, T>(
        &self,
        key: K,
        pick: fn(&mut Outbox) -> &mut HashMap<K, (T, SessionState)>,
    ) -> Slot<K, T> {
        Slot {
            key,
            record: self.core.record.clone(),
            pick,
        }
    }

    /// Sends a request from a caller; returns where its answer goes.
    pub fn request(&mut self, request: Request, watch: Option<WatchReg>) -> Reply {
        let key = self.key();
        self.core.handle_command(
            Command::Request(Box::new(RequestCmd {
                request,
                reply: Some(key),
                watch,
            })),
            self.now,
        );
        Reply(self.slot(key, |r| &mut r.replies))
    }

    /// A caller adds a `digest` credential; returns where its answer goes.
    pub fn add_auth(&mut self, auth: &'static [u8]) -> Slot<Key, Result<(), Error>> {
        let key = self.key();
        self.core.handle_command(
            Command::AddAuth(Box::new(AddAuthCmd {
                scheme: "digest".into(),
                auth: Redacted(Bytes::from_static(auth)),
                reply: key,
            })),
            self.now,
        );
        self.slot(key, |r| &mut r.auths)
    }

    /// A caller closes the client; returns where its answer goes.
    pub fn close(&mut self) -> Slot<Key, ()> {
        let key = self.key();
        self.core
            .handle_command(Command::Close { reply: key }, self.now);
        self.slot(key, |r| &mut r.done)
    }

    /// A caller replaces the server list; returns where its answer goes.
    pub fn server_list(&mut self, hosts: Vec<(String, u16)>) -> Slot<Key, ()> {
        let key = self.key();
        let cmd = Command::ServerList {
            hosts: hosts.into_boxed_slice(),
            reply: key,
        };
        self.core.handle_command(cmd, self.now);
        self.slot(key, |r| &mut r.done)
    }

    /// get_data_watch on `path`: the reply and the watch.
    pub fn get_data_watch(&mut self, path: &str) -> (Reply, Watch) {
        let request = Request::GetData(GetDataRequest {
            path: path.into(),
            watch: true,
        });
        self.oneshot_request(request, path, WatchKind::Data)
    }

    /// get_children_watch on `path`.
    pub fn get_children_watch(&mut self, path: &str) -> (Reply, Watch) {
        let request = Request::GetChildren(zk_proto::GetChildrenRequest {
            path: path.into(),
            watch: true,
        });
        self.oneshot_request(request, path, WatchKind::Child)
    }

    fn watch_id(&mut self) -> WatchId {
        WatchId(self.key().0.into())
    }

    fn oneshot_request(&mut self, request: Request, path: &str, kind: WatchKind) -> (Reply, Watch) {
        let id = self.watch_id();
        let reg = WatchReg::Oneshot {
            path: path.into(),
            id,
            tx: (),
        };
        let reply = self.request(request, Some(reg));
        let path = path.into();
        let rx = self.slot(id, |r| &mut r.watches);
        (
            reply,
            Watch {
                rx: Some(rx),
                path,
                kind,
                id,
            },
        )
    }

    /// add_watch on `path` in persistent mode: the reply and the stream.
    pub fn add_watch(&mut self, path: &str) -> (Reply, Stream) {
        let id = self.watch_id();
        let request = Request::AddWatch(AddWatchRequest {
            path: path.into(),
            mode: AddWatchMode::Persistent,
        });
        let reg = WatchReg::Stream {
            path: path.into(),
            kind: WatchKind::Persistent,
            id,
            tx: (),
        };
        let reply = self.request(request, Some(reg));
        (
            reply,
            Stream {
                id,
                path: path.into(),
                record: self.core.record.clone(),
            },
        )
    }

    /// A caller drops a persistent watch.
    pub fn drop_stream(&mut self, stream: Stream) {
        let (path, id) = (stream.path.clone(), stream.id);
        let kind = WatchKind::Persistent;
        self.core
            .handle_command(Command::WatchDropped { path, kind, id }, self.now);
    }

    /// Every connection attempt fails, for `d` of virtual time.
    pub fn refuse_for(&mut self, d: Duration) {
        let end = self.now + d;
        while self.now < end {
            while let Some(a) = self.core.poll_action() {
                if let Action::Connect { host, .. } = a {
                    self.core.handle_connect_failed(host, refused(), self.now);
                }
            }
            self.advance(Duration::from_millis(50));
        }
    }

    /// A caller drops `watch` (as [`OneshotWatch`](crate::OneshotWatch)'s drop does: no
    /// notice once it fired).
    pub fn drop_watch(&mut self, mut watch: Watch) {
        let fired = !watch.is_live();
        watch.rx = None;
        if !fired {
            self.core.handle_command(
                Command::WatchDropped {
                    path: watch.path.clone(),
                    kind: watch.kind,
                    id: watch.id,
                },
                self.now,
            );
        }
    }
}

/// Where a caller's answer goes.
pub struct Reply(pub Slot<Key, Result<Response, Error>>);

impl Reply {
    /// The caller gives up (times out, or its future is dropped).
    pub fn abandon(self) {
        self.0.record.borrow_mut().gone.insert(self.0.key);
    }

    /// The answer, which must have come exactly once by now.
    pub fn answer(&mut self) -> Result<Response, Error> {
        match self.0.try_recv() {
            Ok(r) => r,
            Err(e) => panic!("request not answered: {e:?}"),
        }
    }
}

/// A persistent watch a caller holds.
pub struct Stream {
    pub id: WatchId,
    pub path: String,
    record: Rc<RefCell<Outbox>>,
}

impl Stream {
    /// The events it got so far, taken.
    pub fn events(&self) -> Vec<WatchedEvent> {
        let mut r = self.record.borrow_mut();
        r.streams.remove(&self.id).unwrap_or_default().into()
    }

    /// Whether the session ended it.
    pub fn ended(&self) -> bool {
        self.record.borrow().ended.contains(&self.id)
    }
}

/// A one-shot watch a caller holds.
pub struct Watch {
    pub rx: Option<Slot<WatchId, Result<WatchedEvent, Error>>>,
    pub path: String,
    pub kind: WatchKind,
    pub id: WatchId,
}

impl Watch {
    /// Still waiting for its event (not fired, not failed, not ended).
    pub fn is_live(&mut self) -> bool {
        self.rx.as_ref().is_some_and(|rx| {
            let r = rx.record.borrow();
            !r.watches.contains_key(&rx.key) && !r.ended.contains(&rx.key)
        })
    }
}

/// What a refused TCP connect reports.
pub fn refused() -> ConnectFailure {
    ConnectFailure::Io(std::io::ErrorKind::ConnectionRefused.into())
}

/// A ConnectResponse granting `session_id` with `timeout_ms` (0: expired).
pub fn response(session_id: i64, timeout_ms: i32, read_only: bool) -> ConnectResponse {
    ConnectResponse {
        protocol_version: 0,
        timeout: timeout_ms,
        session_id,
        passwd: Bytes::from_static(&[7; 16]),
        read_only,
    }
}

pub fn frame(body: &[u8]) -> BytesMut {
    let mut out = BytesMut::with_capacity(body.len() + 4);
    out.put_i32(body.len() as i32);
    out.put_slice(body);
    out
}

pub fn reply_frame(xid: i32, zxid: i64, err: i32, body: Option<&Response>) -> BytesMut {
    let mut b = BytesMut::new();
    ReplyHeader { xid, zxid, err }.encode(&mut b);
    if let (0, Some(r)) = (err, body) {
        r.encode(&mut b);
    }
    frame(&b)
}
