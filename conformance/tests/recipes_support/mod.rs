//! Helpers for the recipe tests: clients, unique paths, the server's view of watches, a raw
//! connection that closes another client's session, the harness's fault proxy, and peer
//! processes of other client libraries ([`peer`]).

#![allow(dead_code, unused_imports)]

pub mod peer;

use conformance::ephemeral_owner;
use std::{
    collections::HashMap,
    future::Future,
    sync::{
        atomic::{AtomicU32, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

pub use conformance::fault_proxy::{Direction, FaultProxy as Proxy, HeldReply};
use conformance::ZkServer;
use tokio::{sync::oneshot, task::JoinHandle};
pub use zk_proto::OpCode;
use zk_recipes::{InterProcessMutex, InterProcessMutexGuard, Participant};
use zk_session::{Client, CreateOptions, SessionState};

/// Generous bound for anything that should happen "soon" on a loaded 2-core machine.
pub const SOON: Duration = Duration::from_secs(30);

/// `conformance/java/{file}` compiled with javac against Debian's Curator jars into a
/// scratch directory named after `tag`; panics saying what to install when it cannot be.
pub fn compile_curator_peer(file: &str, tag: &str) -> conformance::peers::JavaProgram {
    use conformance::peers;
    peers::JavaProgram::compile(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("java")
            .join(file),
        &peers::process_dir(&std::env::temp_dir(), tag),
        peers::CURATOR_JARS,
        "libcurator-recipes-java (scripts/test does)",
    )
    .unwrap_or_else(|e| panic!("Curator interop cannot run: {e}"))
}

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

/// The `sasl` ids the server knows `c` by (whoAmI).
pub async fn sasl_ids(c: &Client) -> Vec<String> {
    c.who_am_i()
        .await
        .unwrap()
        .into_iter()
        .filter(|i| i.auth_scheme == "sasl")
        .map(|i| i.user)
        .collect()
}

/// `c` may neither read nor write `path`: NoAuth.
pub async fn assert_no_auth(c: &Client, path: &str) {
    let r = c.get_data(path).await;
    assert!(
        matches!(
            r,
            Err(zk_session::Error::Code(zk_session::ErrorCode::NoAuth))
        ),
        "{r:?}"
    );
    let r = c.set_data(path, b"x", zk_session::Version::Any).await;
    assert!(
        matches!(
            r,
            Err(zk_session::Error::Code(zk_session::ErrorCode::NoAuth))
        ),
        "{r:?}"
    );
}

/// SIGKILLs `server`, the member `c` is connected to, and waits until `c` has reconnected
/// (to another member). Needs a multi-thread runtime.
pub async fn kill_and_reconnect(c: &Client, server: &ZkServer) {
    let events = c.session_events();
    tokio::task::block_in_place(|| server.kill9());
    until_reconnected(events).await;
}

/// Cuts `c`'s connections at `proxy` and waits until `c` has reconnected (same session).
pub async fn cut_and_reconnect(proxy: &Proxy, c: &Client) {
    let events = c.session_events();
    proxy.cut_connections();
    until_reconnected(events).await;
}

/// Waits (at most [`SOON`]) for a `Reconnected` among `events`.
async fn until_reconnected(mut events: zk_session::SessionEvents) {
    soon("the reconnect", async {
        while let Some(ev) = events.next().await {
            if ev == zk_session::SessionEvent::Reconnected {
                return;
            }
        }
        panic!("no Reconnected event");
    })
    .await;
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

/// Creates an empty ephemeral-sequential node named `prefix…` as `c`, as another contender
/// would; the node's full path.
pub async fn ephemeral_sequential(c: &Client, prefix: &str) -> String {
    c.create(prefix, b"", CreateOptions::ephemeral_sequential())
        .await
        .unwrap_or_else(|e| panic!("creating {prefix}…: {e}"))
}

/// The server's watches by session (`wchc`): session id → watched paths.
pub fn watches_by_session(server: &ZkServer) -> HashMap<i64, Vec<String>> {
    conformance::sweep::watches_by_session(server.client_addr()).expect("wchc")
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

/// Expires `victim`'s session with the test kit's [`conformance::expire_session`]: a second
/// connection to the first server of `connect_string` takes the session over and closes it;
/// the server deletes the session's ephemeral nodes, and the victim learns on reconnecting
/// that its session has expired. The victim must be cut off meanwhile (see
/// [`Proxy::partition`]), or it takes its session back at once.
///
/// A session the server has already expired (its timeout ran out while the victim was cut
/// off, on a slow machine) is what the caller wants: that is not an error.
pub async fn expire_session(connect_string: &str, victim: &Client) {
    let server: std::net::SocketAddr = connect_string
        .split(',')
        .next()
        .and_then(|s| s.parse().ok())
        .expect("an address in the connect string");
    let id = victim.session_id().expect("the victim has a session").get();
    let password = victim.session_password();
    tokio::task::spawn_blocking(move || conformance::expire_session(server, id, &password))
        .await
        .expect("the expiry task")
        .expect("take the session over and close it");
}

/// Waits (at most [`SOON`]) until `c` is in state `want`.
pub async fn until_state(c: &Client, want: SessionState) {
    let mut rx = c.watch_state();
    soon(&format!("state {want:?}"), rx.wait_for(|s| s == want))
        .await
        .expect("client gone");
}

/// Waits (at most [`SOON`]) until a held reply has arrived; returns the switch that lets it
/// go.
pub async fn arrived(held: &mut HeldReply) -> oneshot::Sender<()> {
    soon("the held reply", held.arrived())
        .await
        .expect("proxy gone")
}

/// `m.acquire()` on a task of its own, so that the test can go on while it waits in line.
pub fn spawn_acquire(
    m: &Arc<InterProcessMutex>,
) -> JoinHandle<zk_recipes::Result<InterProcessMutexGuard>> {
    let m = m.clone();
    tokio::spawn(async move { m.acquire().await })
}

/// The ids of an election's participants, in line order.
pub fn participant_ids(participants: Vec<Participant>) -> Vec<String> {
    participants.into_iter().map(|p| p.id).collect()
}

/// A client behind its own fault proxy, with a 10 s session.
pub async fn proxied() -> (Proxy, Client) {
    proxied_for(Duration::from_secs(10)).await
}

/// A client behind its own fault proxy, with a session of `session`.
pub async fn proxied_for(session: Duration) -> (Proxy, Client) {
    let proxy = Proxy::start(conformance::shared_standalone().client_addr()).await;
    let c = Client::builder(&proxy.connect_string())
        .session_timeout(session)
        .connect()
        .await
        .expect("connect");
    (proxy, c)
}

/// Expires `victim`'s session while `proxy` cuts it off, lets it back, and waits until the
/// same handle is connected with a new session. Returns the old and the new session ids.
pub async fn expire_and_renew(proxy: &Proxy, victim: &Client) -> (i64, i64) {
    let old = session_of(victim);
    cut_off(proxy, victim).await;
    expire_session(&shared(), victim).await;
    let new = let_back_renewed(proxy, victim, old).await;
    assert!(!victim.has_ended());
    (old, new)
}

/// Cuts `victim` off at `proxy` and waits until it knows (Suspended).
pub async fn cut_off(proxy: &Proxy, victim: &Client) {
    proxy.partition(true);
    until_state(victim, SessionState::Suspended).await;
}

/// Lets `victim`, whose session `old` has been expired, back through `proxy` and waits until
/// the same handle is connected with a new session; returns its id.
pub async fn let_back_renewed(proxy: &Proxy, victim: &Client, old: i64) -> i64 {
    proxy.partition(false);
    until_some("a new session on the same handle", || async {
        let id = session_of(victim);
        (victim.state() == SessionState::Connected && id != 0 && id != old).then_some(id)
    })
    .await
}

/// Runs `op` on a handle of `x` on a task of its own, so that the test goes on while it
/// waits.
pub fn spawn_on<T, R, F, Fut>(x: &Arc<T>, op: F) -> JoinHandle<R>
where
    F: FnOnce(Arc<T>) -> Fut,
    Fut: Future<Output = R> + Send + 'static,
    R: Send + 'static,
{
    tokio::spawn(op(x.clone()))
}

/// `c`'s session id as znodes carry it (0 for none).
pub fn session_of(c: &Client) -> i64 {
    ephemeral_owner(c)
}

/// The ephemeral owner of `path` as `admin` sees it.
pub async fn owner(admin: &Client, path: &str) -> i64 {
    admin.get_data(path).await.unwrap().1.ephemeral_owner
}

/// Cuts `c` off at `proxy` until it knows, then lets it back on the same session.
pub async fn partition_and_heal(proxy: &Proxy, c: &Client) {
    let session = c.session_id();
    cut_off(proxy, c).await;
    proxy.partition(false);
    until_state(c, SessionState::Connected).await;
    assert_eq!(c.session_id(), session, "the same session");
}

/// Waits until `latch` leads (`Ok`), or it ends first (why).
pub async fn leads(latch: &zk_recipes::LeaderLatch) -> zk_recipes::Result<()> {
    use zk_recipes::{LatchStatus, RecipeError};
    let mut status = latch.status();
    match status.wait_for(|s| s.is_leader() || s.has_ended()).await? {
        LatchStatus::Ended(e) => Err(e),
        LatchStatus::Closed => Err(RecipeError::Closed),
        _ => Ok(()),
    }
}
