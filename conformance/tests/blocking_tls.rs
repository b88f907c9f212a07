//! The blocking client over TLS (rustls on the std socket) against a real ZooKeeper 3.8
//! server with a secure client port and client certificates required.

use std::time::Duration;

use conformance::{shared_tls_standalone, TlsStandalone};
use zk_session::{
    blocking::Client, ClientBuilder, CreateOptions, Error, EventType, TlsConfig, TlsFailure,
    Version,
};

/// One server per test binary: TLS beside plain TCP, client certificates required.
fn env() -> &'static TlsStandalone {
    shared_tls_standalone()
}

/// A client of `connect_string` over `tls` that gives up connecting after 4 s.
fn builder(connect_string: &str, tls: TlsConfig) -> ClientBuilder {
    let attempt = Duration::from_secs(2);
    Client::builder(connect_string)
        .tls(tls)
        .connect_attempt_timeout(attempt)
        .first_connection_timeout(attempt * 2)
}

fn mutual() -> TlsConfig {
    let certs = &env().certs;
    TlsConfig::builder()
        .ca_file(certs.ca())
        .client_cert_files(certs.client_pem(), certs.client_pem())
        .build()
        .unwrap()
}

#[test]
fn operations_and_watches_over_mutual_tls() {
    let tls = env().zk.secure_connect_string();
    let c = builder(&tls, mutual()).connect_blocking().unwrap();
    let p = format!("/blocking-tls-{}", rand::random::<u32>());
    c.create(&p, b"over tls", CreateOptions::persistent())
        .unwrap();
    let (data, _, watch) = c.get_data_watch(&p).unwrap();
    assert_eq!(&data[..], b"over tls");
    // A larger value than one TLS record, both ways.
    let big = vec![7u8; 100_000];
    c.set_data(&p, &big, Version::Any).unwrap();
    assert_eq!(
        watch.wait().unwrap().event_type(),
        EventType::NodeDataChanged
    );
    assert_eq!(c.get_data(&p).unwrap().0.len(), big.len());
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let c = c.clone();
            let p = p.clone();
            std::thread::spawn(move || {
                for _ in 0..100 {
                    assert_eq!(c.exists(&p).unwrap().unwrap().data_length, 100_000);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    c.delete(&p, Version::Any).unwrap();
}

#[test]
fn a_missing_client_certificate_is_a_typed_tls_error() {
    let certs = &env().certs;
    let tls = TlsConfig::builder().ca_file(certs.ca()).build().unwrap();
    let r = builder(&env().zk.secure_connect_string(), tls).connect_blocking();
    match r {
        Err(Error::Tls(e)) => assert_eq!(e.failure, TlsFailure::NoClientCert),
        other => panic!("expected Error::Tls, got {other:?}"),
    }
}

#[test]
fn a_server_certificate_for_another_name_is_refused() {
    let port = env().zk.secure_client_port().unwrap();
    // The certificate names 127.0.0.1 and zk-server.test, not localhost.
    let r = builder(&format!("localhost:{port}"), mutual()).connect_blocking();
    match r {
        Err(Error::Tls(e)) => assert_eq!(
            e.failure,
            TlsFailure::NameMismatch {
                name: "localhost".into()
            }
        ),
        other => panic!("expected Error::Tls, got {other:?}"),
    }
}
