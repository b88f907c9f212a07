//! The blocking client (`zk_session::blocking`) against a real standalone server: every
//! operation family once, watches, auth and many threads sharing one session.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
    time::Duration,
};

use conformance::shared_standalone;
use zk_session::{
    blocking::Client, Acl, AddWatchMode, CreateOptions, Error, ErrorCode, EventType, Id, Op,
    OpResult, Perms, ReadOp, ReadResult, SessionState, Version, WatcherType,
};

fn client() -> Client {
    Client::builder(&shared_standalone().connect_string())
        .connect_blocking()
        .expect("connect")
}

/// A fresh base znode for one test.
fn base(c: &Client, name: &str) -> String {
    let p = format!("/blocking-{name}-{}", rand::random::<u32>());
    c.create(&p, b"", CreateOptions::persistent()).unwrap();
    p
}

#[test]
fn create_read_write_delete_and_their_errors() {
    let c = client();
    assert_eq!(c.state(), SessionState::Connected);
    assert!(c.session_id().is_some());
    let b = base(&c, "crud");
    let p = format!("{b}/n");
    assert_eq!(
        c.create(&p, b"one", CreateOptions::persistent()).unwrap(),
        p
    );
    let (data, stat) = c.get_data(&p).unwrap();
    assert_eq!((&data[..], stat.version), (&b"one"[..], 0));
    assert_eq!(
        c.set_data(&p, b"two", Version::Exact(0)).unwrap().version,
        1
    );
    let e = c.set_data(&p, b"x", Version::Exact(0)).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::BadVersion));
    let e = c.create(&p, b"", CreateOptions::persistent()).unwrap_err();
    assert!(matches!(e, Error::Code(ErrorCode::NodeExists)), "{e}");
    assert_eq!(c.exists(&p).unwrap().unwrap().version, 1);
    let (q, stat) = c
        .create_with_stat(
            &format!("{b}/s-"),
            b"",
            CreateOptions::persistent_sequential(),
        )
        .unwrap();
    assert!(q.starts_with(&format!("{b}/s-00")), "{q}");
    assert_eq!(stat.data_length, 0);
    let mut kids = c.get_children(&b).unwrap();
    kids.sort();
    assert_eq!(kids.len(), 2);
    let (kids2, stat) = c.get_children_with_stat(&b).unwrap();
    assert_eq!((kids2.len(), stat.num_children), (2, 2));
    assert_eq!(c.get_all_children_number(&b).unwrap(), 2);
    c.sync(&b).unwrap();
    let e = c.delete(&b, Version::Any).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NotEmpty));
    c.delete(&p, Version::Exact(1)).unwrap();
    c.delete(&q, Version::Any).unwrap();
    assert_eq!(c.exists(&p).unwrap(), None);
    assert_eq!(c.get_data(&p).unwrap_err().code(), Some(ErrorCode::NoNode));
    let e = c.get_data("no-slash").unwrap_err();
    assert!(matches!(e, Error::InvalidPath { .. }), "{e}");
}

#[test]
fn ephemerals_multi_acl_auth_and_who_am_i() {
    let c = client();
    let b = base(&c, "multi");
    let eph = c
        .create(&format!("{b}/e"), b"", CreateOptions::ephemeral())
        .unwrap();
    assert_eq!(c.get_ephemerals(&b).unwrap(), vec![eph.clone()]);
    let r = c
        .multi([
            Op::create(format!("{b}/m"), b"x", CreateOptions::persistent()),
            Op::set_data(format!("{b}/m"), b"y", Version::Exact(0)),
            Op::check(format!("{b}/m"), Version::Exact(1)),
            Op::delete(format!("{b}/m"), Version::Any),
        ])
        .unwrap();
    assert!(matches!(&r[0], OpResult::Create { path, .. } if *path == format!("{b}/m")));
    assert!(matches!(r[3], OpResult::Delete));
    let e = c
        .multi([
            Op::create(format!("{b}/m2"), b"", CreateOptions::persistent()),
            Op::delete(format!("{b}/absent"), Version::Any),
        ])
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Multi {
                index: 1,
                code: ErrorCode::NoNode,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        c.exists(&format!("{b}/m2")).unwrap(),
        None,
        "all or nothing"
    );
    let r = c
        .multi_read([
            ReadOp::GetData(eph.clone()),
            ReadOp::GetChildren(format!("{b}/none")),
        ])
        .unwrap();
    assert!(matches!(&r[0], ReadResult::Data(Ok(_))));
    assert!(matches!(
        &r[1],
        ReadResult::Children(Err(ErrorCode::NoNode))
    ));

    // ACLs and auth: a node only `user` may read.
    c.add_auth("digest", b"user:secret").unwrap();
    let who = c.who_am_i().unwrap();
    assert!(who.iter().any(|i| i.auth_scheme == "digest"), "{who:?}");
    let locked = format!("{b}/locked");
    let acl = vec![Acl::new(Perms::ALL, Id::new("auth", ""))];
    c.create(&locked, b"s", CreateOptions::persistent().with_acl(acl))
        .unwrap();
    let (got, _) = c.get_acl(&locked).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].id.scheme, "digest");
    let other = client();
    let e = other.get_data(&locked).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NoAuth));
    let open = vec![Acl::new(Perms::ALL, Id::new("world", "anyone"))];
    c.set_acl(&locked, &open, Version::Any).unwrap();
    assert_eq!(&other.get_data(&locked).unwrap().0[..], b"s");
}

