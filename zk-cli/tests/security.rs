//! `zk` over TLS and with SASL, against real servers the harness configures: a secure client
//! port with client certificates required (`ServerTls`), and a JAAS file (`SaslServer`).
//! Built without the features, the options must say so.

#![cfg_attr(
    not(all(feature = "tls", feature = "sasl")),
    allow(dead_code, unused_imports)
)]

mod support;

use std::{
    path::PathBuf,
    sync::OnceLock,
    time::{Duration, Instant},
};

use support::{assert_code, command_at, finish, stderr, stdout, unique};
use zk_testkit::{
    certs::{CLIENT_SUBJECT, SERVER_DNS_NAME},
    shared_tls_standalone, SaslServer, Standalone, TlsStandalone,
};

/// A TLS server (clientAuth=need) and the certificates it was made with.
fn tls_env() -> &'static TlsStandalone {
    shared_tls_standalone()
}

fn sasl_server() -> &'static Standalone {
    static SERVER: OnceLock<Standalone> = OnceLock::new();
    SERVER.get_or_init(|| {
        Standalone::builder()
            .sasl(SaslServer::digest_md5().user("bob", "bobsecret"))
            .start()
            .expect("SASL server")
    })
}

fn path_arg(p: PathBuf) -> String {
    p.to_str().expect("a UTF-8 temp path").to_owned()
}

/// `--tls-ca CA --tls-cert PEM --tls-key PEM`, with ZooKeeper's combined client PEM.
fn mutual(env: &TlsStandalone) -> Vec<String> {
    let pem = path_arg(env.certs.client_pem());
    vec![
        "--tls-ca".into(),
        path_arg(env.certs.ca()),
        "--tls-cert".into(),
        pem.clone(),
        "--tls-key".into(),
        pem,
    ]
}

async fn zk_at(server: &str, args: &[String]) -> std::process::Output {
    finish(command_at(server, args), None).await
}

fn args(head: &[String], tail: &[&str]) -> Vec<String> {
    head.iter()
        .cloned()
        .chain(tail.iter().map(|s| s.to_string()))
        .collect()
}

#[cfg(feature = "tls")]
#[tokio::test]
async fn get_ls_and_whoami_over_mutual_tls() {
    let env = tls_env();
    let server = env.zk.secure_connect_string();
    let tls = mutual(env);
    let node = unique("tls");
    let o = zk_at(&server, &args(&tls, &["create", &node, "over tls"])).await;
    assert_code(&o, 0);
    let o = zk_at(&server, &args(&tls, &["get", &node])).await;
    assert_code(&o, 0);
    assert_eq!(o.stdout, b"over tls");
    let o = zk_at(&server, &args(&tls, &["ls", "/"])).await;
    assert_code(&o, 0);
    assert!(
        stdout(&o).lines().any(|l| l == &node[1..]),
        "{}",
        stdout(&o)
    );
    let o = zk_at(&server, &args(&tls, &["whoami"])).await;
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains(&format!("x509: {CLIENT_SUBJECT}")),
        "{}",
        stdout(&o)
    );
    let o = zk_at(&server, &args(&tls, &["delete", &node])).await;
    assert_code(&o, 0);
}

#[cfg(feature = "tls")]
#[tokio::test]
async fn the_server_name_is_checked_unless_told_otherwise() {
    let env = tls_env();
    // The certificate names zk-server.test and 127.0.0.1, not localhost.
    let port = env.zk.server().secure_client_port().unwrap();
    let by_name = format!("localhost:{port}");
    let quick = ["--connect-timeout", "2", "stat", "/"];
    let o = zk_at(&by_name, &args(&mutual(env), &quick)).await;
    assert_code(&o, 3);
    assert!(
        stderr(&o).contains("TLS handshake failed"),
        "{}",
        stderr(&o)
    );
    let named = args(&mutual(env), &["--tls-server-name", SERVER_DNS_NAME]);
    assert_code(&zk_at(&by_name, &args(&named, &quick)).await, 0);
    let any = args(&mutual(env), &["--tls-insecure-skip-name-check"]);
    assert_code(&zk_at(&by_name, &args(&any, &quick)).await, 0);
}

#[cfg(feature = "tls")]
#[tokio::test]
async fn no_client_certificate_exits_3_within_the_connect_timeout() {
    let env = tls_env();
    let server = env.zk.secure_connect_string();
    let ca_only = vec!["--tls-ca".to_string(), path_arg(env.certs.ca())];
    let started = Instant::now();
    let o = zk_at(
        &server,
        &args(&ca_only, &["--connect-timeout", "3", "ls", "/"]),
    )
    .await;
    let took = started.elapsed();
    assert_code(&o, 3);
    let err = stderr(&o);
    assert!(err.contains("TLS handshake failed"), "{err}");
    assert!(err.contains(&server), "names the server: {err}");
    // The timeout, plus room for starting the process on a busy machine.
    assert!(took < Duration::from_secs(3 + 5), "{took:?}");
}

