//! `zk cp` and `zk diff` against real servers: a tree with binary data, digest and world
//! ACLs, ephemeral, sequential, TTL and container znodes copied to another ensemble and
//! compared; a backup restored into an empty ensemble; a copy interrupted and re-run; diff
//! finding a changed byte, a changed ACL, a missing znode; a destination that refuses.

mod support;

use std::time::Duration;

use support::{assert_code, command_at, finish, json, server, stderr, stdout, unique};
use zk_session::{Acl, Client, CreateOptions, Id, Perms, Version};
use zk_testkit::Standalone;

const ALICE: &str = "digest:alice:secret";

async fn zk_at(server: &str, args: &[&str]) -> std::process::Output {
    finish(command_at(server, args), None).await
}

/// A second ensemble (TTL znodes enabled, as on the shared one), that removes empty
/// containers and expired TTL znodes within a tenth of a second rather than a minute.
fn other_ensemble() -> Standalone {
    Standalone::builder()
        .extended_types(true)
        .system_property("znode.container.checkIntervalMs", "100")
        .start()
        .unwrap()
}

async fn alice(server: &str) -> Client {
    Client::builder(server)
        .digest_auth("alice", "secret")
        .connect()
        .await
        .unwrap()
}

/// Every kind of znode under `base`; the session returned owns the ephemeral one.
async fn build_tree(base: &str) -> Client {
    let c = alice(&server()).await;
    let p = |rel: &str| format!("{base}{rel}");
    c.create(base, b"root", CreateOptions::persistent())
        .await
        .unwrap();
    let binary: Vec<u8> = (0..=255u8).rev().cycle().take(3000).collect();
    c.create(&p("/bin"), &binary, CreateOptions::persistent())
        .await
        .unwrap();
    let private = vec![
        Acl::new(Perms::ALL, Id::auth()),
        Acl::new(Perms::READ, Id::anyone()),
    ];
    let opts = CreateOptions::persistent().with_acl(private);
    c.create(&p("/private"), b"alice's", opts).await.unwrap();
    c.create(&p("/private/inner"), b"\x00", CreateOptions::persistent())
        .await
        .unwrap();
    c.create(&p("/eph"), b"gone", CreateOptions::ephemeral())
        .await
        .unwrap();
    c.create(&p("/seq"), b"", CreateOptions::persistent())
        .await
        .unwrap();
    for _ in 0..3 {
        let opts = CreateOptions::persistent_sequential();
        c.create(&p("/seq/job-"), b"j", opts).await.unwrap();
    }
    let ttl = CreateOptions::ttl(Duration::from_secs(3600));
    c.create(&p("/ttl"), b"t", ttl).await.unwrap();
    c.create(&p("/box"), b"", CreateOptions::container())
        .await
        .unwrap();
    c.create(&p("/box/item"), b"i", CreateOptions::persistent())
        .await
        .unwrap();
    c
}

