//! Helpers for the recipe tests: clients, unique paths, the server's view of watches, a raw
//! connection that closes another client's session, and a TCP proxy that can count, hold or
//! cut the replies of a client's requests.

#![allow(dead_code)]

use std::{
    collections::HashMap,
    future::Future,
    net::SocketAddr,
    sync::{
        atomic::{AtomicU32, Ordering},
        Arc, Mutex as StdMutex,
    },
    time::{Duration, Instant},
};

use conformance::{four_letter_word, ZkServer};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream as TokioStream},
    sync::{mpsc, oneshot},
    task::AbortHandle,
};
use zk_session::Client;

/// Generous bound for anything that should happen "soon" on a loaded 2-core machine.
pub const SOON: Duration = Duration::from_secs(30);

/// Opcodes the tests look at.
pub const OP_DELETE: i32 = 2;
pub const OP_GET_DATA: i32 = 4;
pub const OP_GET_CHILDREN: i32 = 8;
pub const OP_GET_CHILDREN2: i32 = 12;
pub const OP_CREATE2: i32 = 15;

/// A client of `connect_string` with a 20 s session.
pub async fn client(connect_string: &str) -> Client {
    Client::builder(connect_string)
        .session_timeout(Duration::from_secs(20))
        .connect()
        .await
        .expect("connect")
}

/// The shared standalone server's connect string.
pub fn shared() -> String {
    conformance::shared_standalone().connect_string()
}

/// The last component of a path.
pub fn name_of(path: &str) -> String {
    path.rsplit('/').next().unwrap().to_owned()
}

/// Waits until `path` has `n` children; returns them.
pub async fn until_children(c: &Client, path: &str, n: usize) -> Vec<String> {
    until_some(&format!("{n} children under {path}"), || async move {
        let got = children(c, path).await;
        (got.len() == n).then_some(got)
    })
    .await
}

/// A path no other test (or run) uses.
pub fn unique(tag: &str) -> String {
    unique_under("recipes", tag)
}