#[cfg(feature = "tls")]
#[tokio::test]
async fn bad_tls_options_are_usage_errors() {
    // No server is needed: the options are checked before connecting.
    let nowhere = "127.0.0.1:9";
    let o = zk_at(
        nowhere,
        &args(&[], &["--tls-ca", "/no/such/ca.pem", "ls", "/"]),
    )
    .await;
    assert_code(&o, 2);
    assert!(stderr(&o).contains("/no/such/ca.pem"), "{}", stderr(&o));
    let ca = path_arg(tls_env().certs.ca());
    let o = zk_at(nowhere, &args(&[], &["--tls-cert", &ca, "ls", "/"])).await;
    assert_code(&o, 2);
    assert!(stderr(&o).contains("--tls-key"), "{}", stderr(&o));
    // A certificate is no private key.
    let o = zk_at(
        nowhere,
        &args(
            &[],
            &[
                "--tls-ca",
                &ca,
                "--tls-cert",
                &ca,
                "--tls-key",
                &ca,
                "ls",
                "/",
            ],
        ),
    )
    .await;
    assert_code(&o, 2);
    assert!(stderr(&o).contains("TLS options"), "{}", stderr(&o));
    let o = zk_at(nowhere, &args(&[], &["--sasl-user", "bob", "ls", "/"])).await;
    assert_code(&o, 2);
    assert!(stderr(&o).contains("ZK_SASL_PASSWORD"), "{}", stderr(&o));
}

#[cfg(feature = "sasl")]
#[tokio::test]
async fn whoami_over_sasl_from_the_environment_or_a_file() {
    let server = sasl_server().connect_string();
    let mut c = command_at(&server, ["--sasl-user", "bob", "whoami"]);
    c.env("ZK_SASL_PASSWORD", "bobsecret");
    let o = finish(c, None).await;
    assert_code(&o, 0);
    assert!(
        stdout(&o).lines().any(|l| l == "sasl: bob"),
        "{}",
        stdout(&o)
    );

    let file = std::env::temp_dir().join(format!("zk-cli-sasl-{}", std::process::id()));
    std::fs::write(&file, "bobsecret\n").unwrap();
    let mut c = command_at(
        &server,
        [
            "--sasl-user",
            "bob",
            "--sasl-password-file",
            &path_arg(file.clone()),
            "--json",
            "whoami",
        ],
    );
    // The file wins over the environment.
    c.env("ZK_SASL_PASSWORD", "wrong");
    let o = finish(c, None).await;
    std::fs::remove_file(&file).unwrap();
    assert_code(&o, 0);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids = doc["identities"].as_array().unwrap();
    assert!(
        ids.iter()
            .any(|i| i["scheme"] == "sasl" && i["user"] == "bob"),
        "{doc}"
    );
}

#[cfg(feature = "sasl")]
#[tokio::test]
async fn a_wrong_sasl_password_exits_3_with_auth_failed() {
    let server = sasl_server().connect_string();
    let mut c = command_at(&server, ["--sasl-user", "bob", "ls", "/"]);
    c.env("ZK_SASL_PASSWORD", "wrong");
    let o = finish(c, None).await;
    // AuthFailed, not a connect timeout: refused at once, not retried.
    assert_code(&o, 3);
    let err = stderr(&o);
    assert!(
        err.contains("SASL authentication as \"bob\" failed (AuthFailed)"),
        "{err}"
    );
    assert!(
        err.contains("the server refused"),
        "the server's answer: {err}"
    );
    assert!(!err.contains("wrong"), "the password is never shown: {err}");
}

/// `--no-default-features`: the options exist, and using one is a clear usage error.
#[cfg(not(all(feature = "tls", feature = "sasl")))]
#[tokio::test]
async fn without_the_features_the_options_say_so() {
    let nowhere = "127.0.0.1:9";
    #[cfg(not(feature = "tls"))]
    {
        let o = zk_at(nowhere, &args(&[], &["--tls-ca", "ca.pem", "ls", "/"])).await;
        assert_code(&o, 2);
        assert!(stderr(&o).contains("built without TLS"), "{}", stderr(&o));
    }
    #[cfg(not(feature = "sasl"))]
    {
        let mut c = command_at(nowhere, ["--sasl-user", "bob", "ls", "/"]);
        c.env("ZK_SASL_PASSWORD", "x");
        let o = finish(c, None).await;
        assert_code(&o, 2);
        assert!(stderr(&o).contains("built without SASL"), "{}", stderr(&o));
    }
}