#[tokio::test]
async fn copy_between_ensembles_keeps_data_acls_and_kinds_then_diff() {
    let base = unique("cp-src");
    let owner = build_tree(&base).await;
    let other = other_ensemble();
    let dst_server = other.connect_string();
    let src = format!("zk://{}{base}", server());
    let dst = format!("zk://{dst_server}/copied");
    let o = zk_at(&server(), &["--auth", ALICE, "cp", &src, &dst]).await;
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("copied 11 znodes") && stdout(&o).contains("1 ephemeral skipped"),
        "{}",
        stdout(&o)
    );
    let o = zk_at(&server(), &["--auth", ALICE, "diff", &src, &dst]).await;
    assert_code(&o, 0);
    assert!(stdout(&o).starts_with("equal: "), "{}", stdout(&o));

    // What the copy holds, read directly.
    let d = alice(&dst_server).await;
    let (data, _) = d.get_data("/copied/bin").await.unwrap();
    assert_eq!(
        data,
        owner.get_data(&format!("{base}/bin")).await.unwrap().0
    );
    assert_eq!(d.exists("/copied/eph").await.unwrap(), None);
    let mut jobs = d.get_children("/copied/seq").await.unwrap();
    jobs.sort();
    assert_eq!(jobs, ["job-0000000000", "job-0000000001", "job-0000000002"]);
    let (acl, _) = d.get_acl("/copied/private").await.unwrap();
    assert_eq!(
        acl,
        owner.get_acl(&format!("{base}/private")).await.unwrap().0
    );
    assert_eq!(acl[0].id.scheme, "digest");
    // The TTL and container znodes are there, with their data. (ZooKeeper 3.5.4 and later
    // report ephemeralOwner 0 for both, so no client can tell their kind from a live tree:
    // they are copied as persistent znodes; a backup that names a kind restores it.)
    assert_eq!(&d.get_data("/copied/ttl").await.unwrap().0[..], b"t");
    assert_eq!(d.get_children("/copied/box").await.unwrap(), ["item"]);
    let src_ttl = owner.exists(&format!("{base}/ttl")).await.unwrap().unwrap();
    assert_eq!(
        src_ttl.ephemeral_owner, 0,
        "the server now tells a TTL's kind"
    );

    // diff finds a changed byte, a changed ACL and a missing znode, and says so in --json.
    let mut changed: Vec<u8> = data.to_vec();
    changed[1234] ^= 1;
    d.set_data("/copied/bin", &changed, Version::Any)
        .await
        .unwrap();
    d.set_acl(
        "/copied/seq",
        &[Acl::new(Perms::READ, Id::anyone())],
        Version::Any,
    )
    .await
    .unwrap();
    d.delete("/copied/box/item", Version::Any).await.unwrap();
    let o = zk_at(&server(), &["--auth", ALICE, "--json", "diff", &src, &dst]).await;
    assert_code(&o, 1);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    support::assert_camel_case_keys(&doc);
    assert_eq!(doc["equal"], false);
    assert_eq!(doc["dataDiffers"], serde_json::json!(["/bin"]));
    assert_eq!(doc["aclDiffers"], serde_json::json!(["/seq"]));
    assert_eq!(doc["onlyInA"], serde_json::json!(["/box/item"]));
    assert_eq!(doc["onlyInB"], serde_json::json!([]));
    assert_eq!(doc["ephemeralIgnored"], 1);
    let o = zk_at(&server(), &["--auth", ALICE, "diff", &src, &dst]).await;
    assert_code(&o, 1);
    assert_eq!(
        stdout(&o),
        "only in A: /box/item\ndata differs: /bin\nACL differs: /seq\n"
    );

    // --kind gives the copies the kinds the server does not tell: the container goes once
    // its last child does, the TTL znode once its TTL is over; persistent znodes stay.
    let dst = format!("zk://{dst_server}/kinds");
    let args = [
        "--auth",
        ALICE,
        "cp",
        "--kind",
        "^/box$=container",
        "--kind",
        "^/ttl$=ttl:200",
        &src,
        &dst,
    ];
    assert_code(&zk_at(&server(), &args).await, 0);
    d.delete("/kinds/box/item", Version::Any).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while d.exists("/kinds/box").await.unwrap().is_some()
        || d.exists("/kinds/ttl").await.unwrap().is_some()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the container and TTL znode stay"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(d.exists("/kinds/bin").await.unwrap().is_some());
    assert!(
        d.exists("/copied/ttl").await.unwrap().is_some(),
        "copied without --kind"
    );
    drop(owner);
}