/// A path no other test (or run) uses, starting `/{prefix}-{tag}-`: the process id, the
/// clock's nanoseconds and a counter tell runs, processes and calls apart.
pub fn unique_under(prefix: &str, tag: &str) -> String {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "/{prefix}-{tag}-{}-{nanos}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// Awaits `f`, failing the test with `what` if it takes longer than [`SOON`].
pub async fn soon<T>(what: &str, f: impl Future<Output = T>) -> T {
    match tokio::time::timeout(SOON, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {SOON:?}: {what}"),
    }
}

/// Polls `check` every 50 ms until it holds, failing the test after [`SOON`].
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + SOON;
    while !check().await {
        assert!(
            Instant::now() < deadline,
            "timed out after {SOON:?}: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls `f` every 50 ms until it returns `Some`, failing the test after [`SOON`].
pub async fn until_some<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + SOON;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {SOON:?}: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The children of `path`, sorted (empty when it does not exist).
pub async fn children(c: &Client, path: &str) -> Vec<String> {
    match c.get_children(path).await {
        Ok(mut v) => {
            v.sort();
            v
        }
        Err(e) if e.code() == Some(zk_session::ErrorCode::NoNode) => Vec::new(),
        Err(e) => panic!("listing {path}: {e}"),
    }
}

/// The server's watches by session (`wchc`): session id → watched paths.
pub fn watches_by_session(server: &ZkServer) -> HashMap<i64, Vec<String>> {
    let text =
        four_letter_word(server.client_addr(), "wchc", Duration::from_secs(10)).expect("wchc");
    let mut out: HashMap<i64, Vec<String>> = HashMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(hex) = line.trim().strip_prefix("0x") {
            let id = u64::from_str_radix(hex, 16).expect("session id") as i64;
            out.entry(id).or_default();
            current = Some(id);
        } else if let (Some(id), path) = (current, line.trim()) {
            if path.starts_with('/') {
                out.entry(id).or_default().push(path.to_owned());
            }
        }
    }
    out
}

/// The paths `session` watches on `server`, sorted.
pub fn watches_of(server: &ZkServer, session: i64) -> Vec<String> {
    let mut v = watches_by_session(server)
        .remove(&session)
        .unwrap_or_default();
    v.sort();
    v
}

/// Every watch on `server` at or below `prefix`, as (session, path).
pub fn watches_under(server: &ZkServer, prefix: &str) -> Vec<(i64, String)> {
    let mut v: Vec<(i64, String)> = watches_by_session(server)
        .into_iter()
        .flat_map(|(s, paths)| paths.into_iter().map(move |p| (s, p)))
        .filter(|(_, p)| p.starts_with(prefix))
        .collect();
    v.sort();
    v
}

/// Takes over `victim`'s session on a second connection and closes it there: the server
/// deletes the session's ephemeral nodes, and the victim learns on reconnecting that its
/// session has expired. The classic way to expire a session in a ZooKeeper test. The victim
/// must be cut off meanwhile (see [`Proxy::partition`]), or it takes its session back at once.
pub async fn expire_session(connect_string: &str, victim: &Client) {
    let thief = Client::builder(connect_string)
        .resume_session(victim.session_id(), victim.session_password())
        .connect()
        .await
        .expect("take the session over");
    assert_eq!(thief.session_id(), victim.session_id());
    thief.close().await.expect("close the session");
}

/// What the proxy does with the reply to a request that matches a rule.
enum Action {
    /// Drop the reply and close the connection: the request took effect, the client never
    /// hears so.
    Cut,
    /// Tell the test, and forward the reply only when it says so.
    Hold(mpsc::UnboundedSender<oneshot::Sender<()>>),
    /// Never forward the request (the connection stays up): the server never sees it.
    Swallow,
}

struct Rule {
    op: i32,
    path_contains: String,
    action: Action,
}

#[derive(Default)]
struct ProxyState {
    /// One-shot rules, matched against requests in order.
    rules: Vec<Rule>,
    /// Requests seen, by opcode, over all connections.
    counts: HashMap<i32, u64>,
    conns: Vec<AbortHandle>,
    /// Refuse connections (accept and close them at once).
    partitioned: bool,
}

/// A TCP proxy in front of one server, for one client. Understands just enough of the
/// protocol to see each request's xid, opcode and path, and each reply's xid.
pub struct Proxy {
    addr: SocketAddr,
    state: Arc<StdMutex<ProxyState>>,
    accept: AbortHandle,
}

/// A reply held back by [`Proxy::hold_reply`].
pub struct HeldReply {
    rx: mpsc::UnboundedReceiver<oneshot::Sender<()>>,
}

impl HeldReply {
    /// Waits until the reply has arrived (and is held); returns the switch that lets it go.
    pub async fn arrived(&mut self) -> oneshot::Sender<()> {
        soon("the held reply", self.rx.recv())
            .await
            .expect("proxy gone")
    }
}

impl Proxy {
    /// Listens on a free port of 127.0.0.1 and forwards every connection to `target`.
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(StdMutex::new(ProxyState::default()));
        let st = state.clone();
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if st.lock().unwrap().partitioned {
                    continue;
                }
                let Ok(server) = TokioStream::connect(target).await else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let conn = tokio::spawn(relay(client, server, st.clone()));
                st.lock().unwrap().conns.push(conn.abort_handle());
            }
        });
        Proxy {
            addr,
            state,
            accept: accept.abort_handle(),
        }
    }

    pub fn connect_string(&self) -> String {
        self.addr.to_string()
    }

    /// Cuts the client off (drops its connection and refuses new ones), or lets it back.
    pub fn partition(&self, cut: bool) {
        let mut st = self.state.lock().unwrap();
        st.partitioned = cut;
        if cut {
            for c in st.conns.drain(..) {
                c.abort();
            }
        }
    }

    /// How many requests with `op` went through.
    pub fn count(&self, op: i32) -> u64 {
        self.state
            .lock()
            .unwrap()
            .counts
            .get(&op)
            .copied()
            .unwrap_or(0)
    }

    /// The counts of every opcode except pings (11).
    pub fn counts(&self) -> HashMap<i32, u64> {
        let mut c = self.state.lock().unwrap().counts.clone();
        c.remove(&11);
        c
    }

    /// The next request with `op` whose path contains `path_contains` goes to the server, but
    /// its reply is dropped and the connection closed.
    pub fn cut_reply(&self, op: i32, path_contains: &str) {
        self.state.lock().unwrap().rules.push(Rule {
            op,
            path_contains: path_contains.to_owned(),
            action: Action::Cut,
        });
    }

    /// The next request with `op` whose path contains `path_contains` is not forwarded.
    pub fn swallow(&self, op: i32, path_contains: &str) {
        self.state.lock().unwrap().rules.push(Rule {
            op,
            path_contains: path_contains.to_owned(),
            action: Action::Swallow,
        });
    }

    /// The reply to the next request with `op` whose path contains `path_contains` is held
    /// until the test lets it go.
    pub fn hold_reply(&self, op: i32, path_contains: &str) -> HeldReply {
        let (tx, rx) = mpsc::unbounded_channel();
        self.state.lock().unwrap().rules.push(Rule {
            op,
            path_contains: path_contains.to_owned(),
            action: Action::Hold(tx),
        });
        HeldReply { rx }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        for c in self.state.lock().unwrap().conns.drain(..) {
            c.abort();
        }
    }
}

