//! A frame-aware TCP proxy between a client and a real server, for fault-injection tests.
//!
//! It understands just enough of ZooKeeper's protocol to see each request's xid, opcode and
//! path and each reply's xid, and can:
//!
//! - refuse connections ([`refuse`](FaultProxy::refuse)), cut the ones open
//!   ([`cut_connections`](FaultProxy::cut_connections)), or both
//!   ([`partition`](FaultProxy::partition));
//! - cut a connection after the k-th frame from now in either direction
//!   ([`cut_after_frames`](FaultProxy::cut_after_frames));
//! - stall either direction, buffering what comes, until told to go on
//!   ([`stall`](FaultProxy::stall));
//! - act on the next request matching an opcode and a path: cut the connection before it
//!   is forwarded or instead of its reply, hold its reply until the test lets it go, or
//!   swallow it (the server never sees it, the connection stays up);
//! - count requests by opcode ([`count`](FaultProxy::count)) and frames by direction.
//!
//! ```no_run
//! # async fn f() {
//! use zk_session::OpCode; // the same type as zk_proto::OpCode, re-exported
//! use zk_testkit::fault_proxy::{Direction, FaultProxy};
//!
//! let proxy = FaultProxy::start(zk_testkit::shared_standalone().client_addr()).await;
//! // Clients connect to proxy.connect_string() instead of the server.
//! proxy.cut_reply(OpCode::Create2, "/locks/"); // the create happens, its reply is lost
//! proxy.cut_after_frames(Direction::ToServer, 3);
//! proxy.partition(true); // drop the client and refuse it until partition(false)
//! println!("{} creates", proxy.count(OpCode::Create2));
//! # }
//! ```

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex as StdMutex, MutexGuard},
};

use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::{mpsc, oneshot, watch},
    task::AbortHandle,
};
use zk_proto::OpCode;

/// Which way a frame travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the client to the server (requests).
    ToServer,
    /// From the server to the client (replies and notifications).
    ToClient,
}

impl Direction {
    fn index(self) -> usize {
        match self {
            Direction::ToServer => 0,
            Direction::ToClient => 1,
        }
    }
}

/// What to do with a request that matches a rule.
enum Action {
    /// Close the connection instead of forwarding the request.
    CutRequest,
    /// Forward the request, then close the connection instead of forwarding its reply.
    CutReply,
    /// Forward the reply only when the test says so.
    Hold(mpsc::UnboundedSender<oneshot::Sender<()>>),
    /// Never forward the request; the connection stays up.
    Swallow,
}

struct Rule {
    op: OpCode,
    path_contains: String,
    action: Action,
}

#[derive(Default)]
struct State {
    /// One-shot rules, matched against requests in order.
    rules: Vec<Rule>,
    /// Requests seen, by opcode, over all connections (unknown opcodes are not counted).
    counts: HashMap<OpCode, u64>,
    /// Frames forwarded, by direction, over all connections.
    frames: [u64; 2],
    /// Frames left before a cut, by direction.
    cut_after: [Option<u64>; 2],
    conns: Vec<AbortHandle>,
    accepted: u64,
    refusing: bool,
}

/// A proxy in front of one server; see the [module documentation](self).
pub struct FaultProxy {
    addr: SocketAddr,
    state: Arc<StdMutex<State>>,
    stalls: [watch::Sender<bool>; 2],
    accept: AbortHandle,
}

/// A reply held back by [`FaultProxy::hold_reply`].
pub struct HeldReply {
    rx: mpsc::UnboundedReceiver<oneshot::Sender<()>>,
}

impl HeldReply {
    /// Waits until the reply has arrived and is held; returns the switch that lets it go
    /// (dropping the switch lets it go too). `None` if the proxy is gone.
    pub async fn arrived(&mut self) -> Option<oneshot::Sender<()>> {
        self.rx.recv().await
    }
}

