//! SASL DIGEST-MD5 against real ZooKeeper 3.8 servers that the harness configures with a JAAS
//! file (`SaslServer`): ACLs, refusals, enforcement, failover.

mod recipes_support;

use std::{
    sync::OnceLock,
    time::{Duration, Instant},
};

use conformance::{Ensemble, SaslServer, Standalone};
use recipes_support::{assert_no_auth, kill_and_reconnect, sasl_ids, soon, unique_under, Proxy};
use zk_proto::OpCode;
use zk_session::{
    Acl, AuthFailure, Client, ConnectError, CreateOptions, Error, ErrorCode, EventType, Id, Perms,
    SaslConfig, SessionState, Version,
};

const SESSION: Duration = Duration::from_secs(20);

/// The reason connect() gives for a SASL failure: the server's refusal code, or the
/// mechanism's words.
fn auth_reason(err: &Error) -> &AuthFailure {
    match err {
        Error::AuthFailed(ConnectError::AuthFailed { source, .. }) => source,
        other => panic!("expected Error::AuthFailed with its reason, got {other:?}"),
    }
}

/// The server refused the credentials with `code`.
fn refused_with(err: &Error, code: ErrorCode) {
    assert_eq!(err.code(), Some(ErrorCode::AuthFailed), "{err:?}");
    match auth_reason(err) {
        AuthFailure::Refused { code: got, .. } => assert_eq!(*got, code, "{err}"),
        other => panic!("expected the server's refusal, got {other:?}"),
    }
}

fn users() -> SaslServer {
    SaslServer::digest_md5()
        .user("bob", "bobsecret")
        .user("alice", "alicesecret")
}

/// One SASL server for the tests that do not enforce authentication.
fn sasl_server() -> &'static Standalone {
    static SERVER: OnceLock<Standalone> = OnceLock::new();
    SERVER.get_or_init(|| {
        Standalone::builder()
            .sasl(users())
            .start()
            .expect("a SASL server")
    })
}

fn builder(connect_string: &str, sasl: Option<(&str, &str)>) -> zk_session::ClientBuilder {
    let b = Client::builder(connect_string).session_timeout(SESSION);
    match sasl {
        Some((user, password)) => b.sasl(SaslConfig::digest_md5(user, password)),
        None => b,
    }
}

async fn connect(connect_string: &str, sasl: Option<(&str, &str)>) -> Client {
    soon("connect", builder(connect_string, sasl).connect())
        .await
        .expect("connect")
}

fn only(user: &str) -> Vec<Acl> {
    vec![Acl::new(Perms::ALL, Id::new("sasl", user))]
}

/// A refused connect: the error and how long it took.
async fn refused(connect_string: &str, user: &str, password: &str) -> (Error, Duration) {
    let t = Instant::now();
    let r = soon(
        "a refused connect",
        builder(connect_string, Some((user, password))).connect(),
    )
    .await;
    let took = t.elapsed();
    match r {
        Ok(_) => panic!("the connect must fail"),
        Err(e) => (e, took),
    }
}

#[tokio::test]
async fn a_sasl_acl_admits_its_user_and_nobody_else() {
    let cs = sasl_server().connect_string();
    let bob = connect(&cs, Some(("bob", "bobsecret"))).await;
    assert_eq!(
        sasl_ids(&bob).await,
        ["bob"],
        "whoAmI shows the SASL identity"
    );
    let path = unique_under("sasl", "acl");
    bob.create(
        &path,
        b"bob's",
        CreateOptions::persistent().with_acl(only("bob")),
    )
    .await
    .unwrap();
    assert_eq!(&bob.get_data(&path).await.unwrap().0[..], b"bob's");
    let (acl, _) = bob.get_acl(&path).await.unwrap();
    assert_eq!(acl, only("bob"));

    let anonymous = connect(&cs, None).await;
    assert!(sasl_ids(&anonymous).await.is_empty());
    let alice = connect(&cs, Some(("alice", "alicesecret"))).await;
    assert_eq!(sasl_ids(&alice).await, ["alice"]);
    for other in [&anonymous, &alice] {
        assert_no_auth(other, &path).await;
    }
    bob.delete(&path, Version::Any).await.unwrap();
}

