//! SASL GSSAPI (Kerberos v5) against real ZooKeeper 3.8 servers that log in to a real MIT KDC
//! started by the harness (`conformance::kdc`): ticket caches and keytabs, `sasl:` ACLs,
//! typed refusals, failover between members with their own service principals.

mod recipes_support;

use std::{
    path::PathBuf,
    sync::OnceLock,
    time::{Duration, Instant},
};

use conformance::{
    connect_sweep::{fitted_plans, sweep_connect},
    shared_kdc,
    sweep::assert_swept,
    Ensemble, Kdc, KerberosServer, ServerOptions, Standalone,
};
use recipes_support::{assert_no_auth, kill_and_reconnect, sasl_ids, soon, unique_under, Proxy};
use zk_session::{
    Acl, Client, ConnectError, CreateOptions, EndReason, Error, ErrorCode, EventType, GssapiConfig,
    HostnameCanonicalization, Id, Perms, SaslConfig, SaslMechanism, SessionState, Version,
};

const SESSION: Duration = Duration::from_secs(20);

/// Client principals of the shared KDC: `alice` is `kinit`ed into the cache collection,
/// `bob` only has a keytab.
struct Realm {
    bob_keytab: PathBuf,
}

fn realm() -> &'static Realm {
    static REALM: OnceLock<Realm> = OnceLock::new();
    REALM.get_or_init(|| {
        let kdc = shared_kdc();
        let alice_keytab = kdc.principal_with_keytab("alice").unwrap();
        kdc.kinit("alice", &alice_keytab, Duration::from_secs(3600))
            .unwrap();
        let bob_keytab = kdc.principal_with_keytab("bob").unwrap();
        Realm { bob_keytab }
    })
}

/// One Kerberos standalone server, `zookeeper/localhost` (what 127.0.0.1 canonicalizes to).
fn server() -> &'static Standalone {
    static SERVER: OnceLock<Standalone> = OnceLock::new();
    SERVER.get_or_init(|| {
        let login = KerberosServer::create(shared_kdc(), &["zookeeper/localhost"]).unwrap();
        Standalone::builder()
            .options(login.apply(ServerOptions::default()))
            .start()
            .expect("a Kerberos server")
    })
}

fn alice() -> GssapiConfig {
    realm();
    GssapiConfig::new().principal(Kdc::principal("alice"))
}

fn bob() -> GssapiConfig {
    GssapiConfig::new()
        .principal(Kdc::principal("bob"))
        .keytab(&realm().bob_keytab)
}

fn builder(connect_string: &str, gssapi: GssapiConfig) -> zk_session::ClientBuilder {
    Client::builder(connect_string)
        .session_timeout(SESSION)
        .sasl(SaslConfig::gssapi(gssapi))
}

async fn connect(connect_string: &str, gssapi: GssapiConfig) -> Client {
    soon("connect", builder(connect_string, gssapi).connect())
        .await
        .expect("connect")
}

fn only(principal: &str) -> Vec<Acl> {
    vec![Acl::new(
        Perms::ALL,
        Id::new("sasl", Kdc::principal(principal)),
    )]
}

/// A refused connect through a proxy that counts connections: the error, how long it
/// took, and how many connections the client made in all (after a pause, to catch retries).
async fn refused(gssapi: GssapiConfig) -> (Error, Duration, u64) {
    let proxy = Proxy::start(server().client_addr()).await;
    let t = Instant::now();
    let r = soon(
        "a refused connect",
        builder(&proxy.connect_string(), gssapi).connect(),
    )
    .await;
    let took = t.elapsed();
    let err = r.expect_err("the connect must fail");
    tokio::time::sleep(Duration::from_secs(2)).await;
    (err, took, proxy.connections())
}

/// Why the mechanism gives up before it sends anything, as the client's session sees it
/// (the typed error does not carry the text).
fn reason(gssapi: &GssapiConfig) -> String {
    let mut exchange = match gssapi.start("127.0.0.1") {
        Ok(exchange) => exchange,
        Err(e) => return e.to_string(),
    };
    match exchange.initial_response() {
        Ok(_) => "no error".to_string(),
        Err(e) => e.to_string(),
    }
}

