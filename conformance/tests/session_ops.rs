//! Every operation of zk-session against a real standalone server (watches:
//! session_watches.rs; ACLs and credentials: session_auth.rs; connection loss, close and
//! timeouts: session_lifecycle.rs).

mod ops_support;

use conformance::ephemeral_owner;
use std::time::Duration;

use conformance::{shared_standalone, Standalone};
use ops_support::{base, client};
use zk_session::{
    AddWatchMode, Client, CreateMode, CreateOptions, Error, ErrorCode, Op, OpResult, ReadOp,
    ReadResult, SessionState, Version,
};

#[tokio::test]
async fn create_get_set_delete_and_versions() {
    let c = client().await;
    assert_eq!(c.state(), SessionState::Connected);
    assert_ne!(ephemeral_owner(&c), 0);
    let b = base(&c, "crud").await;
    let p = format!("{b}/n");
    assert_eq!(
        c.create(&p, b"one", CreateOptions::persistent())
            .await
            .unwrap(),
        p
    );
    let (data, stat) = c.get_data(&p).await.unwrap();
    assert_eq!(&data[..], b"one");
    assert_eq!(stat.version, 0);
    assert_eq!(stat.data_length, 3);
    let stat = c.set_data(&p, b"two", Version::Exact(0)).await.unwrap();
    assert_eq!(stat.version, 1);
    let e = c.set_data(&p, b"x", Version::Exact(0)).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::BadVersion));
    let e = c
        .create(&p, b"", CreateOptions::persistent())
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Code(ErrorCode::NodeExists)));
    assert_eq!(c.exists(&p).await.unwrap().unwrap().version, 1);
    let e = c.delete(&b, Version::Any).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NotEmpty));
    let e = c.delete(&p, Version::Exact(0)).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::BadVersion));
    c.delete(&p, Version::Exact(1)).await.unwrap();
    assert_eq!(c.exists(&p).await.unwrap(), None);
    let e = c.get_data(&p).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NoNode));
    let e = c.set_data(&p, b"", Version::Any).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NoNode));
}

#[tokio::test]
async fn every_create_mode() {
    let c = client().await;
    let b = base(&c, "modes").await;
    let (p, stat) = c
        .create_with_stat(&format!("{b}/p"), b"d", CreateOptions::persistent())
        .await
        .unwrap();
    assert_eq!(p, format!("{b}/p"));
    assert_eq!(stat.ephemeral_owner, 0);
    let (e, stat) = c
        .create_with_stat(&format!("{b}/e"), b"", CreateOptions::ephemeral())
        .await
        .unwrap();
    assert_eq!(stat.ephemeral_owner, ephemeral_owner(&c));
    let s1 = c
        .create(
            &format!("{b}/s-"),
            b"",
            CreateOptions::persistent_sequential(),
        )
        .await
        .unwrap();
    let s2 = c
        .create(
            &format!("{b}/s-"),
            b"",
            CreateOptions::ephemeral_sequential(),
        )
        .await
        .unwrap();
    assert!(s1.len() == b.len() + 3 + 10 && s1 < s2, "{s1} {s2}");
    assert!(s1[b.len() + 3..].chars().all(|c| c.is_ascii_digit()));
    // A container is removed by the server once its last child is gone.
    let cont = c
        .create(&format!("{b}/cont"), b"", CreateOptions::container())
        .await
        .unwrap();
    let (_, stat) = c
        .create_with_stat(&format!("{cont}/child"), b"", CreateOptions::persistent())
        .await
        .unwrap();
    assert_eq!(stat.ephemeral_owner, 0);
    // The ephemeral znodes are this session's.
    let mut eph = c.get_ephemerals(&b).await.unwrap();
    eph.sort();
    assert_eq!(eph, vec![e.clone(), s2.clone()]);
    c.create(
        &format!("{b}/ttl"),
        b"",
        CreateOptions::ttl(Duration::from_secs(60)),
    )
    .await
    .unwrap();
    assert_eq!(c.get_all_children_number(&b).await.unwrap(), 7);
    let mut kids = c.get_children(&b).await.unwrap();
    kids.sort();
    assert_eq!(kids.len(), 6);
    assert!(kids.contains(&"cont".to_string()));
    let (kids2, stat) = c.get_children_with_stat(&b).await.unwrap();
    assert_eq!(kids2.len(), 6);
    assert_eq!(stat.num_children, 6);
    // A trailing slash is refused, except for sequential creates (the server appends the
    // sequence number).
    assert!(matches!(
        c.create(&format!("{b}/"), b"", CreateOptions::persistent())
            .await,
        Err(Error::InvalidPath { .. })
    ));
    let seq = c
        .create(
            &format!("{b}/"),
            b"",
            CreateOptions::persistent_sequential(),
        )
        .await
        .unwrap();
    assert_eq!(seq.len(), b.len() + 1 + 10);
    c.delete(&format!("{cont}/child"), Version::Any)
        .await
        .unwrap();
}

