//! Watches: one-shot, persistent, recursive, removal, SetWatches, order against replies.

use zk_proto::{
    AddWatchMode, CreateMode, ErrorCode, EventType, KeeperState, OpCode, Request, SetWatches,
    SetWatches2, WatcherEvent, WatcherType,
};

use crate::{
    check::{ensure, ensure_eq, fail, Area, Check, CheckResult},
    ctx::{Conn, Ctx, SESSION_TIMEOUT_MS},
    req,
};

const GUIDE: &str = "Programmer's Guide: ZooKeeper Watches";
const PERSISTENT: &str = "Programmer's Guide: Persistent, Recursive Watches";
const BUG_4466: &str =
    "ZOOKEEPER-4466 (fixed in 3.9): the server keeps one watch mode per path and \
connection, so a one-shot watch set on the path of the session's persistent watch replaces it. \
Reproduce: addWatch(/p, PERSISTENT); getData(/p, watch=true); setData(/p) twice from another \
session: only one NodeDataChanged arrives";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Watches, "watches";
    "data.once", "a data watch fires NodeDataChanged once, with the path and SyncConnected", GUIDE, data_once;
    "exists.created", "an exists watch on a missing znode fires NodeCreated", GUIDE, exists_created;
    "child.once", "a child watch fires NodeChildrenChanged once", GUIDE, child_once;
    "deleted", "deleting a watched znode fires NodeDeleted to data and child watches", GUIDE, deleted;
    "notification-header", "a notification has xid -1 and zxid -1", "zookeeper.jute: WatcherEvent, ReplyHeader", notification_header;
    "before-reply", "the notification arrives before the reply to the write that triggered it", "Programmer's Guide: ZooKeeper Watches (ordering guarantee)", before_reply;
    "persistent", "a persistent watch fires on every change and is not removed", PERSISTENT, persistent;
    "recursive", "a recursive watch fires for descendants, without NodeChildrenChanged", PERSISTENT, recursive;
    "remove", "removeWatches removes the watch: no event after", "zookeeper.jute: RemoveWatchesRequest", remove;
    "remove.wrong-kind", "removing a data watch where only a child watch is set fails with NOWATCHER", "zookeeper.jute: RemoveWatchesRequest", remove_wrong_kind;
    "set-watches.stale", "SetWatches with a stale zxid fires at once for what changed meanwhile", "zookeeper.jute: SetWatches", set_watches_stale;
    "set-watches.deleted", "SetWatches for a znode deleted meanwhile fires NodeDeleted", "zookeeper.jute: SetWatches", set_watches_deleted;
    "set-watches.current", "SetWatches with the current zxid fires nothing", "zookeeper.jute: SetWatches", set_watches_current;
    "exists.changed", "an exists watch on an existing znode fires NodeDataChanged", GUIDE, exists_changed;
    "child.not-on-child-data", "a child watch does not fire when a child's data changes", GUIDE, child_not_on_child_data;
    "data.not-on-child", "a data watch does not fire when a child is created", GUIDE, data_not_on_child;
    "same-path-once", "getData and exists watches on one path fire one notification", "Programmer's Guide: ZooKeeper Watches (one trigger per watch object)", same_path_once;
    "session-close", "closing a session fires NodeDeleted for its ephemerals and NodeChildrenChanged for their parent", GUIDE, session_close;
    "remove.persistent", "removeWatches (any) removes a persistent watch", "zookeeper.jute: RemoveWatchesRequest", remove_persistent;
    "set-watches2.persistent", "SetWatches2 (105) re-establishes a persistent watch on a new connection", "zookeeper.jute: SetWatches2", set_watches2_persistent;
    "child.on-child-delete", "a child watch fires NodeChildrenChanged when a child is deleted", GUIDE, child_on_child_delete;
    "every-session", "a change fires the watch of every session that set one", GUIDE, every_session;
    "remove.data-keeps-child", "removing the data watch leaves the child watch on the same path", "zookeeper.jute: RemoveWatchesRequest", remove_data_keeps_child;
    "exists.created-once", "an exists watch on a missing znode fires once: no NodeDeleted after NodeCreated", GUIDE, exists_created_once;
    "persistent.missing", "a persistent watch on a missing znode fires NodeCreated, then NodeDataChanged", PERSISTENT, persistent_missing;
    "recursive.remove", "removeWatches (any) removes a recursive watch", "zookeeper.jute: RemoveWatchesRequest", recursive_remove;
    "persistent-and-one-shot", "a one-shot watch on the path of a persistent watch leaves the persistent one in place", PERSISTENT, persistent_and_one_shot, bug = BUG_4466;
);

