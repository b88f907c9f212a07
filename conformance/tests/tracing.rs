//! The `tracing` feature against a real server: a session's story (attempts, connections,
//! state changes, expiry and the new session, digest and SASL auth, failed requests with
//! their znode path, failed attempts) appears in the events, each inside the `connection`
//! span of its attempt and the `session` span of its session, and no secret (password, auth
//! data, session password, znode data, ACL id) appears in any field of any event or span.
//!
//! The events are caught by a small subscriber of our own (tracing_support), installed once
//! for the binary, which also keeps every span and which spans each thread is in; the tests
//! run side by side, so each looks for its own session's events and checks every event
//! caught so far for every secret.

mod recipes_support;
mod tracing_support;

use conformance::ephemeral_owner;
use std::time::Duration;

use bytes::Bytes;
use conformance::{SaslServer, Standalone};
use recipes_support::{expire_session, soon, until_state, Proxy};
use tracing::Level;
use tracing_support::{assert_in_spans, assert_no_secret, expect, find, install};
use zk_session::{
    Acl, Client, CreateOptions, Error, ErrorCode, Id, Perms, SaslConfig, SessionEvent,
    SessionState, Version,
};

const ALICE_PASSWORD: &str = "alice-digest-pw-7Qx";
const BOB_PASSWORD: &str = "bob-sasl-pw-9Kz";
const WRONG_PASSWORD: &str = "wrong-sasl-pw-3Jd";
const DATA: &str = "payload-never-logged-5Vt";
/// The id of a digest ACL entry (`user:base64(sha1(user:password))` in real life).
const ACL_ID: &str = "carol:acl-digest-never-logged-8Rw=";

/// A session password in every form a log line could print it.
fn password_forms(password: &Bytes) -> Vec<String> {
    let hex: String = password.iter().map(|b| format!("{b:02x}")).collect();
    vec![
        format!("{password:?}"),
        format!("{:?}", &password[..]),
        hex,
        String::from_utf8_lossy(password).into_owned(),
    ]
}

fn text_secrets() -> Vec<String> {
    [ALICE_PASSWORD, BOB_PASSWORD, WRONG_PASSWORD, DATA, ACL_ID]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn sasl_server() -> &'static Standalone {
    static SERVER: std::sync::OnceLock<Standalone> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| {
        Standalone::builder()
            .sasl(SaslServer::digest_md5().user("bob", BOB_PASSWORD))
            .start()
            .expect("a SASL server")
    })
}

fn hex(session_id: i64) -> String {
    format!("{session_id:#x}")
}

