//! zk-session's `tls` feature against real ZooKeeper 3.8 servers with a secure client port
//! (Netty, JDK TLS), with certificates made by openssl for this run.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use conformance::{
    certs::{CLIENT_SUBJECT, SERVER_DNS_NAME},
    options::ClientAuth,
    shared_tls_standalone, Ensemble, Mode, ServerTls, Standalone, TestCerts, TlsStandalone,
};
use tokio::net::{TcpListener, TcpStream};
use zk_session::{
    Client, ClientBuilder, CreateOptions, Error, ErrorCode, EventType, ReadOnly, RetryPolicy,
    ServerNameCheck, SessionState, TlsConfig, Version,
};

/// One server per test binary: TLS beside plain TCP, client certificates required.
fn env() -> &'static TlsStandalone {
    shared_tls_standalone()
}

fn port_of(connect_string: &str) -> u16 {
    connect_string.rsplit(':').next().unwrap().parse().unwrap()
}

/// Trusts the test CA and presents the client certificate (ZooKeeper-style combined file).
fn mutual(certs: &TestCerts) -> TlsConfig {
    TlsConfig::builder()
        .ca_file(certs.ca())
        .client_cert_files(certs.client_pem(), certs.client_pem())
        .build()
        .unwrap()
}

fn builder(connect_string: &str) -> ClientBuilder {
    Client::builder(connect_string)
        .session_timeout(Duration::from_secs(10))
        .connect_attempt_timeout(Duration::from_secs(2))
        .first_connection_timeout(Duration::from_secs(3))
}

/// What `connect` reports when no attempt succeeds: the last attempt's failure, or the TLS
/// failure that made it stop trying.
async fn connect_failure(b: ClientBuilder) -> String {
    match b.connect().await {
        Err(Error::ConnectTimeout {
            last_error: Some(e),
            ..
        }) => {
            eprintln!("connect failed as expected: {e}");
            e.to_string()
        }
        Err(Error::Tls(e)) => {
            eprintln!("connect failed as expected: {e}");
            format!("TLS handshake failed: {e}")
        }
        Ok(_) => panic!("connected"),
        Err(e) => panic!("expected ConnectTimeout with a last error, got {e:?}"),
    }
}

#[tokio::test]
async fn operations_and_watches_over_mutual_tls() {
    let env = env();
    let tls = env.zk.secure_connect_string();
    let c = builder(&tls)
        .tls(mutual(&env.certs))
        .connect()
        .await
        .unwrap();
    let other = builder(&tls)
        .tls(mutual(&env.certs))
        .connect()
        .await
        .unwrap();
    let p = format!("/tls-ops-{}", std::process::id());
    c.create(&p, b"one", CreateOptions::persistent())
        .await
        .unwrap();
    let (data, _, watch) = c.get_data_watch(&p).await.unwrap();
    assert_eq!(&data[..], b"one");
    other.set_data(&p, b"two", Version::Exact(0)).await.unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(10), watch)
        .await
        .expect("watch fired")
        .unwrap();
    assert_eq!(
        (ev.event_type(), ev.path()),
        (EventType::NodeDataChanged, p.as_str())
    );
    assert_eq!(&c.get_data(&p).await.unwrap().0[..], b"two");
    // A large value crosses many TLS records both ways.
    let big = vec![7u8; 900 * 1024];
    c.set_data(&p, &big, Version::Any).await.unwrap();
    assert_eq!(other.get_data(&p).await.unwrap().0.len(), big.len());
    // The server knows the client by its certificate.
    let ids = c.who_am_i().await.unwrap();
    assert!(
        ids.iter()
            .any(|i| i.auth_scheme == "x509" && i.user == CLIENT_SUBJECT),
        "{ids:?}"
    );
    // Plain TCP on the other port reaches the same data and has no x509 identity.
    let plain = builder(&env.zk.connect_string()).connect().await.unwrap();
    assert_eq!(plain.get_data(&p).await.unwrap().0.len(), big.len());
    let ids = plain.who_am_i().await.unwrap();
    assert!(!ids.iter().any(|i| i.auth_scheme == "x509"), "{ids:?}");
    c.delete(&p, Version::Any).await.unwrap();
}