pub(crate) fn expect_event(conn: &mut Conn, kind: EventType, path: &str) -> CheckResult {
    let ev = conn.event()?;
    let want = WatcherEvent {
        event_type: kind,
        state: KeeperState::SyncConnected,
        path: path.into(),
    };
    ensure_eq("notification", ev, want)
}

pub(crate) fn pair(ctx: &mut Ctx) -> Result<(Conn, Conn, String), crate::Finding> {
    let mut watcher = ctx.session()?;
    let writer = ctx.session()?;
    let path = ctx.path("w");
    watcher.create(&path, b"", CreateMode::Persistent)?;
    Ok((watcher, writer, path))
}

fn data_once(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    c.set_data(&path, b"1", -1)?;
    expect_event(&mut w, EventType::NodeDataChanged, &path)?;
    c.set_data(&path, b"2", -1)?;
    w.no_event("no second event from a one-shot watch")
}

fn exists_created(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let child = format!("{path}/later");
    ensure(w.exists(&child, true)?.is_none(), "NONODE", || {
        "a Stat".into()
    })?;
    c.create(&child, b"", CreateMode::Persistent)?;
    expect_event(&mut w, EventType::NodeCreated, &child)
}

fn child_once(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.children(&path, true)?;
    c.create(&format!("{path}/a"), b"", CreateMode::Persistent)?;
    expect_event(&mut w, EventType::NodeChildrenChanged, &path)?;
    c.create(&format!("{path}/b"), b"", CreateMode::Persistent)?;
    w.no_event("no second event from a one-shot watch")
}

fn deleted(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    w.children(&path, true)?;
    c.delete(&path)?;
    // One notification per watch type; the server may merge them into one NodeDeleted.
    expect_event(&mut w, EventType::NodeDeleted, &path)?;
    let rest = {
        w.ok(&req::exists("/", false))?;
        w.queued_events()
    };
    ensure(
        rest.iter()
            .all(|e| e.event_type == EventType::NodeDeleted && e.path == path),
        "only NodeDeleted notifications",
        || format!("{rest:?}"),
    )
}

fn notification_header(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    c.set_data(&path, b"1", -1)?;
    let frame = w
        .recv_frame()?
        .ok_or_else(|| fail("a notification", "closed"))?;
    let (h, _) =
        zk_proto::decode_notification(frame).map_err(|e| fail("a notification", e.to_string()))?;
    ensure_eq("xid", h.xid, -1)?;
    ensure_eq("zxid", h.zxid, -1)?;
    ensure_eq("err", h.err, 0)
}

fn before_reply(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("w");
    conn.create(&path, b"", CreateMode::Persistent)?;
    conn.get_data(&path, true)?;
    let x = conn.send(&req::set_data(&path, b"1", -1))?;
    // Read raw: the notification must come first.
    let first = conn
        .recv_frame()?
        .ok_or_else(|| fail("a notification", "closed"))?;
    let xid = first
        .get(..4)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    ensure_eq("xid of the first frame after the setData", xid, Some(-1))?;
    conn.recv(x, OpCode::SetData).map(drop)
}