/// Issue 15, observability: connect (digest auth and SASL), fail a request, lose the
/// connection and get it back, lose it again and have the session expired from a second
/// connection, get a new session; every step is in the events, with the session id in hex,
/// and no secret is in any of them.
#[tokio::test]
async fn a_session_through_expiry_is_told_in_events_without_secrets() {
    install();
    let server = sasl_server();
    let proxy = Proxy::start(server.client_addr()).await;
    let c = soon(
        "connect",
        Client::builder(&proxy.connect_string())
            .session_timeout(Duration::from_secs(4))
            .digest_auth("alice", ALICE_PASSWORD)
            .sasl(SaslConfig::digest_md5("bob", BOB_PASSWORD))
            .connect(),
    )
    .await
    .expect("connect");
    let old = ephemeral_owner(&c);
    let old_password = c.session_password();
    let path = recipes_support::unique("tracing");
    c.create(&path, DATA.as_bytes(), CreateOptions::persistent())
        .await
        .unwrap();
    let missing_path = format!("{path}/missing");
    let missing = c.get_data(&missing_path).await;
    assert!(
        matches!(missing, Err(Error::Code(ErrorCode::NoNode))),
        "{missing:?}"
    );

    // A reconnect to the same session first, then the expiry.
    proxy.partition(true);
    until_state(&c, SessionState::Suspended).await;
    proxy.partition(false);
    until_state(&c, SessionState::Connected).await;
    assert_eq!(ephemeral_owner(&c), old);
    let mut events = c.session_events();
    proxy.partition(true);
    until_state(&c, SessionState::Suspended).await;
    expire_session(&server.connect_string(), &c).await;
    proxy.partition(false);
    while !matches!(
        soon("a new session", events.next()).await,
        Some(SessionEvent::Connected { .. })
    ) {}
    let new = ephemeral_owner(&c);
    assert!(new != old && new != 0);
    let new_password = c.session_password();
    c.delete(&path, Version::Any).await.unwrap();
    c.close().await.unwrap();

    let server_addr = proxy.connect_string();
    let (old_hex, new_hex) = (hex(old), hex(new));
    expect(Level::DEBUG, "connecting", &[("server", &server_addr)]);
    let first = expect(Level::INFO, "connected", &[("session_id", &old_hex)]);
    assert_eq!(first.field("new_session"), Some("true"), "{first:?}");
    assert_eq!(
        first.field("server"),
        Some(server_addr.as_str()),
        "{first:?}"
    );
    expect(
        Level::INFO,
        "SASL authenticated",
        &[("session_id", &old_hex), ("mechanism", "DIGEST-MD5")],
    );
    // Digest credentials go out on the first connection and again on the new session.
    let accepted = find("auth accepted", &[("scheme", "digest")]);
    assert!(accepted.len() >= 2, "{accepted:?}");
    assert!(
        accepted.iter().all(|e| e.level == Level::INFO),
        "{accepted:?}"
    );
    let failed = expect(
        Level::DEBUG,
        "request failed",
        &[
            ("op", "GetData"),
            ("err", "NoNode"),
            ("path", &missing_path),
        ],
    );
    assert!(failed
        .field("xid")
        .is_some_and(|x| x.parse::<i32>().is_ok_and(|x| x > 0)));
    assert_in_spans(&failed, &server_addr, &old_hex, &server_addr);

    // Connecting, the handshake (SASL) and the digest auth of the first connection all
    // happen inside its connection span, in the first session's span.
    let connecting = expect(Level::DEBUG, "connecting", &[("server", &server_addr)]);
    let (first_conn, old_session) =
        assert_in_spans(&connecting, &server_addr, &old_hex, &server_addr);
    let sasl = expect(
        Level::INFO,
        "SASL authenticated",
        &[("session_id", &old_hex)],
    );
    let (sasl_conn, _) = assert_in_spans(&sasl, &server_addr, &old_hex, &server_addr);
    assert_eq!(sasl_conn.field("attempt"), first_conn.field("attempt"));
    assert_in_spans(&first, &server_addr, &old_hex, &server_addr);
    assert_in_spans(&accepted[0], &server_addr, &old_hex, &server_addr);
    // The new session after the expiry has a span of its own, with its own id.
    let renewed = expect(
        Level::INFO,
        "connected",
        &[("session_id", &new_hex), ("new_session", "true")],
    );
    let (_, new_session) = assert_in_spans(&renewed, &server_addr, &new_hex, &server_addr);
    assert_ne!(old_session.fields, new_session.fields);
    for state in ["Connected", "Suspended", "Expired"] {
        expect(
            Level::INFO,
            "session state changed",
            &[("session_id", &old_hex), ("state", state)],
        );
    }
    expect(
        Level::DEBUG,
        "connection ended",
        &[("session_id", &old_hex), ("reconnect", "true")],
    );
    expect(
        Level::INFO,
        "session state changed",
        &[("session_id", &old_hex), ("event", "Reconnected")],
    );
    expect(
        Level::INFO,
        "connected",
        &[("session_id", &old_hex), ("new_session", "false")],
    );
    expect(
        Level::INFO,
        "session expired: creating a new session on the same handle",
        &[("session_id", &old_hex)],
    );
    expect(
        Level::INFO,
        "connected",
        &[
            ("session_id", &new_hex),
            ("after_expiry", "true"),
            ("new_session", "true"),
        ],
    );
    // The event of a new session is logged by its name, with the new id beside it.
    expect(
        Level::INFO,
        "session state changed",
        &[
            ("session_id", &new_hex),
            ("state", "Connected"),
            ("event", "Connected"),
        ],
    );
    expect(
        Level::INFO,
        "SASL authenticated",
        &[("session_id", &new_hex)],
    );
    expect(
        Level::INFO,
        "session state changed",
        &[("session_id", &new_hex), ("state", "Ended(Closed)")],
    );

    let mut secrets = text_secrets();
    secrets.extend(password_forms(&old_password));
    secrets.extend(password_forms(&new_password));
    assert_no_secret(&secrets);
}