#[tokio::test]
async fn a_wrong_password_ends_in_auth_failed_at_once_without_retries() {
    let server = sasl_server();
    let proxy = Proxy::start(server.client_addr()).await;
    let (err, took) = refused(&proxy.connect_string(), "bob", "wrong").await;
    println!("wrong password: {err} after {took:?}");
    refused_with(&err, ErrorCode::AuthFailed);
    // Far sooner than the session timeout a retry loop would run for.
    assert!(took < SESSION / 2, "{took:?}");

    // A client built without waiting: the queued request gets AuthFailed, never sent.
    let queued = Proxy::start(server.client_addr()).await;
    let c = builder(&queued.connect_string(), Some(("bob", "wrong")))
        .build()
        .unwrap();
    let r = soon("the queued request", c.get_data("/")).await;
    assert!(
        matches!(r, Err(Error::Code(ErrorCode::AuthFailed))),
        "{r:?}"
    );
    assert_eq!(
        c.state(),
        SessionState::Ended(zk_session::EndReason::AuthFailed)
    );
    let r = soon("a later request", c.exists("/")).await;
    assert!(
        matches!(r, Err(Error::Code(ErrorCode::AuthFailed))),
        "{r:?}"
    );

    // No retry: one exchange each (the empty token and the response), nothing else, even
    // after a while.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for p in [&proxy, &queued] {
        let counts = p.counts();
        assert_eq!(counts.get(&OpCode::Sasl), Some(&2), "{counts:?}");
        assert_eq!(counts.len(), 1, "only SASL packets were sent: {counts:?}");
    }
}

#[tokio::test]
async fn a_server_without_sasl_gives_auth_failed_not_a_hang() {
    let cs = conformance::shared_standalone().connect_string();
    let (err, took) = refused(&cs, "bob", "bobsecret").await;
    println!("server without JAAS: {err} after {took:?}");
    assert_eq!(err.code(), Some(ErrorCode::AuthFailed), "{err:?}");
    auth_reason(&err);
    assert!(took < SESSION / 2, "{took:?}");
}

#[tokio::test]
async fn enforced_sasl_refuses_everyone_else_with_typed_errors() {
    let server = Standalone::builder()
        .sasl(users().enforce(true))
        .start()
        .expect("a server that enforces SASL");
    let cs = server.connect_string();

    // The session is created, then the first request is refused with -124.
    let anonymous = connect(&cs, None).await;
    let r = soon("the first request", anonymous.get_data("/")).await;
    assert!(
        matches!(r, Err(Error::Code(ErrorCode::SessionClosedRequireSaslAuth))),
        "{r:?}"
    );
    assert_eq!(
        anonymous.state(),
        SessionState::Ended(zk_session::EndReason::AuthFailed)
    );
    let r = soon("a later request", anonymous.exists("/")).await;
    assert!(
        matches!(r, Err(Error::Code(ErrorCode::AuthFailed))),
        "{r:?}"
    );

    // An idle client learns it from its first ping.
    let idle = soon(
        "connect",
        Client::builder(&cs)
            .session_timeout(Duration::from_secs(3))
            .connect(),
    )
    .await
    .unwrap();
    let mut state = idle.watch_state();
    soon("AuthFailed without a request", async {
        while state.get_and_update() != SessionState::Ended(zk_session::EndReason::AuthFailed) {
            state.changed().await.unwrap();
        }
    })
    .await;

    // A wrong password gets -124 in the exchange: AuthFailed.
    let (err, _) = refused(&cs, "bob", "wrong").await;
    refused_with(&err, ErrorCode::SessionClosedRequireSaslAuth);

    let bob = connect(&cs, Some(("bob", "bobsecret"))).await;
    let path = unique_under("sasl", "enforced");
    bob.create(&path, b"ok", CreateOptions::persistent())
        .await
        .unwrap();
    assert_eq!(&bob.get_data(&path).await.unwrap().0[..], b"ok");
    assert_eq!(sasl_ids(&bob).await, ["bob"]);
}