#[tokio::test]
async fn ttl_and_container_znodes_are_reaped() {
    // The reaper runs every znode.container.checkIntervalMs (60 s by default).
    let zk = Standalone::builder()
        .extended_types(true)
        .system_property("znode.container.checkIntervalMs", "100")
        .start()
        .unwrap();
    let c = Client::builder(&zk.connect_string())
        .connect()
        .await
        .unwrap();
    let (p, stat) = c
        .create_with_stat("/ttl", b"x", CreateOptions::ttl(Duration::from_millis(100)))
        .await
        .unwrap();
    assert_eq!(p, "/ttl");
    // The server hides the TTL marker it keeps in ephemeralOwner.
    assert_eq!(stat.ephemeral_owner, 0);
    let s = c
        .create(
            "/ttl-",
            b"",
            CreateOptions::ttl_sequential(Duration::from_secs(600)),
        )
        .await
        .unwrap();
    assert!(s.starts_with("/ttl-"));
    let err = c
        .create(
            "/bad",
            b"",
            CreateOptions::new(CreateMode::PersistentWithTtl),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)));
    c.create("/box", b"", CreateOptions::container())
        .await
        .unwrap();
    c.create("/box/item", b"", CreateOptions::persistent())
        .await
        .unwrap();
    c.delete("/box/item", Version::Any).await.unwrap();
    let mut reaped = false;
    for _ in 0..100 {
        if c.exists("/ttl").await.unwrap().is_none() && c.exists("/box").await.unwrap().is_none() {
            reaped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(reaped, "TTL znode or empty container was not removed");
    assert!(
        c.exists(&s).await.unwrap().is_some(),
        "the long TTL znode went too early"
    );
    c.close().await.unwrap();
}

#[tokio::test]
async fn multi_success_and_failure() {
    let c = client().await;
    let b = base(&c, "multi").await;
    let r = c
        .multi(vec![
            Op::create(format!("{b}/a"), b"1", CreateOptions::persistent()),
            Op::create(
                format!("{b}/s-"),
                b"2",
                CreateOptions::persistent_sequential(),
            ),
            Op::set_data(format!("{b}/a"), b"3", Version::Exact(0)),
            Op::check(format!("{b}/a"), Version::Exact(1)),
        ])
        .await
        .unwrap();
    assert_eq!(r.len(), 4);
    // The 3.8 server answers a create2 inside a multi with a plain create result (no Stat).
    assert!(matches!(&r[0], OpResult::Create { path, .. } if *path == format!("{b}/a")));
    assert!(matches!(&r[1], OpResult::Create { path, .. } if path.starts_with(&format!("{b}/s-"))));
    assert!(matches!(&r[2], OpResult::SetData(s) if s.version == 1));
    assert_eq!(r[3], OpResult::Check);
    // A failing check rolls the whole transaction back.
    let e = c
        .multi(vec![
            Op::create(format!("{b}/b"), b"", CreateOptions::persistent()),
            Op::check(format!("{b}/a"), Version::Exact(7)),
            Op::delete(format!("{b}/a"), Version::Any),
        ])
        .await
        .unwrap_err();
    match e {
        Error::Multi {
            index,
            code,
            results,
        } => {
            assert_eq!(index, 1);
            assert_eq!(code, ErrorCode::BadVersion);
            assert_eq!(
                results,
                vec![
                    ErrorCode::Ok,
                    ErrorCode::BadVersion,
                    ErrorCode::RuntimeInconsistency
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(c.exists(&format!("{b}/b")).await.unwrap(), None);
    assert!(c.exists(&format!("{b}/a")).await.unwrap().is_some());
    // multiRead: each read on its own.
    let r = c
        .multi_read(vec![
            ReadOp::GetData(format!("{b}/a")),
            ReadOp::GetChildren(b.clone()),
            ReadOp::GetData(format!("{b}/missing")),
        ])
        .await
        .unwrap();
    assert!(matches!(&r[0], ReadResult::Data(Ok((d, s))) if &d[..] == b"3" && s.version == 1));
    assert!(matches!(&r[1], ReadResult::Children(Ok(k)) if k.len() == 2));
    assert_eq!(r[2], ReadResult::Data(Err(ErrorCode::NoNode)));
    assert!(c.multi(Vec::new()).await.unwrap().is_empty());
}

#[tokio::test]
async fn chroot_paths_are_relative() {
    let c = client().await;
    let b = base(&c, "chroot").await;
    let cr = Client::builder(&format!("{}{b}", shared_standalone().connect_string()))
        .connect()
        .await
        .unwrap();
    let mut w = cr
        .add_watch("/", AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    assert_eq!(
        cr.create("/x", b"", CreateOptions::persistent())
            .await
            .unwrap(),
        "/x"
    );
    let s = cr
        .create("/q-", b"", CreateOptions::ephemeral_sequential())
        .await
        .unwrap();
    assert!(s.starts_with("/q-"), "{s}");
    let r = cr
        .multi(vec![Op::create("/m", b"", CreateOptions::persistent())])
        .await
        .unwrap();
    assert!(matches!(&r[0], OpResult::Create { path, .. } if path == "/m"));
    // A sequential create of "/" itself would make a sibling of the chroot: refused, in a
    // multi too, and nothing appears beside the chroot.
    let seq = CreateOptions::persistent_sequential();
    let e = cr.create("/", b"", seq.clone()).await.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let e = cr.multi(vec![Op::create("/", b"", seq)]).await.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let leaf = &b[1..];
    let beside: Vec<String> = c.get_children("/").await.unwrap();
    assert_eq!(beside.iter().filter(|n| n.starts_with(leaf)).count(), 1);
    assert_eq!(cr.get_ephemerals("/").await.unwrap(), vec![s.clone()]);
    let ev = tokio::time::timeout(Duration::from_secs(5), w.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(ev.path(), "/x");
    assert!(c.exists(&format!("{b}/x")).await.unwrap().is_some());
    let mut kids = cr.get_children("/").await.unwrap();
    kids.sort();
    assert_eq!(kids.len(), 3);
    cr.sync("/").await.unwrap();
}

#[tokio::test]
async fn invalid_paths_are_refused_before_sending() {
    let c = client().await;
    for p in [
        "", "a", "/a/", "//a", "/a/./b", "/a/../b", "/a\u{0}b", "/\u{1}",
    ] {
        let e = c.get_data(p).await.unwrap_err();
        assert!(matches!(e, Error::InvalidPath { .. }), "{p:?}: {e}");
    }
}

#[tokio::test]
async fn pipelined_requests_are_all_answered_in_order() {
    let c = client().await;
    let b = base(&c, "pipeline").await;
    let p = format!("{b}/n");
    c.create(&p, b"0", CreateOptions::persistent())
        .await
        .unwrap();
    // 10,000 setData in flight at once: each reply's version is its position in the FIFO.
    let mut tasks = Vec::with_capacity(10_000);
    for _ in 0..10_000 {
        let c = c.clone();
        let p = p.clone();
        tasks.push(tokio::spawn(async move {
            c.set_data(&p, b"x", Version::Any).await
        }));
    }
    let mut versions = Vec::with_capacity(10_000);
    for t in tasks {
        versions.push(t.await.unwrap().unwrap().version);
    }
    versions.sort();
    assert_eq!(versions, (1..=10_000).collect::<Vec<_>>());
    // And from one task, requests issued in order complete in order.
    let futs: Vec<_> = (0..1000)
        .map(|_| c.set_data(&p, b"y", Version::Any))
        .collect();
    let mut last = 10_000;
    for f in futs {
        let v = f.await.unwrap().version;
        assert!(v > last);
        last = v;
    }
}