async fn read_frame_async(r: &mut (impl AsyncReadExt + Unpin)) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await.ok()?;
    let n = i32::from_be_bytes(len);
    let mut frame = len.to_vec();
    frame.resize(4 + n.max(0) as usize, 0);
    r.read_exact(&mut frame[4..]).await.ok()?;
    Some(frame)
}

/// The path at the start of a request body, if the opcode has one there.
fn request_path(op: i32, body: &[u8]) -> Option<String> {
    // create, delete, exists, getData, setData, getChildren(2), create2, createContainer, …
    if !matches!(op, 1..=9 | 12 | 15 | 19 | 21) || body.len() < 4 {
        return None;
    }
    let n = i32::from_be_bytes(body[..4].try_into().unwrap()).max(0) as usize;
    body.get(4..4 + n)
        .map(|p| String::from_utf8_lossy(p).into_owned())
}

async fn relay(client: TokioStream, server: TokioStream, state: Arc<StdMutex<ProxyState>>) {
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let actions: Arc<StdMutex<HashMap<i32, Action>>> = Arc::default();
    let acts = actions.clone();
    let upstream = async move {
        // The first frame is the connect request, without a request header.
        let mut first = true;
        while let Some(frame) = read_frame_async(&mut cr).await {
            if !first && frame.len() >= 12 {
                let xid = i32::from_be_bytes(frame[4..8].try_into().unwrap());
                let op = i32::from_be_bytes(frame[8..12].try_into().unwrap());
                let path = request_path(op, &frame[12..]);
                let mut st = state.lock().unwrap();
                *st.counts.entry(op).or_default() += 1;
                // An empty pattern also matches requests without a path (closeSession…).
                let hit = st.rules.iter().position(|r| {
                    r.op == op && path.as_deref().unwrap_or("").contains(&r.path_contains)
                });
                if let Some(i) = hit {
                    let rule = st.rules.remove(i);
                    if matches!(rule.action, Action::Swallow) {
                        continue;
                    }
                    acts.lock().unwrap().insert(xid, rule.action);
                }
            }
            first = false;
            if sw.write_all(&frame).await.is_err() {
                return;
            }
        }
    };
    let downstream = async move {
        let mut first = true;
        while let Some(frame) = read_frame_async(&mut sr).await {
            if !first && frame.len() >= 8 {
                let xid = i32::from_be_bytes(frame[4..8].try_into().unwrap());
                let action = actions.lock().unwrap().remove(&xid);
                match action {
                    Some(Action::Cut) => return,
                    Some(Action::Hold(tell)) => {
                        let (go, wait) = oneshot::channel();
                        let _ = tell.send(go);
                        let _ = wait.await;
                    }
                    Some(Action::Swallow) | None => {}
                }
            }
            first = false;
            if cw.write_all(&frame).await.is_err() {
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