#[tokio::test]
async fn tls_1_3_when_the_server_offers_only_that() {
    let certs = TestCerts::generate().unwrap();
    let zk = Standalone::builder()
        .tls(ServerTls::from_certs(&certs))
        .config("ssl.protocol", "TLSv1.3")
        .config("ssl.enabledProtocols", "TLSv1.3")
        .config(
            "ssl.ciphersuites",
            "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384",
        )
        .start()
        .expect("TLS 1.3 server");
    let c = builder(&zk.secure_connect_string())
        .tls(mutual(&certs))
        .connect()
        .await
        .unwrap();
    let ids = c.who_am_i().await.unwrap();
    assert!(
        ids.iter()
            .any(|i| i.auth_scheme == "x509" && i.user == CLIENT_SUBJECT),
        "{ids:?}"
    );
}

/// Megabytes of pipelined writes over TLS to a server that stops reading for a second (so
/// every socket buffer fills up) are all answered once it reads again. The transport also
/// flushes bytes that rustls accepted but could not send from its read side (the session
/// writes only while it has bytes of its own); on loopback the socket rarely stays full at
/// the last write, so this test does not reliably reach that case (it passed without it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_large_writes_through_full_socket_buffers_are_all_answered() {
    let env = env();
    let zk = Standalone::builder()
        .tls(ServerTls::from_certs(&env.certs))
        .start()
        .expect("TLS server");
    let c = builder(&zk.secure_connect_string())
        .session_timeout(Duration::from_secs(30))
        .operation_timeout(Duration::from_secs(8))
        .tls(mutual(&env.certs))
        .connect()
        .await
        .unwrap();
    let value = vec![7u8; 1000 * 1024];
    let paths: Vec<String> = (0..12).map(|i| format!("/large-{i}")).collect();
    for p in &paths {
        c.create(p, b"", CreateOptions::persistent()).await.unwrap();
    }
    blocking(|| zk.pause()).unwrap();
    let writes: Vec<_> = paths
        .iter()
        .map(|p| {
            let (c, p, v) = (c.clone(), p.clone(), value.clone());
            tokio::spawn(async move { c.set_data(&p, &v, Version::Any).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    blocking(|| zk.resume()).unwrap();
    for w in writes {
        w.await
            .unwrap()
            .expect("every write answered before the request timeout");
    }
    for p in &paths {
        assert_eq!(c.get_data(p).await.unwrap().0, value);
    }
}

/// Accepts on a free port and relays to `target`, counting connections.
async fn counting_relay(target: u16) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let n = count.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            n.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                if let Ok(mut out) = TcpStream::connect(("127.0.0.1", target)).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                }
            });
        }
    });
    (port, count)
}