#[test]
fn oneshot_and_persistent_watches_and_their_removal() {
    let c = client();
    let b = base(&c, "watch");
    let p = format!("{b}/w");
    let (stat, exists) = c.exists_watch(&p).unwrap();
    assert_eq!(stat, None);
    let persistent = c.add_watch(&b, AddWatchMode::PersistentRecursive).unwrap();
    c.create(&p, b"0", CreateOptions::persistent()).unwrap();
    let ev = exists.wait().unwrap();
    assert_eq!(
        (ev.event_type(), ev.path()),
        (EventType::NodeCreated, &p[..])
    );
    let (_, _, mut data) = c.get_data_watch(&p).unwrap();
    assert!(
        data.wait_timeout(Duration::from_millis(50)).is_none(),
        "nothing yet"
    );
    let (_, _, children) = c.get_children_watch(&b).unwrap();
    c.set_data(&p, b"1", Version::Any).unwrap();
    let ev = data.wait_timeout(Duration::from_secs(30)).unwrap().unwrap();
    assert_eq!(ev.event_type(), EventType::NodeDataChanged);
    c.create(&format!("{b}/x"), b"", CreateOptions::persistent())
        .unwrap();
    assert_eq!(
        children.wait().unwrap().event_type(),
        EventType::NodeChildrenChanged
    );
    let seen: Vec<_> = (0..3)
        .map(|_| {
            let ev = persistent.recv_timeout(Duration::from_secs(30)).unwrap();
            let ev = ev.unwrap().unwrap();
            (ev.event_type(), ev.into_path())
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (EventType::NodeCreated, p.clone()),
            (EventType::NodeDataChanged, p.clone()),
            (EventType::NodeCreated, format!("{b}/x")),
        ]
    );
    c.check_watches(&b, WatcherType::Any).unwrap();
    c.remove_watches(&b, WatcherType::Any).unwrap();
    let e = c.check_watches(&b, WatcherType::Any).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NoWatcher));
    // The removal ended the local watch.
    assert!(persistent
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .is_none());
    // Dropping a one-shot watch removes the server-side one.
    let (_, _, w) = c.get_data_watch(&p).unwrap();
    c.check_watches(&p, WatcherType::Data).unwrap();
    drop(w);
    c.sync(&p).unwrap();
    let e = c.check_watches(&p, WatcherType::Data).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NoWatcher));
}

/// Many threads, many requests each, one session: every reply belongs to its request
/// (each thread's znode holds its own value) and each call returns exactly once.
#[test]
fn many_threads_share_one_session_and_every_reply_is_its_own() {
    let c = client();
    let b = base(&c, "threads");
    let answered = Arc::new(Mutex::new(HashSet::new()));
    let threads: Vec<_> = (0..16)
        .map(|t| {
            let (c, b, answered) = (c.clone(), b.clone(), answered.clone());
            std::thread::spawn(move || {
                let p = format!("{b}/t{t}");
                c.create(&p, b"", CreateOptions::persistent()).unwrap();
                for i in 0..300 {
                    let want = format!("{t}:{i}");
                    let stat = c.set_data(&p, want.as_bytes(), Version::Any).unwrap();
                    assert_eq!(stat.version, i + 1);
                    let (data, _) = c.get_data(&p).unwrap();
                    assert_eq!(&data[..], want.as_bytes(), "a reply of another request");
                    assert!(answered.lock().unwrap().insert((t, i)), "answered twice");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(answered.lock().unwrap().len(), 16 * 300);
}

#[test]
fn dropping_the_last_handle_closes_the_session_at_once() {
    let c = Client::builder(&shared_standalone().connect_string())
        .session_timeout(Duration::from_secs(30))
        .connect_blocking()
        .unwrap();
    let b = base(&c, "drop");
    let e = format!("{b}/eph");
    c.create(&e, b"", CreateOptions::ephemeral()).unwrap();
    let observer = client();
    let (_, gone) = observer.exists_watch(&e).unwrap();
    let clone = c.clone();
    drop(c);
    assert!(observer.exists(&e).unwrap().is_some(), "a clone keeps it");
    drop(clone);
    // Long before the 30 s timeout would have expired it.
    let mut gone = gone;
    let ev = gone
        .wait_timeout(Duration::from_secs(10))
        .expect("deleted at once");
    assert_eq!(ev.unwrap().event_type(), EventType::NodeDeleted);
}

#[test]
fn close_ends_the_session_and_every_later_call() {
    let c = client();
    let b = base(&c, "close");
    let (_, _, w) = c.get_data_watch(&b).unwrap();
    c.close().unwrap();
    assert!(c.has_ended());
    assert!(matches!(w.wait(), Err(Error::Closed)));
    assert!(matches!(c.get_data(&b), Err(Error::Closed)));
    assert!(c.state().is_terminal());
    c.close().unwrap();
}

#[test]
fn a_refused_port_times_out_with_its_reason() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = Client::builder(&format!("127.0.0.1:{port}"))
        .first_connection_timeout(Duration::from_millis(500))
        .connect_blocking();
    assert!(
        matches!(
            r,
            Err(Error::ConnectTimeout {
                last_error: Some(_),
                ..
            })
        ),
        "{r:?}"
    );
}
