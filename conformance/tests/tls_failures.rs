//! TLS failures against a real ZooKeeper 3.8 server: each kind comes back from `connect` as
//! a typed [`Error::Tls`] as soon as every server has failed, not after the connect timeout;
//! a transient failure still waits and retries. And a client certificate rotated on disk is
//! used by the next connection.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use conformance::{
    certs::CLIENT_SUBJECT,
    client_certs::{issue_client_cert, Issuer},
    free_port, shared_tls_standalone, TlsStandalone,
};
use tokio::{
    net::{TcpListener, TcpStream},
    task::AbortHandle,
};
use zk_session::{
    Client, ClientBuilder, Error, SessionState, TlsConfig, TlsConfigBuilder, TlsFailure,
};

fn env() -> &'static TlsStandalone {
    shared_tls_standalone()
}

/// A 4 s budget, as the issue measured: before typed failures every case below took it all.
fn builder(connect_string: &str) -> ClientBuilder {
    Client::builder(connect_string)
        .session_timeout(Duration::from_secs(10))
        .connect_attempt_timeout(Duration::from_secs(2))
        .first_connection_timeout(Duration::from_secs(4))
}

fn trusting(ca: std::path::PathBuf) -> TlsConfigBuilder {
    TlsConfig::builder().ca_file(ca)
}

/// Connects, expects a TLS failure, and prints how long it took.
async fn tls_failure(what: &str, b: ClientBuilder) -> TlsFailure {
    let started = Instant::now();
    let r = b.connect().await;
    let took = started.elapsed();
    match r {
        Err(Error::Tls(e)) => {
            eprintln!("{what}: {:.3} s: {e}", took.as_secs_f64());
            e.failure
        }
        Ok(_) => panic!("{what}: connected"),
        Err(e) => panic!("{what}: expected Error::Tls, got {e:?} after {took:?}"),
    }
}

#[tokio::test]
async fn no_client_certificate() {
    let env = env();
    let tls = trusting(env.certs.ca()).build().unwrap();
    let f = tls_failure(
        "no client certificate",
        builder(&env.zk.secure_connect_string()).tls(tls),
    )
    .await;
    assert_eq!(f, TlsFailure::NoClientCert);
}

#[tokio::test]
async fn a_client_certificate_from_a_ca_the_server_does_not_trust() {
    let env = env();
    let pem = issue_client_cert(&env.certs, "stranger", "CN=zk-stranger", Issuer::OtherCa).unwrap();
    let tls = trusting(env.certs.ca())
        .client_cert_files(&pem, &pem)
        .build()
        .unwrap();
    let f = tls_failure(
        "client certificate refused",
        builder(&env.zk.secure_connect_string()).tls(tls),
    )
    .await;
    assert!(matches!(f, TlsFailure::ClientCertRefused(_)), "{f:?}");
}

#[tokio::test]
async fn a_server_certificate_from_an_unknown_ca() {
    let env = env();
    let tls = trusting(env.certs.other_ca())
        .client_cert_files(env.certs.client_pem(), env.certs.client_pem())
        .build()
        .unwrap();
    let f = tls_failure(
        "unknown CA",
        builder(&env.zk.secure_connect_string()).tls(tls),
    )
    .await;
    assert_eq!(f, TlsFailure::UnknownCa);
}

#[tokio::test]
async fn a_server_certificate_for_another_name() {
    let env = env();
    let port = env.zk.secure_client_port().unwrap();
    let tls = trusting(env.certs.ca())
        .client_cert_files(env.certs.client_pem(), env.certs.client_pem())
        .build()
        .unwrap();
    // The certificate names 127.0.0.1 and zk-server.test, not localhost.
    let f = tls_failure(
        "name mismatch",
        builder(&format!("localhost:{port}")).tls(tls),
    )
    .await;
    assert_eq!(
        f,
        TlsFailure::NameMismatch {
            name: "localhost".into()
        }
    );
}

#[tokio::test]
async fn a_tls_client_at_a_plain_port() {
    let env = env();
    let tls = trusting(env.certs.ca())
        .client_cert_files(env.certs.client_pem(), env.certs.client_pem())
        .build()
        .unwrap();
    let f = tls_failure(
        "TLS at the plain port",
        builder(&env.zk.connect_string()).tls(tls),
    )
    .await;
    assert_eq!(f, TlsFailure::NotTlsPort);
}

#[tokio::test]
async fn a_plain_client_at_a_tls_port() {
    let env = env();
    let f = tls_failure(
        "plain at the TLS port",
        builder(&env.zk.secure_connect_string()),
    )
    .await;
    assert_eq!(f, TlsFailure::ServerExpectsTls);
}

#[tokio::test]
async fn every_server_must_fail_for_good_before_connect_gives_up() {
    let env = env();
    let tls = trusting(env.certs.ca()).build().unwrap();
    // One server refuses connections (transient), one lacks our certificate (permanent):
    // connect keeps trying for its whole budget and reports the timeout.
    let down = format!("127.0.0.1:{}", free_port().unwrap());
    let both = format!("{down},{}", env.zk.secure_connect_string());
    let started = Instant::now();
    let e = builder(&both).tls(tls).connect().await.unwrap_err();
    eprintln!(
        "one transient failure: {:.3} s: {e}",
        started.elapsed().as_secs_f64()
    );
    assert!(matches!(e, Error::ConnectTimeout { .. }), "{e:?}");
}

/// A relay to `target` whose open connections can be cut, to force a reconnect.
struct Relay {
    port: u16,
    open: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Relay {
    async fn start(target: u16) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let open = Arc::new(Mutex::new(Vec::new()));
        let handles = open.clone();
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let relay = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(("127.0.0.1", target)).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                handles.lock().unwrap().push(relay.abort_handle());
            }
        });
        Relay { port, open }
    }

    fn cut(&self) {
        for h in self.open.lock().unwrap().drain(..) {
            h.abort();
        }
    }
}

async fn x509_ids(c: &Client) -> zk_session::Result<Vec<String>> {
    Ok(c.who_am_i()
        .await?
        .into_iter()
        .filter(|i| i.auth_scheme == "x509")
        .map(|i| i.user)
        .collect())
}

#[tokio::test]
async fn a_client_certificate_rotated_on_disk_is_used_by_the_next_connection() {
    let env = env();
    let pem = issue_client_cert(&env.certs, "rotating", CLIENT_SUBJECT, Issuer::TestCa).unwrap();
    let relay = Relay::start(env.zk.secure_client_port().unwrap()).await;
    let tls = trusting(env.certs.ca())
        .client_cert_files(&pem, &pem)
        .build()
        .unwrap();
    let c = builder(&format!("127.0.0.1:{}", relay.port))
        .tls(tls)
        .connect()
        .await
        .unwrap();
    let sid = c.session_id();
    assert_eq!(x509_ids(&c).await.unwrap(), vec![CLIENT_SUBJECT.to_owned()]);
    // Rotate while connected: a new key and certificate, another subject, same file.
    issue_client_cert(
        &env.certs,
        "rotating",
        "CN=zk-client-rotated",
        Issuer::TestCa,
    )
    .unwrap();
    relay.cut();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if c.state() == SessionState::Connected {
            if let Ok(ids) = x509_ids(&c).await {
                if ids == ["CN=zk-client-rotated"] {
                    break;
                }
                panic!("reconnected with {ids:?}");
            }
        }
        assert!(Instant::now() < deadline, "no reconnect: {:?}", c.state());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(c.session_id(), sid, "the same session, on a new connection");
}