#[tokio::test]
async fn no_client_certificate_is_a_clear_error_without_a_retry_storm() {
    let env = env();
    let port = port_of(&env.zk.secure_connect_string());
    let (relay, attempts) = counting_relay(port).await;
    let no_cert = TlsConfig::builder()
        .ca_file(env.certs.ca())
        .build()
        .unwrap();
    let started = Instant::now();
    let e = connect_failure(builder(&format!("127.0.0.1:{relay}")).tls(no_cert)).await;
    // ssl.clientAuth=need: the server ends the handshake with an alert, which connect
    // reports as the missing certificate (typed: tls_failures.rs).
    assert!(
        e.contains("TLS handshake failed") && e.contains("requires a client certificate"),
        "{e}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // The reconnect backoff (50 ms doubling to 1 s) applies: a handful of attempts in 3 s.
    let n = attempts.load(Ordering::SeqCst);
    eprintln!("{n} connection attempts in 3 s");
    // (At least one: a slow machine may take long over each handshake.)
    assert!((1..=12).contains(&n), "{n} connection attempts in 3 s");
}

#[tokio::test]
async fn an_untrusted_server_certificate_is_refused() {
    let env = env();
    let stranger = TlsConfig::builder()
        .ca_file(env.certs.other_ca())
        .client_cert_files(env.certs.client_cert(), env.certs.client_key())
        .build()
        .unwrap();
    let e = connect_failure(builder(&env.zk.secure_connect_string()).tls(stranger)).await;
    assert!(
        e.contains("TLS handshake failed") && e.contains("not signed by a trusted CA"),
        "{e}"
    );
    // Skipping the name check keeps the chain check.
    let careless = TlsConfig::builder()
        .ca_file(env.certs.other_ca())
        .client_cert_files(env.certs.client_cert(), env.certs.client_key())
        .server_name(ServerNameCheck::DangerousAnyName)
        .build()
        .unwrap();
    let e = connect_failure(builder(&env.zk.secure_connect_string()).tls(careless)).await;
    assert!(e.contains("not signed by a trusted CA"), "{e}");
}

#[tokio::test]
async fn the_server_name_is_checked_unless_told_otherwise() {
    let env = env();
    let port = port_of(&env.zk.secure_connect_string());
    let with = |check: ServerNameCheck| {
        TlsConfig::builder()
            .ca_file(env.certs.ca())
            .client_cert_files(env.certs.client_cert(), env.certs.client_key())
            .server_name(check)
            .build()
            .unwrap()
    };
    // The certificate names 127.0.0.1 and zk-server.test, not localhost.
    let localhost = format!("localhost:{port}");
    let e = connect_failure(builder(&localhost).tls(with(ServerNameCheck::ConnectHost))).await;
    assert!(e.contains("not valid for"), "{e}");
    let e = connect_failure(
        builder(&format!("127.0.0.1:{port}"))
            .tls(with(ServerNameCheck::Name("elsewhere.test".into()))),
    )
    .await;
    assert!(e.contains("not valid for"), "{e}");
    let named = builder(&localhost)
        .tls(with(ServerNameCheck::Name(SERVER_DNS_NAME.into())))
        .connect()
        .await
        .unwrap();
    named.exists("/").await.unwrap();
    let any = builder(&localhost)
        .tls(with(ServerNameCheck::DangerousAnyName))
        .connect()
        .await
        .unwrap();
    any.exists("/").await.unwrap();
}

#[tokio::test]
async fn a_plain_client_at_the_tls_port_fails_clearly_and_fast() {
    let env = env();
    let started = Instant::now();
    let e = connect_failure(builder(&env.zk.secure_connect_string())).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // A real failure, not a wait for the connect timeout.
    assert!(!e.contains("in time"), "{e}");
    assert!(
        e.contains("TLS") || e.contains("closed") || e.contains("eof"),
        "{e}"
    );
}

#[tokio::test]
async fn a_tls_client_at_the_plain_port_fails_clearly_and_fast() {
    let env = env();
    let started = Instant::now();
    let e = connect_failure(builder(&env.zk.connect_string()).tls(mutual(&env.certs))).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(e.contains("TLS handshake failed"), "{e}");
    assert!(!e.contains("in time"), "{e}");
}

fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

async fn wait_state(c: &Client, want: SessionState, within: Duration) {
    let mut rx = c.watch_state();
    let reached = tokio::time::timeout(within, async {
        while rx.get_and_update() != want {
            rx.changed().await.unwrap();
        }
    })
    .await;
    assert!(
        reached.is_ok(),
        "{want:?} not reached, still {:?}",
        c.state()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_member_and_every_reconnect_use_tls() {
    let certs = TestCerts::generate().unwrap();
    let ens = Ensemble::builder()
        .size(3)
        .tls(ServerTls::from_certs(&certs))
        .start()
        .expect("TLS ensemble");
    let c = builder(&ens.secure_connect_string())
        .session_timeout(Duration::from_secs(20))
        .tls(mutual(&certs))
        .connect()
        .await
        .unwrap();
    let sid = c.session_id();
    c.create("/e", b"0", CreateOptions::persistent())
        .await
        .unwrap();
    let retry = RetryPolicy::exponential_backoff(Duration::from_millis(100), 20)
        .with_max_sleep(Duration::from_secs(1));
    // Kill each member the client is on in turn: it must reach the next over TLS.
    for round in 0..2 {
        let value = format!("{round}").into_bytes();
        let (_, _, watch) = c.get_data_watch("/e").await.unwrap();
        let on = c.connected_server().unwrap();
        let i = (0..3)
            .find(|&i| on.ends_with(&format!(":{}", ens.server(i).secure_client_port().unwrap())))
            .expect("connected to a secure port");
        blocking(|| ens.server(i).kill9());
        wait_state(&c, SessionState::Suspended, Duration::from_secs(20)).await;
        wait_state(&c, SessionState::Connected, Duration::from_secs(20)).await;
        assert_ne!(c.connected_server().unwrap(), on);
        assert_eq!(c.session_id(), sid);
        let ids = c.who_am_i().await.unwrap();
        assert!(ids.iter().any(|i| i.auth_scheme == "x509"), "{ids:?}");
        retry
            .run(|| c.set_data("/e", &value, Version::Any))
            .await
            .unwrap();
        let ev = tokio::time::timeout(Duration::from_secs(10), watch)
            .await
            .expect("watch after reconnect")
            .unwrap();
        assert_eq!(ev.event_type(), EventType::NodeDataChanged);
        blocking(|| ens.server(i).start()).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_client_finds_a_read_write_server_by_isro_over_tls() {
    let certs = TestCerts::generate().unwrap();
    // ClientAuth::Want: no client certificate needed.
    let server_tls = ServerTls::from_certs(&certs).client_auth(ClientAuth::Want);
    // A member without its quorum serves reads only; read-only clients need local sessions.
    let ens = Ensemble::builder()
        .size(2)
        .read_only_mode(true)
        .config("localSessionsEnabled", "true")
        .config("localSessionsUpgradingEnabled", "true")
        .tls(server_tls.clone())
        .start()
        .expect("TLS ensemble");
    // The read-write server is another cluster, a quorum of one: each start is a new epoch,
    // so after one restart its zxids are ahead of the read-only member's (a server behind
    // the client's last zxid refuses it).
    let rw_cluster = Ensemble::builder()
        .size(1)
        .standalone_enabled(false)
        .tls(server_tls)
        .start()
        .expect("TLS server");
    let rw = rw_cluster.server(0);
    blocking(|| {
        rw.restart().unwrap();
        rw.stop().unwrap();
        ens.server(0).stop().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while ens.server(1).mode() != Some(Mode::ReadOnly) {
            assert!(Instant::now() < deadline, "member 1 never turned read-only");
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let tls = TlsConfig::builder().ca_file(certs.ca()).build().unwrap();
    let secure = format!(
        "{},{}",
        ens.server(1).secure_connect_string(),
        rw.secure_connect_string()
    );
    let c = Client::builder(&secure)
        .tls(tls)
        .read_only(ReadOnly::Allowed)
        .first_connection_timeout(Duration::from_secs(30))
        .connect()
        .await
        .unwrap();
    assert_eq!(c.state(), SessionState::ConnectedReadOnly);
    let e = c
        .create("/ro", b"", CreateOptions::persistent())
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NotReadOnly));
    // The read-only server stays up: only the `isro` probe, which must speak TLS to these
    // ports (plain bytes there get no answer), can find the read-write one.
    blocking(|| rw.start()).unwrap();
    wait_state(&c, SessionState::Connected, Duration::from_secs(30)).await;
    assert_eq!(c.connected_server(), Some(rw.secure_connect_string()));
    c.create("/rw", b"", CreateOptions::persistent())
        .await
        .unwrap();
}