#[tokio::test]
async fn a_backup_restores_into_an_empty_ensemble() {
    let base = unique("cp-backup");
    let owner = build_tree(&base).await;
    let dir = std::env::temp_dir().join(format!("zk-cli-backup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tree.zkb");
    let file_arg = format!("file:{}", file.display());
    let o = zk_at(&server(), &["--auth", ALICE, "cp", &base, &file_arg]).await;
    assert_code(&o, 0);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("{\"format\":\"zk-backup\""), "{text}");
    // A second backup to the same file needs --overwrite.
    let o = zk_at(&server(), &["--auth", ALICE, "cp", &base, &file_arg]).await;
    assert_code(&o, 1);
    assert!(stderr(&o).contains("--overwrite"), "{}", stderr(&o));

    let empty = other_ensemble();
    let dst = format!("zk://{}{base}", empty.connect_string());
    // A truncated backup, or one from a newer format, is refused before anything is written.
    let cut = dir.join("cut.zkb");
    std::fs::write(&cut, &text[..text.len() - 40]).unwrap();
    let newer = dir.join("newer.zkb");
    std::fs::write(&newer, text.replacen("\"version\":1", "\"version\":9", 1)).unwrap();
    for (bad, why) in [(&cut, "truncated"), (&newer, "newer")] {
        let o = zk_at(&server(), &["cp", &format!("file:{}", bad.display()), &dst]).await;
        assert_code(&o, 1);
        assert!(stderr(&o).contains(why), "{}", stderr(&o));
    }
    let e = Client::builder(&empty.connect_string())
        .connect()
        .await
        .unwrap();
    assert_eq!(e.get_children("/").await.unwrap(), ["zookeeper"]);

    let o = zk_at(&server(), &["--auth", ALICE, "cp", &file_arg, &dst]).await;
    assert_code(&o, 0);
    let src = format!("zk://{}{base}", server());
    let o = zk_at(&server(), &["--auth", ALICE, "diff", &src, &dst]).await;
    assert_code(&o, 0);
    // The backup itself compares equal too.
    let o = zk_at(&server(), &["--auth", ALICE, "diff", &file_arg, &dst]).await;
    assert_code(&o, 0);
    drop(owner);
}

#[tokio::test]
async fn an_interrupted_copy_re_run_ends_equal() {
    let base = unique("cp-resume");
    let c = support::admin().await;
    c.create(&base, b"", CreateOptions::persistent())
        .await
        .unwrap();
    for i in 0..40 {
        let dir = format!("{base}/d{i:02}");
        c.create(&dir, b"dir", CreateOptions::persistent())
            .await
            .unwrap();
        let ops = (0..50).map(|j| {
            zk_session::Op::create(
                format!("{dir}/n{j:02}"),
                format!("{i}-{j}").as_bytes(),
                CreateOptions::persistent(),
            )
        });
        c.multi(ops).await.unwrap();
    }
    let src = base.clone();
    // Interrupted for certain: part of the tree is there already, so a plain copy stops at
    // the first znode that exists, naming it.
    let dst = format!("{base}-copy");
    let o = support::zk(["cp", &format!("{base}/d07"), &format!("{dst}/d07")]).await;
    assert_code(&o, 0);
    let o = support::zk(["cp", &src, &dst]).await;
    assert_code(&o, 1);
    assert!(
        stderr(&o).contains(&format!("{dst} exists")),
        "{}",
        stderr(&o)
    );
    // And killed part way through.
    let dst2 = format!("{base}-killed");
    let mut run = command_at(&server(), ["cp", &src, &dst2]);
    let mut child = run.spawn().unwrap();
    while c.exists(&dst2).await.unwrap().is_none() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.kill().await.unwrap();
    for dst in [&dst, &dst2] {
        let o = support::zk(["cp", "--overwrite", &src, dst]).await;
        assert_code(&o, 0);
        let o = support::zk(["diff", &src, dst]).await;
        assert_code(&o, 0);
        // Safe to run again: nothing changes.
        let o = support::zk(["--json", "cp", "--overwrite", &src, dst]).await;
        let doc = json(&o);
        assert_eq!(doc["copied"], 2041);
        assert_eq!(doc["overwritten"], 2041);
    }
}

#[tokio::test]
async fn a_destination_without_permission_stops_naming_the_znode() {
    let base = unique("cp-noauth");
    let c = support::admin().await;
    c.create(&base, b"", CreateOptions::persistent())
        .await
        .unwrap();
    let read_only = CreateOptions::persistent().with_acl(vec![Acl::new(Perms::READ, Id::anyone())]);
    c.create(&format!("{base}/src"), b"", CreateOptions::persistent())
        .await
        .unwrap();
    c.create(&format!("{base}/src/a"), b"", CreateOptions::persistent())
        .await
        .unwrap();
    c.create(&format!("{base}/locked"), b"", read_only)
        .await
        .unwrap();
    let o = support::zk(["cp", &format!("{base}/src"), &format!("{base}/locked/copy")]).await;
    assert_code(&o, 1);
    assert!(
        stderr(&o).contains(&format!("create {base}/locked/copy"))
            && stderr(&o).contains("not authenticated"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        c.get_children(&format!("{base}/locked"))
            .await
            .unwrap()
            .len(),
        0
    );
}