/// Auth failed at once, for the `expected` reason, from the one connection made, and the
/// session is over.
async fn assert_auth_failed_at_once(what: &str, gssapi: GssapiConfig, expected: &str) {
    let why = reason(&gssapi);
    println!("{what}: {why}");
    assert!(why.contains(expected), "{what}: {why}");
    let (err, took, connections) = refused(gssapi.clone()).await;
    println!("{what}: {err} after {took:?}");
    // connect() says why, in the same words.
    assert!(
        matches!(&err, Error::AuthFailed(ConnectError::AuthFailed { mechanism, .. }) if mechanism == "GSSAPI"),
        "{err:?}"
    );
    assert!(err.to_string().contains(&why), "{what}: {err}");
    // Far sooner than the session timeout a retry loop would run for, and no retry.
    assert!(took < SESSION / 2, "{took:?}");
    assert_eq!(connections, 1, "{what}: one connection, no retry loop");

    // A client built without waiting: its queued request gets the typed error too.
    let c = builder(&server().connect_string(), gssapi).build().unwrap();
    let r = soon("the queued request", c.get_data("/")).await;
    assert!(
        matches!(r, Err(Error::Code(ErrorCode::AuthFailed))),
        "{r:?}"
    );
    assert_eq!(c.state(), SessionState::Ended(EndReason::AuthFailed));
}

#[tokio::test]
async fn a_sasl_acl_admits_its_principal_and_refuses_another() {
    let cs = server().connect_string();
    // alice from the ticket cache kinit filled.
    let alice = connect(&cs, alice()).await;
    assert_eq!(sasl_ids(&alice).await, [Kdc::principal("alice")]);
    let path = unique_under("gssapi", "acl");
    alice
        .create(
            &path,
            b"alice's",
            CreateOptions::persistent().with_acl(only("alice")),
        )
        .await
        .unwrap();
    assert_eq!(&alice.get_data(&path).await.unwrap().0[..], b"alice's");
    assert_eq!(alice.get_acl(&path).await.unwrap().0, only("alice"));

    // bob from his keytab, no kinit: authenticated, and refused by alice's ACL.
    let bob = connect(&cs, bob()).await;
    assert_eq!(sasl_ids(&bob).await, [Kdc::principal("bob")]);
    let anonymous = soon("connect", Client::builder(&cs).connect())
        .await
        .unwrap();
    assert!(sasl_ids(&anonymous).await.is_empty());
    for other in [&bob, &anonymous] {
        assert_no_auth(other, &path).await;
    }
    alice.delete(&path, Version::Any).await.unwrap();
}

#[tokio::test]
async fn a_missing_ticket_is_auth_failed_at_once() {
    // A principal the KDC knows, with neither a cached ticket nor a keytab.
    shared_kdc().add_principal("nocache").unwrap();
    assert_auth_failed_at_once(
        "no ticket",
        GssapiConfig::new().principal(Kdc::principal("nocache")),
        "Can't find client principal nocache",
    )
    .await;
}

#[tokio::test]
async fn an_expired_ticket_is_auth_failed_at_once() {
    let kdc = shared_kdc();
    let keytab = kdc.principal_with_keytab("expired").unwrap();
    kdc.kinit("expired", &keytab, Duration::from_secs(1))
        .unwrap();
    // Past the ticket's end (krb5 allows no skew for its own clock).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_auth_failed_at_once(
        "expired ticket",
        GssapiConfig::new().principal(Kdc::principal("expired")),
        "Ticket expired",
    )
    .await;
}

#[tokio::test]
async fn an_unknown_server_principal_is_auth_failed_at_once() {
    assert_auth_failed_at_once(
        "unknown service",
        alice().service_name("nosuchservice"),
        "nosuchservice/localhost@ZK.TEST not found in Kerberos database",
    )
    .await;
}

#[tokio::test]
async fn a_principal_the_kdc_refuses_is_auth_failed_at_once() {
    let kdc = shared_kdc();
    let keytab = kdc.principal_with_keytab("locked").unwrap();
    kdc.disable("locked").unwrap();
    assert_auth_failed_at_once(
        "refused principal",
        GssapiConfig::new()
            .principal(Kdc::principal("locked"))
            .keytab(keytab),
        "Client's credentials have been revoked",
    )
    .await;
}