impl FaultProxy {
    /// Listens on a free port of 127.0.0.1 and forwards every connection to `target`.
    /// Must be called inside a tokio runtime.
    pub async fn start(target: SocketAddr) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(StdMutex::new(State::default()));
        let stalls = [watch::channel(false).0, watch::channel(false).0];
        let st = state.clone();
        let stall_rx = [stalls[0].subscribe(), stalls[1].subscribe()];
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if lock(&st).refusing {
                    continue;
                }
                let Ok(server) = TcpStream::connect(target).await else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let conn = tokio::spawn(relay(client, server, st.clone(), stall_rx.clone()));
                let mut s = lock(&st);
                s.accepted += 1;
                s.conns.retain(|c| !c.is_finished());
                s.conns.push(conn.abort_handle());
            }
        });
        FaultProxy {
            addr,
            state,
            stalls,
            accept: accept.abort_handle(),
        }
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// [`addr`](Self::addr) as a connect string.
    pub fn connect_string(&self) -> String {
        self.addr.to_string()
    }

    /// Refuses new connections (accepts and closes them at once), or accepts them again.
    /// Open connections are left alone.
    pub fn refuse(&self, refuse: bool) {
        lock(&self.state).refusing = refuse;
    }

    /// Closes every open connection.
    pub fn cut_connections(&self) {
        for c in lock(&self.state).conns.drain(..) {
            c.abort();
        }
    }

    /// Cuts the client off (closes its connections and refuses new ones), or lets it back.
    pub fn partition(&self, cut: bool) {
        self.refuse(cut);
        if cut {
            self.cut_connections();
        }
    }

    /// Closes the connection that carries the `k`-th frame from now in `direction`, right
    /// after forwarding it (`k` = 0: before forwarding the next one).
    pub fn cut_after_frames(&self, direction: Direction, k: u64) {
        lock(&self.state).cut_after[direction.index()] = Some(k);
    }

    /// Forgets the frame-count cuts not yet done.
    pub fn cancel_frame_cuts(&self) {
        lock(&self.state).cut_after = [None, None];
    }

    /// Stops forwarding in `direction` (frames wait in the proxy), or goes on.
    pub fn stall(&self, direction: Direction, stalled: bool) {
        self.stalls[direction.index()].send_replace(stalled);
    }

    /// How many requests with opcode `op` went through (or were acted on).
    pub fn count(&self, op: OpCode) -> u64 {
        lock(&self.state).counts.get(&op).copied().unwrap_or(0)
    }

    /// The request counts of every opcode except pings.
    pub fn counts(&self) -> HashMap<OpCode, u64> {
        let mut c = lock(&self.state).counts.clone();
        c.remove(&OpCode::Ping);
        c
    }

    /// How many frames were forwarded in `direction`, connect frames included.
    pub fn frames(&self, direction: Direction) -> u64 {
        lock(&self.state).frames[direction.index()]
    }

    /// How many connections were accepted and forwarded.
    pub fn connections(&self) -> u64 {
        lock(&self.state).accepted
    }

    fn rule(&self, op: OpCode, path_contains: &str, action: Action) {
        lock(&self.state).rules.push(Rule {
            op,
            path_contains: path_contains.to_owned(),
            action,
        });
    }

    /// The next request with `op` whose path contains `path_contains` (an empty pattern
    /// matches requests without a path too) is not forwarded: the connection is closed.
    pub fn cut_request(&self, op: OpCode, path_contains: &str) {
        self.rule(op, path_contains, Action::CutRequest);
    }

    /// The next matching request goes to the server, but its reply is dropped and the
    /// connection closed: it took effect, the client never hears so.
    pub fn cut_reply(&self, op: OpCode, path_contains: &str) {
        self.rule(op, path_contains, Action::CutReply);
    }

    /// The next matching request is never forwarded; the connection stays up.
    pub fn swallow(&self, op: OpCode, path_contains: &str) {
        self.rule(op, path_contains, Action::Swallow);
    }

    /// The reply to the next matching request is held until the test lets it go (what the
    /// server sends after it on that connection waits behind it).
    pub fn hold_reply(&self, op: OpCode, path_contains: &str) -> HeldReply {
        let (tx, rx) = mpsc::unbounded_channel();
        self.rule(op, path_contains, Action::Hold(tx));
        HeldReply { rx }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut_connections();
    }
}

