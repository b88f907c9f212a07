//! `zk getAcl` / `setAcl` in zkCli's syntax, and `--auth` against a digest ACL: NoAuth without
//! the credentials, success with them.

mod support;

use support::{admin, assert_code, stderr, stdout, unique, zk};
use zk_session::{Acl, Id, Perms};

#[tokio::test]
async fn acls_and_auth() {
    let base = unique("acl");
    let alice = "digest:alice:secret";
    assert_code(&zk(["create", &base, "private"]).await, 0);
    assert_eq!(stdout(&zk(["getAcl", &base]).await), "world:anyone:cdrwa\n");
    // auth::cdrwa gives the authenticated identity (alice's digest) every right, as zkCli.
    assert_code(
        &zk([
            "--auth",
            alice,
            "setAcl",
            &base,
            "auth::cdrwa,world:anyone:r",
        ])
        .await,
        0,
    );
    let c = admin().await;
    let (acl, st) = c.get_acl(&base).await.unwrap();
    assert_eq!(st.aversion, 1);
    assert_eq!(acl.len(), 2);
    assert_eq!(acl[0].id.scheme, "digest");
    assert!(acl[0].id.id.starts_with("alice:"), "{acl:?}");
    assert_eq!(acl[1], Acl::new(Perms::READ, Id::anyone()));
    // Without alice's credentials the server hides the hash ("alice:x", ZOOKEEPER-1392);
    // with them, getAcl prints the full entry in the syntax setAcl takes.
    let o = zk(["getAcl", &base]).await;
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "digest:alice:x:cdrwa\nworld:anyone:r\n");
    let alice_client = zk_session::Client::builder(&support::server())
        .digest_auth("alice", "secret")
        .connect()
        .await
        .unwrap();
    let (full, _) = alice_client.get_acl(&base).await.unwrap();
    assert_ne!(full[0].id.id, "alice:x");
    let whole = format!("digest:{}:cdrwa", full[0].id.id);
    let o = zk(["--auth", alice, "getAcl", &base]).await;
    assert_eq!(stdout(&o), format!("{whole}\nworld:anyone:r\n"));
    // Everyone may read; only alice may write.
    assert_eq!(zk(["get", &base]).await.stdout, b"private");
    let o = zk(["set", &base, "x"]).await;
    assert_code(&o, 1);
    assert!(stderr(&o).contains("not authenticated"), "{}", stderr(&o));
    let o = zk(["--auth", "digest:alice:wrong", "set", &base, "x"]).await;
    assert_code(&o, 1);
    assert_code(&zk(["--auth", alice, "set", &base, "x"]).await, 0);
    // Repeatable: alice among other identities still counts.
    let o = zk([
        "--auth",
        "digest:bob:pw",
        "--auth",
        alice,
        "set",
        &base,
        "y",
    ])
    .await;
    assert_code(&o, 0);
    // A wrong ACL version, and a malformed ACL (a usage error, nothing sent).
    let o = zk(["--auth", alice, "setAcl", "-v", "0", &base, &whole]).await;
    assert_code(&o, 1);
    assert!(stderr(&o).contains("bad version"), "{}", stderr(&o));
    assert_code(&zk(["setAcl", &base, "world:anyone"]).await, 2);
    assert_code(&zk(["setAcl", &base, "world:anyone:rx"]).await, 2);
    assert_code(&zk(["--auth", "nocolon", "ls", "/"]).await, 2);
    // Open it again with -v at the right version, by alice's full digest id.
    assert_code(
        &zk([
            "--auth",
            alice,
            "setAcl",
            "-v",
            "1",
            &base,
            "world:anyone:cdrwa",
        ])
        .await,
        0,
    );
    assert_code(&zk(["set", &base, "z"]).await, 0);
    // create with an ACL argument: read-only for everyone, so nobody can write.
    let ro = format!("{base}-ro");
    assert_code(&zk(["create", &ro, "d", "world:anyone:r"]).await, 0);
    assert_code(&zk(["set", &ro, "x"]).await, 1);
    assert_code(&zk(["delete", &ro]).await, 0);
    assert_code(&zk(["delete", &base]).await, 0);
}