fn persistent(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.ok(&req::add_watch(&path, AddWatchMode::Persistent))?;
    for v in [b"1", b"2", b"3"] {
        c.set_data(&path, v, -1)?;
        expect_event(&mut w, EventType::NodeDataChanged, &path)?;
    }
    c.create(&format!("{path}/c"), b"", CreateMode::Persistent)?;
    expect_event(&mut w, EventType::NodeChildrenChanged, &path)?;
    c.set_data(&format!("{path}/c"), b"x", -1)?;
    w.no_event("no event for a child's data from a non-recursive watch")
}

fn recursive(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.ok(&req::add_watch(&path, AddWatchMode::PersistentRecursive))?;
    let child = format!("{path}/c");
    let grandchild = format!("{child}/g");
    c.create(&child, b"", CreateMode::Persistent)?;
    expect_event(&mut w, EventType::NodeCreated, &child)?;
    c.create(&grandchild, b"", CreateMode::Persistent)?;
    expect_event(&mut w, EventType::NodeCreated, &grandchild)?;
    c.set_data(&grandchild, b"x", -1)?;
    expect_event(&mut w, EventType::NodeDataChanged, &grandchild)?;
    c.delete(&grandchild)?;
    expect_event(&mut w, EventType::NodeDeleted, &grandchild)?;
    w.no_event("no NodeChildrenChanged from a recursive watch")
}

fn remove(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    w.ok(&req::check_watches(&path, WatcherType::Data))?;
    w.ok(&req::remove_watches(&path, WatcherType::Data))?;
    c.set_data(&path, b"1", -1)?;
    w.no_event("no event from a removed watch")
}

fn remove_wrong_kind(ctx: &mut Ctx) -> CheckResult {
    let (mut w, _, path) = pair(ctx)?;
    w.children(&path, true)?;
    w.err(
        &req::remove_watches(&path, WatcherType::Data),
        ErrorCode::NoWatcher,
    )
}

/// Re-attaches session `(id, password)` on a new connection and sends SetWatches for
/// `path` (data and child) and `path/new` (exist) relative to `zxid`.
fn reattach_with_watches(
    ctx: &mut Ctx,
    id: i64,
    password: &[u8],
    zxid: i64,
    path: &str,
) -> Result<Conn, crate::Finding> {
    let sw = Request::SetWatches(SetWatches {
        relative_zxid: zxid,
        data_watches: vec![path.into()],
        exist_watches: vec![format!("{path}/new")],
        child_watches: vec![path.into()],
    });
    reattach(ctx, id, password, &sw)
}

/// Re-attaches session `(id, pw)` on a new connection and sends `sw` (SetWatches or
/// SetWatches2), which must succeed.
pub(crate) fn reattach(
    ctx: &mut Ctx,
    id: i64,
    pw: &[u8],
    sw: &Request,
) -> Result<Conn, crate::Finding> {
    let mut conn = ctx.connect()?;
    let resp = conn.handshake(id, pw, SESSION_TIMEOUT_MS)?;
    ensure(!resp.is_expired(), "the session re-attached", || {
        format!("{resp:?}")
    })?;
    conn.send_with_xid(zk_proto::xid::SET_WATCHES, sw)?;
    let (h, _) = conn.recv(zk_proto::xid::SET_WATCHES, sw.op_code())?;
    ensure_eq("SetWatches err", h.err, 0)?;
    Ok(conn)
}

/// A session that read `path`, and its zxid, its id and password; its connection dropped.
pub(crate) fn watched_then_dropped(
    ctx: &mut Ctx,
) -> Result<(Conn, String, i64, i64, bytes::Bytes), crate::Finding> {
    let (mut w, c, path) = pair(ctx)?;
    w.get_data(&path, false)?;
    let seen = w.last_zxid();
    let (id, pw) = (w.session_id(), w.password());
    drop(w);
    Ok((c, path, seen, id, pw))
}

