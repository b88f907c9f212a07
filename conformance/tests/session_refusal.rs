//! Connecting when servers refuse: with `OnRefusal::FailFast`, `connect` fails with every
//! server's refusal as soon as each has refused once; a live server among them is reached;
//! and without the option the client keeps trying until its timeout.

use std::time::Duration;

use conformance::{free_ports, shared_standalone};
use zk_session::{Client, ConnectError, Error, OnRefusal};

/// Ports on 127.0.0.1 where nothing listens: a connect is refused.
fn refused_ports(n: usize) -> Vec<String> {
    free_ports(n)
        .unwrap()
        .into_iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect()
}

#[tokio::test]
async fn fail_fast_fails_with_every_servers_refusal() {
    let servers = refused_ports(2);
    // A timeout far longer than the test: only the refusals can end this connect.
    let e = Client::builder(&servers.join(","))
        .on_refusal(OnRefusal::FailFast)
        .first_connection_timeout(Duration::from_secs(600))
        .connect()
        .await
        .unwrap_err();
    let Error::ConnectRefused { errors } = &e else {
        panic!("{e:?}")
    };
    let mut refused: Vec<_> = errors.iter().map(|e| e.server().to_owned()).collect();
    refused.sort();
    let mut expected = servers.clone();
    expected.sort();
    assert_eq!(refused, expected);
    assert!(errors.iter().all(|e| matches!(
        e,
        ConnectError::Io {
            kind: std::io::ErrorKind::ConnectionRefused,
            ..
        }
    )));
    for s in &servers {
        assert!(e.to_string().contains(s.as_str()), "{e}");
    }
}

#[tokio::test]
async fn fail_fast_still_reaches_a_live_server_among_refusing_ones() {
    let mut servers = refused_ports(2);
    servers.insert(1, shared_standalone().connect_string());
    let client = Client::builder(&servers.join(","))
        .on_refusal(OnRefusal::FailFast)
        .connect()
        .await
        .expect("the live server");
    assert!(client.exists("/").await.unwrap().is_some());
    client.close().await.unwrap();
}

#[tokio::test]
async fn by_default_refusals_are_retried_until_the_timeout() {
    let servers = refused_ports(2);
    let e = Client::builder(&servers.join(","))
        .first_connection_timeout(Duration::from_millis(700))
        .connect()
        .await
        .unwrap_err();
    assert!(
        matches!(
            &e,
            Error::ConnectTimeout {
                last_error: Some(ConnectError::Io { .. }),
                ..
            }
        ),
        "{e:?}"
    );
}
