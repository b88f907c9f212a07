//! ACLs and credentials (digest auth) of zk-session against a real standalone server,
//! across reconnects.

mod ops_support;

use std::time::Duration;

use conformance::shared_standalone;
use ops_support::{base, client, proxied_client, reconnect_through, wait_for_state, within_secs};
use zk_session::{Acl, Client, CreateOptions, Error, ErrorCode, Id, Perms, SessionState, Version};

#[tokio::test]
async fn acls_and_digest_auth() {
    let c = client().await;
    let b = base(&c, "acl").await;
    let alice = Client::builder(&shared_standalone().connect_string())
        .digest_auth("alice", "secret")
        .connect()
        .await
        .unwrap();
    let who = alice.who_am_i().await.unwrap();
    assert!(
        who.iter()
            .any(|i| i.auth_scheme == "digest" && i.user == "alice"),
        "{who:?}"
    );
    let p = format!("{b}/private");
    alice
        .create(
            &p,
            b"s3cr3t",
            &CreateOptions::persistent().with_acl(Acl::creator_all()),
        )
        .await
        .unwrap();
    let (acl, _) = alice.get_acl(&p).await.unwrap();
    assert_eq!(acl.len(), 1);
    assert_eq!(acl[0].id.scheme, "digest");
    assert_eq!(acl[0].perms, Perms::ALL);
    // getACL needs READ or ADMIN since 3.5, like any read.
    assert_eq!(
        c.get_acl(&p).await.unwrap_err().code(),
        Some(ErrorCode::NoAuth)
    );
    // Not authenticated: NoAuth.
    assert_eq!(
        c.get_data(&p).await.unwrap_err().code(),
        Some(ErrorCode::NoAuth)
    );
    // After add_auth with the same identity the read works.
    c.add_auth("digest", b"alice:secret").await.unwrap();
    assert_eq!(&c.get_data(&p).await.unwrap().0[..], b"s3cr3t");
    // set_acl with version check.
    let open = vec![Acl {
        perms: Perms::READ,
        id: Id::anyone(),
    }];
    assert_eq!(
        alice
            .set_acl(&p, &open, Version::Exact(5))
            .await
            .unwrap_err()
            .code(),
        Some(ErrorCode::BadVersion)
    );
    let stat = alice.set_acl(&p, &open, Version::Exact(0)).await.unwrap();
    assert_eq!(stat.aversion, 1);
    let anon = client().await;
    assert_eq!(&anon.get_data(&p).await.unwrap().0[..], b"s3cr3t");
    assert_eq!(
        anon.set_data(&p, b"x", Version::Any)
            .await
            .unwrap_err()
            .code(),
        Some(ErrorCode::NoAuth)
    );
    // A bad digest is not an auth failure (digest accepts any identity), but an unknown
    // scheme is: the server answers AuthFailed and closes the session.
    let bad = client().await;
    let e = bad.add_auth("nosuchscheme", b"x").await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::AuthFailed));
    assert_eq!(
        bad.state(),
        SessionState::Ended(zk_session::EndReason::AuthFailed)
    );
    assert_eq!(
        bad.get_data("/").await.unwrap_err().code(),
        Some(ErrorCode::AuthFailed)
    );
}

/// Credentials added while disconnected that cannot fit a frame fail with InvalidArgument
/// at the reconnect (they were answered "closed" and re-tried on every reconnect), and the
/// session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_credentials_added_while_disconnected_are_refused() {
    let (proxy, c) = proxied_client(20, |b| b.max_frame_len(4096)).await;
    proxy.partition(true);
    within_secs(10, wait_for_state(&c, SessionState::Suspended)).await;
    let huge = format!("user:{}", "p".repeat(8192));
    let adding = tokio::spawn({
        let c = c.clone();
        async move { c.add_auth("digest", huge.as_bytes()).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    proxy.partition(false);
    let e = within_secs(20, adding).await.unwrap().unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    within_secs(20, wait_for_state(&c, SessionState::Connected)).await;
    c.exists("/").await.expect("the session goes on");
}

/// Credentials added several times are kept once: a reconnect re-sends them once, and they
/// still hold afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_credentials_are_resent_once_on_reconnect() {
    const OP_AUTH: i32 = 100;
    let (proxy, c) = proxied_client(20, |b| b).await;
    for _ in 0..3 {
        c.add_auth("digest", b"repeat:secret").await.unwrap();
    }
    assert_eq!(proxy.count(OP_AUTH), 3);
    let b = base(&c, "reauth").await;
    let mine = format!("{b}/mine");
    c.create(
        &mine,
        b"",
        &CreateOptions::persistent().with_acl(Acl::creator_all()),
    )
    .await
    .unwrap();

    reconnect_through(&proxy, &c).await;
    c.get_data(&mine)
        .await
        .expect("the credentials hold after the reconnect");
    assert_eq!(proxy.count(OP_AUTH), 4, "{:?}", proxy.counts());
}