fn index_of(ens: &Ensemble, server: &str) -> usize {
    (0..ens.len())
        .find(|&i| server.ends_with(&format!(":{}", ens.server(i).client_port())))
        .expect("connected to a member")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_survives_a_failover_to_another_member() {
    let ens = Ensemble::builder()
        .size(3)
        .sasl(users())
        .start()
        .expect("a SASL ensemble");
    let bob = connect(&ens.connect_string(), Some(("bob", "bobsecret"))).await;
    let sid = bob.session_id();
    let path = unique_under("sasl", "failover");
    bob.create(
        &path,
        b"v1",
        CreateOptions::persistent().with_acl(only("bob")),
    )
    .await
    .unwrap();
    let (_, _, watch) = bob.get_data_watch(&path).await.unwrap();
    let victim = index_of(&ens, &bob.connected_server().unwrap());
    kill_and_reconnect(&bob, ens.server(victim)).await;
    let now = index_of(&ens, &bob.connected_server().unwrap());
    assert_ne!(now, victim);
    assert_eq!(bob.session_id(), sid);
    // Only sasl:bob may read or write: the new connection authenticated again.
    assert_eq!(sasl_ids(&bob).await, ["bob"]);
    assert_eq!(&bob.get_data(&path).await.unwrap().0[..], b"v1");
    bob.set_data(&path, b"v2", Version::Any).await.unwrap();
    // The watch was re-registered after the exchange.
    let event = soon("the watch", watch).await.unwrap();
    assert_eq!(event.event_type(), EventType::NodeDataChanged);
    bob.delete(&path, Version::Any).await.unwrap();
}

/// `(xid, opcode)` of every request but pings, per connection.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<Vec<(i32, i32)>>>>;

/// A relay that records the opcode of every request, per connection, and holds each new
/// connection after the first until released.
struct Recorder {
    addr: std::net::SocketAddr,
    ops: Seen,
    release: std::sync::Arc<tokio::sync::Semaphore>,
    conns: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
    accept: tokio::task::AbortHandle,
}

impl Recorder {
    async fn start(target: std::net::SocketAddr) -> Recorder {
        use std::sync::{Arc, Mutex};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let ops: Seen = Arc::default();
        let conns: Arc<Mutex<Vec<tokio::task::AbortHandle>>> = Arc::default();
        // The first connection goes through at once.
        let release = Arc::new(tokio::sync::Semaphore::new(1));
        let (o, c, r) = (ops.clone(), conns.clone(), release.clone());
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                r.acquire().await.unwrap().forget();
                let server = tokio::net::TcpStream::connect(target).await.unwrap();
                let n = {
                    let mut ops = o.lock().unwrap();
                    ops.push(Vec::new());
                    ops.len() - 1
                };
                let o = o.clone();
                let relay = tokio::spawn(async move {
                    let (mut cr, mut cw) = client.into_split();
                    let (mut sr, mut sw) = server.into_split();
                    let up = async {
                        let mut first = true;
                        loop {
                            let mut len = [0u8; 4];
                            if cr.read_exact(&mut len).await.is_err() {
                                return;
                            }
                            let mut body = vec![0u8; i32::from_be_bytes(len).max(0) as usize];
                            if cr.read_exact(&mut body).await.is_err() {
                                return;
                            }
                            // The connect request has no header.
                            if !first && body.len() >= 8 {
                                let xid = i32::from_be_bytes(body[..4].try_into().unwrap());
                                let op = i32::from_be_bytes(body[4..8].try_into().unwrap());
                                if op != 11 {
                                    o.lock().unwrap()[n].push((xid, op));
                                }
                            }
                            first = false;
                            if sw.write_all(&len).await.is_err()
                                || sw.write_all(&body).await.is_err()
                            {
                                return;
                            }
                        }
                    };
                    tokio::select! {
                        _ = up => {}
                        _ = tokio::io::copy(&mut sr, &mut cw) => {}
                    }
                });
                c.lock().unwrap().push(relay.abort_handle());
            }
        });
        Recorder {
            addr,
            ops,
            release,
            conns,
            accept: accept.abort_handle(),
        }
    }

    fn cut(&self) {
        for c in self.conns.lock().unwrap().drain(..) {
            c.abort();
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

/// On every connection SASL comes first, then SetWatches, then what was queued, as the Java
/// client does it.
#[tokio::test]
async fn sasl_goes_before_set_watches_and_queued_requests_on_a_reconnect() {
    const SASL: i32 = 102;
    let server = sasl_server();
    let relay = Recorder::start(server.client_addr()).await;
    let bob = connect(&relay.addr.to_string(), Some(("bob", "bobsecret"))).await;
    let path = unique_under("sasl", "order");
    bob.create(
        &path,
        b"",
        CreateOptions::persistent().with_acl(only("bob")),
    )
    .await
    .unwrap();
    let (_, _, _watch) = bob.get_data_watch(&path).await.unwrap();
    let mut state = bob.watch_state();
    relay.cut();
    soon("suspended", async {
        while state.get_and_update().is_connected() {
            state.changed().await.unwrap();
        }
    })
    .await;
    // Queued while the next connection is held.
    let queued = tokio::spawn({
        let bob = bob.clone();
        let path = path.clone();
        async move { bob.get_data(&path).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    relay.release.add_permits(1);
    let (data, _) = soon("the queued request", queued).await.unwrap().unwrap();
    assert!(data.is_empty());
    let seen = relay.ops.lock().unwrap().clone();
    let ops: Vec<Vec<i32>> = seen
        .iter()
        .map(|c| c.iter().map(|&(_, op)| op).collect())
        .collect();
    assert_eq!(ops.len(), 2, "{seen:?}");
    assert_eq!(&ops[0][..3], [SASL, SASL, 1], "{seen:?}"); // then create
    assert_eq!(&ops[1][..4], [SASL, SASL, 101, 4], "{seen:?}"); // setWatches, getData
                                                                // SASL packets take their xids from the session's counter, which goes on across
                                                                // connections (setWatches has its own reserved xid).
    let xids: Vec<i32> = seen
        .concat()
        .into_iter()
        .filter(|&(_, op)| op != 101)
        .map(|(xid, _)| xid)
        .collect();
    assert_eq!(xids[0], 1, "{seen:?}");
    assert!(xids.windows(2).all(|w| w[1] == w[0] + 1), "{seen:?}");
    bob.delete(&path, Version::Any).await.unwrap();
}

/// SASL inside TLS: the server knows the client by its certificate and by its SASL user, a
/// `sasl:` ACL admits it, and a wrong password over TLS is still AuthFailed without retries.
#[tokio::test]
async fn sasl_runs_inside_tls() {
    use conformance::{ServerTls, TestCerts};
    use zk_session::TlsConfig;

    let certs = TestCerts::generate().expect("certificates");
    let zk = Standalone::builder()
        .sasl(users())
        .tls(ServerTls::from_certs(&certs))
        .start()
        .expect("a SASL server with a secure port");
    let tls = || {
        TlsConfig::builder()
            .ca_file(certs.ca())
            .client_cert_files(certs.client_pem(), certs.client_pem())
            .build()
            .unwrap()
    };
    let secure = zk.secure_connect_string();
    let bob = soon(
        "connect over TLS with SASL",
        builder(&secure, Some(("bob", "bobsecret")))
            .tls(tls())
            .connect(),
    )
    .await
    .expect("connect");
    let schemes: Vec<String> = bob
        .who_am_i()
        .await
        .unwrap()
        .into_iter()
        .map(|i| i.auth_scheme)
        .collect();
    assert!(schemes.iter().any(|s| s == "x509"), "{schemes:?}");
    assert_eq!(sasl_ids(&bob).await, ["bob"]);
    let path = unique_under("sasl", "tls");
    bob.create(
        &path,
        b"x",
        CreateOptions::persistent().with_acl(only("bob")),
    )
    .await
    .unwrap();
    assert_eq!(&bob.get_data(&path).await.unwrap().0[..], b"x");

    let t = Instant::now();
    let wrong = soon(
        "a refused connect over TLS",
        builder(&secure, Some(("bob", "wrong")))
            .tls(tls())
            .connect(),
    )
    .await;
    refused_with(&wrong.unwrap_err(), ErrorCode::AuthFailed);
    assert!(t.elapsed() < SESSION, "took {:?}", t.elapsed());
    bob.delete(&path, Version::Any).await.unwrap();
    bob.close().await.unwrap();
}

/// A mechanism whose start blocks its thread, as GSSAPI's does while it asks a slow KDC for a
/// ticket, then gives up.
#[derive(Debug)]
struct SlowToStart(Duration);

impl zk_session::SaslMechanism for SlowToStart {
    fn name(&self) -> &str {
        "X-SLOW"
    }

    fn start(
        &self,
        _server_host: &str,
    ) -> Result<Box<dyn zk_session::SaslExchange>, zk_session::SaslError> {
        std::thread::sleep(self.0);
        Err(zk_session::SaslError::new("no ticket"))
    }
}

/// While a mechanism blocks, the application's other tasks run on: with one worker thread,
/// a ticker keeps ticking through the whole blocked start (the worker hands its tasks to
/// another thread), and the connect fails with the mechanism's reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_blocking_mechanism_does_not_stall_the_other_tasks() {
    const BLOCKED: Duration = Duration::from_millis(1500);
    let ticks = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let ticker = tokio::spawn({
        let ticks = ticks.clone();
        async move {
            let mut every = tokio::time::interval(Duration::from_millis(10));
            // Not Burst: ticks missed while stalled must not be made up afterwards.
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                ticks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    });
    let server = conformance::shared_standalone().connect_string();
    let started = Instant::now();
    let connect = Client::builder(&server)
        .sasl(SaslConfig::mechanism(SlowToStart(BLOCKED)))
        .connect();
    let before = ticks.load(std::sync::atomic::Ordering::Relaxed);
    let err = soon("the connect fails", connect).await.unwrap_err();
    let during = ticks.load(std::sync::atomic::Ordering::Relaxed) - before;
    ticker.abort();
    assert!(err.to_string().contains("SASL X-SLOW: no ticket"), "{err}");
    assert!(started.elapsed() >= BLOCKED, "{:?}", started.elapsed());
    // 150 ticks fit in the blocked time; a stalled worker would give about none.
    assert!(during >= 50, "{during} ticks while the mechanism blocked");
}