fn set_watches_stale(ctx: &mut Ctx) -> CheckResult {
    let (mut c, path, seen, id, pw) = watched_then_dropped(ctx)?;
    c.set_data(&path, b"changed", -1)?;
    c.create(&format!("{path}/new"), b"", CreateMode::Persistent)?;
    let mut conn = reattach_with_watches(ctx, id, &pw, seen, &path)?;
    conn.ok(&req::exists("/", false))?;
    let mut got: Vec<(i32, String)> = conn
        .queued_events()
        .into_iter()
        .map(|e| (e.event_type.code(), e.path))
        .collect();
    got.sort();
    let want = vec![
        (EventType::NodeCreated.code(), format!("{path}/new")),
        (EventType::NodeDataChanged.code(), path.clone()),
        (EventType::NodeChildrenChanged.code(), path),
    ];
    ensure_eq("notifications (type, path) on re-attach", got, want)
}

fn set_watches_deleted(ctx: &mut Ctx) -> CheckResult {
    let (mut c, path, seen, id, pw) = watched_then_dropped(ctx)?;
    c.delete(&path)?;
    let mut conn = reattach_with_watches(ctx, id, &pw, seen, &path)?;
    conn.ok(&req::exists("/", false))?;
    let got = conn.queued_events();
    // The data and child watches may be served by one NodeDeleted; the exist watch on a
    // missing child stays set and fires nothing.
    ensure(
        !got.is_empty()
            && got
                .iter()
                .all(|e| e.event_type == EventType::NodeDeleted && e.path == path),
        format!("NodeDeleted for {path}, nothing else"),
        || format!("{got:?}"),
    )
}

fn set_watches_current(ctx: &mut Ctx) -> CheckResult {
    let (mut c, path, _, id, pw) = watched_then_dropped(ctx)?;
    let stat = c.set_data(&path, b"changed", -1)?;
    let mut conn = reattach_with_watches(ctx, id, &pw, stat.mzxid, &path)?;
    conn.no_event("no notification: nothing changed after the zxid given")
}

fn persistent_and_one_shot(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.ok(&req::add_watch(&path, AddWatchMode::Persistent))?;
    w.get_data(&path, true)?;
    c.set_data(&path, b"1", -1)?;
    // The one-shot and the persistent watch may be served by one notification.
    expect_event(&mut w, EventType::NodeDataChanged, &path)?;
    w.ok(&req::exists("/", false))?;
    w.queued_events();
    c.set_data(&path, b"2", -1)?;
    w.ok(&req::exists("/", false))?;
    let later = w.queued_events();
    ensure(
        later
            .iter()
            .any(|e| e.event_type == EventType::NodeDataChanged && e.path == path),
        "the persistent watch fires on the second change",
        || format!("notifications {later:?}"),
    )
}

fn exists_changed(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    ensure(w.exists(&path, true)?.is_some(), "a Stat", || {
        "NONODE".into()
    })?;
    c.set_data(&path, b"1", -1)?;
    expect_event(&mut w, EventType::NodeDataChanged, &path)
}

fn child_not_on_child_data(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let child = format!("{path}/c");
    c.create(&child, b"", CreateMode::Persistent)?;
    w.children(&path, true)?;
    c.set_data(&child, b"1", -1)?;
    w.no_event("no event: the children did not change")
}

fn data_not_on_child(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    c.create(&format!("{path}/c"), b"", CreateMode::Persistent)?;
    w.no_event("no event: the data did not change")
}

fn same_path_once(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    w.exists(&path, true)?;
    c.set_data(&path, b"1", -1)?;
    expect_event(&mut w, EventType::NodeDataChanged, &path)?;
    w.no_event("one notification for both watches")
}

fn session_close(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let eph = format!("{path}/e");
    c.create(&eph, b"", CreateMode::Ephemeral)?;
    w.get_data(&eph, true)?;
    w.children(&path, true)?;
    c.close()?;
    w.ok(&req::exists("/", false))?;
    let mut got: Vec<(i32, String)> = w
        .queued_events()
        .into_iter()
        .map(|e| (e.event_type.code(), e.path))
        .collect();
    got.sort();
    let want = vec![
        (EventType::NodeDeleted.code(), eph),
        (EventType::NodeChildrenChanged.code(), path),
    ];
    ensure_eq(
        "notifications (type, path) once the session closed",
        got,
        want,
    )
}