fn lock(state: &StdMutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// One length-prefixed frame, prefix included; `None` at the end of the stream.
async fn read_frame(r: &mut (impl AsyncRead + Unpin)) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await.ok()?;
    let n = i32::from_be_bytes(len);
    let mut frame = len.to_vec();
    frame.resize(4 + n.max(0) as usize, 0);
    r.read_exact(&mut frame[4..]).await.ok()?;
    Some(frame)
}

/// The path at the start of a request body, for the opcodes that have one there. Read as a
/// prefix rather than decoded whole, so that a malformed body still shows its path.
fn request_path(op: OpCode, body: &[u8]) -> Option<String> {
    use OpCode::*;
    let has_path = matches!(
        op,
        Create
            | Delete
            | Exists
            | GetData
            | SetData
            | GetAcl
            | SetAcl
            | GetChildren
            | Sync
            | GetChildren2
            | Create2
            | CheckWatches
            | RemoveWatches
            | CreateContainer
            | CreateTtl
            | GetEphemerals
            | GetAllChildrenNumber
            | AddWatch
    );
    if !has_path || body.len() < 4 {
        return None;
    }
    let n = i32::from_be_bytes(body[..4].try_into().ok()?).max(0) as usize;
    body.get(4..4 + n)
        .map(|p| String::from_utf8_lossy(p).into_owned())
}

/// The header fields of a frame after the length: the first two big-endian i32s.
fn header(frame: &[u8]) -> Option<(i32, i32)> {
    let a = i32::from_be_bytes(frame.get(4..8)?.try_into().ok()?);
    let b = i32::from_be_bytes(frame.get(8..12)?.try_into().ok()?);
    Some((a, b))
}

/// What happens to one frame.
enum Verdict {
    Forward,
    Drop,
    Cut,
}

/// Counts a frame in `dir`, and says whether the frame-count cut is due before it
/// (`Some(true)`) or right after it (`Some(false)`).
fn count_frame(state: &StdMutex<State>, dir: Direction) -> Option<bool> {
    let mut s = lock(state);
    let i = dir.index();
    let cut = match s.cut_after[i] {
        Some(0) => {
            s.cut_after[i] = None;
            return Some(true);
        }
        Some(1) => {
            s.cut_after[i] = None;
            Some(false)
        }
        Some(k) => {
            s.cut_after[i] = Some(k - 1);
            None
        }
        None => None,
    };
    s.frames[i] += 1;
    cut
}

/// Waits while `dir` is stalled.
async fn unstalled(stall: &mut watch::Receiver<bool>) {
    let _ = stall.wait_for(|s| !*s).await;
}

async fn write(w: &mut (impl AsyncWrite + Unpin), frame: &[u8]) -> bool {
    w.write_all(frame).await.is_ok()
}

async fn relay(
    client: TcpStream,
    server: TcpStream,
    state: Arc<StdMutex<State>>,
    stalls: [watch::Receiver<bool>; 2],
) {
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let [mut up_stall, mut down_stall] = stalls;
    let actions: Arc<StdMutex<HashMap<i32, Action>>> = Arc::default();
    let acts = actions.clone();
    let up_state = state.clone();
    let upstream = async move {
        // The first frame is the connect request, without a request header.
        let mut first = true;
        while let Some(frame) = read_frame(&mut cr).await {
            unstalled(&mut up_stall).await;
            let verdict = if first {
                Verdict::Forward
            } else {
                on_request(&up_state, &acts, &frame)
            };
            first = false;
            match verdict {
                Verdict::Cut => return,
                Verdict::Drop => continue,
                Verdict::Forward => {}
            }
            let cut = count_frame(&up_state, Direction::ToServer);
            if cut == Some(true) || !write(&mut sw, &frame).await || cut == Some(false) {
                return;
            }
        }
    };
    let downstream = async move {
        let mut first = true;
        while let Some(frame) = read_frame(&mut sr).await {
            unstalled(&mut down_stall).await;
            if !first {
                let xid = header(&frame).map(|h| h.0).unwrap_or(0);
                let action = lock_actions(&actions).remove(&xid);
                match action {
                    Some(Action::CutReply) => return,
                    Some(Action::Hold(tell)) => {
                        let (go, wait) = oneshot::channel();
                        let _ = tell.send(go);
                        let _ = wait.await;
                    }
                    _ => {}
                }
            }
            first = false;
            let cut = count_frame(&state, Direction::ToClient);
            if cut == Some(true) || !write(&mut cw, &frame).await || cut == Some(false) {
                return;
            }
        }
    };
    // Either direction ending closes both: dropping the halves closes the sockets.
    tokio::select! {
        _ = upstream => {}
        _ = downstream => {}
    }
}

