//! The blocking client with SASL DIGEST-MD5 against a real server the harness configures
//! with a JAAS file: the I/O thread runs the mechanism's steps itself.

use std::time::Duration;

use conformance::{SaslServer, Standalone};
use zk_session::{
    blocking::Client, Acl, AuthFailure, ConnectError, CreateOptions, Error, ErrorCode, Id, Perms,
    SaslConfig,
};

fn connect(server: &Standalone, user: &str, password: &str) -> Result<Client, Error> {
    Client::builder(&server.connect_string())
        .session_timeout(Duration::from_secs(20))
        .sasl(SaslConfig::digest_md5(user, password))
        .connect_blocking()
}

#[test]
fn sasl_logs_in_its_user_and_a_wrong_password_fails_the_connect() {
    let server = Standalone::builder()
        .sasl(SaslServer::digest_md5().user("bob", "bobsecret"))
        .start()
        .expect("a SASL server");
    let bob = connect(&server, "bob", "bobsecret").unwrap();
    let ids: Vec<String> = bob
        .who_am_i()
        .unwrap()
        .into_iter()
        .filter(|i| i.auth_scheme == "sasl")
        .map(|i| i.user)
        .collect();
    assert_eq!(ids, ["bob"], "whoAmI shows the SASL identity");
    let only_bob = vec![Acl::new(Perms::ALL, Id::new("sasl", "bob"))];
    bob.create("/bob", b"b", CreateOptions::persistent().with_acl(only_bob))
        .unwrap();
    assert_eq!(&bob.get_data("/bob").unwrap().0[..], b"b");
    let anonymous = Client::builder(&server.connect_string())
        .connect_blocking()
        .unwrap();
    let e = anonymous.get_data("/bob").unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NoAuth));

    let e = connect(&server, "bob", "wrong").unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::AuthFailed), "{e:?}");
    assert!(
        matches!(
            e,
            Error::AuthFailed(ConnectError::AuthFailed {
                source: AuthFailure::Refused { .. },
                ..
            })
        ),
        "{e:?}"
    );
}
