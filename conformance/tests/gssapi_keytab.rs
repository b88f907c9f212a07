//! A keytab login beside an ordinary `FILE:` default ticket cache that holds someone else's
//! ticket (an operator who ran `kinit` as themselves and runs a service with its keytab):
//! the login uses a cache of its own, in memory, and leaves the user's cache as it was. A
//! process of its own (this test binary), since the default cache is the process's
//! environment; on a current-thread runtime, since the Kerberos calls run off it.

mod recipes_support;

use std::{path::Path, time::Duration};

use conformance::{Kdc, KerberosServer, ServerOptions, Standalone};
use recipes_support::{sasl_ids, soon};
use zk_session::{Client, ConfigError, Error, GssapiConfig, SaslConfig};

#[tokio::test(flavor = "current_thread")]
async fn a_keytab_login_uses_its_own_cache_and_leaves_the_users_alone() {
    let kdc = Kdc::start().expect("a Kerberos KDC");
    // The user's default cache: a plain file, holding carol's ticket.
    let users_cache = kdc.dir().join("carol.ccache");
    let users_cache_name = format!("FILE:{}", users_cache.display());
    std::env::set_var("KRB5_CONFIG", kdc.krb5_conf());
    std::env::set_var("KRB5CCNAME", &users_cache_name);
    let carol = kdc.principal_with_keytab("carol").unwrap();
    kdc.kinit_into(
        &users_cache_name,
        "carol",
        &carol,
        Duration::from_secs(3600),
    )
    .unwrap();
    let before = std::fs::read(&users_cache).unwrap();
    let dave = kdc.principal_with_keytab("dave").unwrap();

    let login = KerberosServer::create(&kdc, &["zookeeper/localhost"]).unwrap();
    let server = Standalone::builder()
        .options(login.apply(ServerOptions::default()))
        .start()
        .expect("a Kerberos server");
    let gssapi = GssapiConfig::new()
        .principal(Kdc::principal("dave"))
        .keytab(&dave);
    let client = soon(
        "connect",
        Client::builder(&server.connect_string())
            .sasl(SaslConfig::gssapi(gssapi))
            .connect(),
    )
    .await
    .expect("dave logs in from his keytab");
    assert_eq!(sasl_ids(&client).await, [Kdc::principal("dave")]);
    client.close().await.unwrap();

    // Carol's cache is untouched: no ticket of dave's written into it.
    assert_eq!(std::fs::read(&users_cache).unwrap(), before);
    assert!(!klist(&kdc, &users_cache_name).contains("dave"));
}

#[tokio::test(flavor = "current_thread")]
async fn a_keytab_that_does_not_exist_is_a_config_error_naming_it() {
    let missing = Path::new("/nonexistent/zk-session-test/alice.keytab");
    let gssapi = GssapiConfig::new()
        .principal("alice@ZK.TEST")
        .keytab(missing);
    let e = Client::builder("127.0.0.1:1")
        .sasl(SaslConfig::gssapi(gssapi))
        .build()
        .unwrap_err();
    match &e {
        Error::Config(ConfigError::ReadFile { path, .. }) => assert_eq!(path, missing),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("alice.keytab"), "{e}");
}

/// The principals whose tickets `ccache` holds, as `klist` lists them.
fn klist(kdc: &Kdc, ccache: &str) -> String {
    let out = std::process::Command::new("klist")
        .arg("-c")
        .arg(ccache)
        .env("KRB5_CONFIG", kdc.krb5_conf())
        .output()
        .expect("klist");
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(listed.contains("carol"), "{listed}");
    listed
}