fn lock_actions(a: &StdMutex<HashMap<i32, Action>>) -> MutexGuard<'_, HashMap<i32, Action>> {
    a.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts a request and applies the first rule it matches.
fn on_request(
    state: &StdMutex<State>,
    actions: &StdMutex<HashMap<i32, Action>>,
    frame: &[u8],
) -> Verdict {
    let Some((xid, op)) = header(frame) else {
        return Verdict::Forward;
    };
    // A request the proxy cannot name goes through untouched: tests may send any bytes.
    let Some(op) = OpCode::from_code(op) else {
        return Verdict::Forward;
    };
    let path = request_path(op, &frame[12..]);
    let mut s = lock(state);
    *s.counts.entry(op).or_default() += 1;
    let hit = s
        .rules
        .iter()
        .position(|r| r.op == op && path.as_deref().unwrap_or("").contains(&r.path_contains));
    let Some(i) = hit else {
        return Verdict::Forward;
    };
    match s.rules.remove(i).action {
        Action::Swallow => Verdict::Drop,
        Action::CutRequest => Verdict::Cut,
        action => {
            lock_actions(actions).insert(xid, action);
            Verdict::Forward
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(xid: i32, op: OpCode, path: &str) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&xid.to_be_bytes());
        body.extend_from_slice(&op.code().to_be_bytes());
        body.extend_from_slice(&(path.len() as i32).to_be_bytes());
        body.extend_from_slice(path.as_bytes());
        let mut frame = (body.len() as i32).to_be_bytes().to_vec();
        frame.extend(body);
        frame
    }

    #[test]
    fn rules_match_opcode_and_path_once() {
        let state = StdMutex::new(State::default());
        let actions = StdMutex::new(HashMap::new());
        lock(&state).rules.push(Rule {
            op: OpCode::Delete,
            path_contains: "/locks".into(),
            action: Action::Swallow,
        });
        lock(&state).rules.push(Rule {
            op: OpCode::Create2,
            path_contains: String::new(),
            action: Action::CutReply,
        });
        let f = |xid, op, path| on_request(&state, &actions, &request(xid, op, path));
        assert!(matches!(f(1, OpCode::Delete, "/other"), Verdict::Forward));
        assert!(matches!(f(2, OpCode::Delete, "/locks/a"), Verdict::Drop));
        assert!(matches!(f(3, OpCode::Delete, "/locks/a"), Verdict::Forward));
        assert!(matches!(f(4, OpCode::Create2, "/x"), Verdict::Forward));
        assert!(matches!(
            lock_actions(&actions).get(&4),
            Some(Action::CutReply)
        ));
        assert_eq!(lock(&state).counts[&OpCode::Delete], 3);
        assert_eq!(
            request_path(
                OpCode::Create2,
                &request(0, OpCode::Notification, "/p")[12..]
            ),
            Some("/p".into())
        );
        assert_eq!(request_path(OpCode::Ping, &[]), None);
    }

    #[test]
    fn frame_cuts_count_down() {
        let state = StdMutex::new(State::default());
        lock(&state).cut_after[0] = Some(2);
        assert_eq!(count_frame(&state, Direction::ToServer), None);
        assert_eq!(count_frame(&state, Direction::ToClient), None);
        assert_eq!(count_frame(&state, Direction::ToServer), Some(false));
        assert_eq!(count_frame(&state, Direction::ToServer), None);
        lock(&state).cut_after[1] = Some(0);
        assert_eq!(count_frame(&state, Direction::ToClient), Some(true));
        assert_eq!(lock(&state).frames, [3, 1]);
    }
}