fn remove_persistent(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.ok(&req::add_watch(&path, AddWatchMode::PersistentRecursive))?;
    w.ok(&req::remove_watches(&path, WatcherType::Any))?;
    c.set_data(&path, b"1", -1)?;
    c.create(&format!("{path}/c"), b"", CreateMode::Persistent)?;
    w.no_event("no event from a removed persistent watch")
}

fn set_watches2_persistent(ctx: &mut Ctx) -> CheckResult {
    let (c, path, seen, id, pw) = watched_then_dropped(ctx)?;
    drop(c);
    let mut conn = ctx.connect()?;
    conn.handshake(id, &pw, SESSION_TIMEOUT_MS)?;
    let sw = Request::SetWatches2(SetWatches2 {
        relative_zxid: seen,
        data_watches: vec![],
        exist_watches: vec![],
        child_watches: vec![],
        persistent_watches: vec![path.clone()],
        persistent_recursive_watches: vec![],
    });
    conn.send_with_xid(zk_proto::xid::SET_WATCHES, &sw)?;
    let (h, _) = conn.recv(zk_proto::xid::SET_WATCHES, OpCode::SetWatches2)?;
    ensure_eq("SetWatches2 err", h.err, 0)?;
    let mut writer = ctx.session()?;
    for v in [b"1", b"2"] {
        writer.set_data(&path, v, -1)?;
        expect_event(&mut conn, EventType::NodeDataChanged, &path)?;
    }
    Ok(())
}

fn child_on_child_delete(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let child = format!("{path}/a");
    c.create(&child, b"", CreateMode::Persistent)?;
    w.children(&path, true)?;
    c.delete(&child)?;
    expect_event(&mut w, EventType::NodeChildrenChanged, &path)
}

fn every_session(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let mut w2 = ctx.session()?;
    w.get_data(&path, true)?;
    w2.get_data(&path, true)?;
    c.set_data(&path, b"1", -1)?;
    expect_event(&mut w, EventType::NodeDataChanged, &path)?;
    expect_event(&mut w2, EventType::NodeDataChanged, &path)
}

fn remove_data_keeps_child(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    w.children(&path, true)?;
    w.ok(&req::remove_watches(&path, WatcherType::Data))?;
    c.set_data(&path, b"1", -1)?;
    w.no_event("no event from the removed data watch")?;
    c.create(&format!("{path}/a"), b"", CreateMode::Persistent)?;
    expect_event(&mut w, EventType::NodeChildrenChanged, &path)
}

fn exists_created_once(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let child = format!("{path}/later");
    w.exists(&child, true)?;
    c.create(&child, b"", CreateMode::Persistent)?;
    expect_event(&mut w, EventType::NodeCreated, &child)?;
    c.delete(&child)?;
    w.no_event("no second event from a one-shot exists watch")
}

fn persistent_missing(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let child = format!("{path}/later");
    w.ok(&req::add_watch(&child, AddWatchMode::Persistent))?;
    c.create(&child, b"", CreateMode::Persistent)?;
    expect_event(&mut w, EventType::NodeCreated, &child)?;
    c.set_data(&child, b"1", -1)?;
    expect_event(&mut w, EventType::NodeDataChanged, &child)
}

fn recursive_remove(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.ok(&req::add_watch(&path, AddWatchMode::PersistentRecursive))?;
    w.ok(&req::remove_watches(&path, WatcherType::Any))?;
    c.create(&format!("{path}/a"), b"", CreateMode::Persistent)?;
    c.set_data(&path, b"1", -1)?;
    w.no_event("no event from a removed recursive watch")
}