/// A wrong SASL password is a warning that names the server, not the password.
#[tokio::test]
async fn a_refused_sasl_password_is_a_warning_without_the_password() {
    install();
    let server = sasl_server();
    let r = soon(
        "a refused connect",
        Client::builder(&server.connect_string())
            .session_timeout(Duration::from_secs(10))
            .sasl(SaslConfig::digest_md5("bob", WRONG_PASSWORD))
            .connect(),
    )
    .await;
    assert!(r.is_err(), "the connect must fail");
    let refused = expect(
        Level::WARN,
        "authentication failed: the session ends",
        &[("server", &server.connect_string())],
    );
    assert!(
        refused.field("reason").is_some_and(|r| !r.is_empty()),
        "{refused:?}"
    );
    assert_no_secret(&text_secrets());
}

/// Attempts on a port nobody listens on: each failure is a debug event with the reason, and
/// a pass over every server that all failed is a warning.
#[tokio::test]
async fn failed_connection_attempts_are_told_with_their_reason() {
    install();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap().to_string();
    drop(closed);
    let r = soon(
        "a failed connect",
        Client::builder(&addr)
            .session_timeout(Duration::from_secs(2))
            .reconnect_backoff(Duration::from_millis(10), Duration::from_millis(50))
            .connect(),
    )
    .await;
    assert!(r.is_err(), "nobody listens on {addr}");
    let failed = expect(Level::DEBUG, "connect failed", &[("server", &addr)]);
    assert!(
        failed.field("reason").is_some_and(|r| !r.is_empty()),
        "{failed:?}"
    );
    let every = expect(
        Level::WARN,
        "connect failed on every server",
        &[("last_server", &addr), ("servers", "1")],
    );
    assert!(every.field("reason").is_some(), "{every:?}");
    assert_no_secret(&text_secrets());
}

/// A failed request names its znode as the caller gave it (under the chroot, without it),
/// with its op and error, inside the connection's span; never its data or its ACL.
#[tokio::test]
async fn a_failed_request_names_its_path_under_the_chroot_but_not_its_data_or_acl() {
    install();
    let server = sasl_server();
    let chroot = recipes_support::unique("tracing-chroot");
    let connect_string = format!("{}{chroot}", server.connect_string());
    // Built inside a caller's span, which the session must not stay inside (nor keep open).
    let caller = tracing::info_span!("caller");
    let c = soon(
        "connect",
        tracing::Instrument::instrument(Client::builder(&connect_string).connect(), caller),
    )
    .await
    .expect("connect");
    let session_id = hex(ephemeral_owner(&c));
    // Nothing exists under the chroot: every one of these fails with NoNode.
    let leaf = recipes_support::unique("missing");
    let got = c.get_data(&leaf).await;
    assert!(
        matches!(got, Err(Error::Code(ErrorCode::NoNode))),
        "{got:?}"
    );
    let set = c.set_data(&leaf, DATA.as_bytes(), Version::Any).await;
    assert!(
        matches!(set, Err(Error::Code(ErrorCode::NoNode))),
        "{set:?}"
    );
    let child = format!("{leaf}/child");
    let acl = vec![Acl::new(Perms::ALL, Id::new("digest", ACL_ID))];
    let created = c
        .create(
            &child,
            DATA.as_bytes(),
            CreateOptions::persistent().with_acl(acl),
        )
        .await;
    assert!(
        matches!(created, Err(Error::Code(ErrorCode::NoNode))),
        "{created:?}"
    );
    c.close().await.unwrap();

    let addr = server.connect_string();
    for (op, path) in [("GetData", &leaf), ("SetData", &leaf), ("Create", &child)] {
        let failed = expect(
            Level::DEBUG,
            "request failed",
            &[("op", op), ("path", path), ("err", "NoNode")],
        );
        let (_, session) = assert_in_spans(&failed, &addr, &session_id, &connect_string);
        assert_eq!(
            session.parent, None,
            "the session span is a root: {session:?}"
        );
    }
    // The server's path (chroot included) is nowhere: the caller never wrote it.
    let server_path = format!("{chroot}{leaf}");
    assert_no_secret(&[server_path]);
    assert_no_secret(&text_secrets());
}