#[tokio::test]
async fn a_server_without_kerberos_gives_auth_failed_not_a_hang() {
    let cs = conformance::shared_standalone().connect_string();
    let t = Instant::now();
    let r = soon("a refused connect", builder(&cs, alice()).connect()).await;
    let err = r.expect_err("the connect must fail");
    println!("server without JAAS: {err} after {:?}", t.elapsed());
    assert!(matches!(err, Error::AuthFailed(_)), "{err:?}");
    assert_eq!(err.code(), Some(ErrorCode::AuthFailed));
    assert!(t.elapsed() < SESSION / 2);
}

fn index_of(ens: &Ensemble, server: &str) -> usize {
    (0..ens.len())
        .find(|&i| server.ends_with(&format!(":{}", ens.server(i).client_port())))
        .expect("connected to a member")
}

/// Member 0 is `zookeeper/localhost`, member 1 `zookeeper/127.0.0.1`, each named so in the
/// connect string and used as written; member 2 only makes the quorum. Each failover lands on
/// the other listed member and needs a ticket for its own principal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_survives_failovers_between_members_with_their_own_principals() {
    let hosts = ["localhost", "127.0.0.1"];
    let principals = ["zookeeper/localhost", "zookeeper/127.0.0.1"];
    let login = KerberosServer::create(shared_kdc(), &principals).unwrap();
    let ens = Ensemble::builder()
        .size(3)
        .options(login.apply(ServerOptions::default()))
        .start()
        .expect("a Kerberos ensemble");
    let cs = format!(
        "{}:{},{}:{}",
        hosts[0],
        ens.server(0).client_port(),
        hosts[1],
        ens.server(1).client_port()
    );
    let as_written = alice().canonicalization(HostnameCanonicalization::AsWritten);
    let c = connect(&cs, as_written).await;
    let sid = c.session_id();
    let path = unique_under("gssapi", "failover");
    c.create(
        &path,
        b"v1",
        CreateOptions::persistent().with_acl(only("alice")),
    )
    .await
    .unwrap();
    let (_, _, watch) = c.get_data_watch(&path).await.unwrap();
    let mut on = index_of(&ens, &c.connected_server().unwrap());
    for _ in 0..2 {
        kill_and_reconnect(&c, ens.server(on)).await;
        let now = index_of(&ens, &c.connected_server().unwrap());
        assert_eq!(now, 1 - on, "the other listed member");
        tokio::task::block_in_place(|| ens.server(on).restart()).unwrap();
        on = now;
        assert_eq!(c.session_id(), sid);
        // Only sasl:alice may read: the new connection authenticated again, to the member's
        // own principal.
        assert_eq!(sasl_ids(&c).await, [Kdc::principal("alice")]);
        assert_eq!(&c.get_data(&path).await.unwrap().0[..], b"v1");
    }
    c.set_data(&path, b"v2", Version::Any).await.unwrap();
    let event = soon("the watch", watch).await.unwrap();
    assert_eq!(event.event_type(), EventType::NodeDataChanged);
    c.delete(&path, Version::Any).await.unwrap();
}

/// The cancellation sweep of a GSSAPI connect (see connect_sweep.rs, and
/// `conformance::connect_sweep`): after each drop the server holds no session and no
/// connection of the dropped client within the settle time (5 s, the session timeout
/// being 20 s), and a new connect works. On a multi-thread runtime, where the mechanism's
/// calls into the C library run in `block_in_place` in the session task while the test's
/// task polls and drops the connect on another worker: a drop then lands while the call
/// runs, and the session task finds every handle gone once it returns. A server of its
/// own, so that the other tests' sessions do not move its lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_gssapi_connect_leaves_no_session_and_no_connection() {
    let login = KerberosServer::create(shared_kdc(), &["zookeeper/localhost"]).unwrap();
    let zk = Standalone::builder()
        .options(login.apply(ServerOptions::default()))
        .start()
        .expect("a Kerberos server");
    let cs = zk.connect_string();
    let plans = fitted_plans(|| builder(&cs, alice())).await;
    for plan in plans {
        let builder = || builder(&cs, alice());
        let report = sweep_connect(zk.client_addr(), &plan, Duration::from_secs(5), builder).await;
        assert_swept(&format!("GSSAPI connect ({:?})", plan.pause), &report, true);
    }
}
