//! Watches, trigger by trigger: each watch type (data, exist, child, persistent, recursive)
//! against each change (set, create, delete, a child's change), removal per watcher type,
//! SetWatches re-arming, and notifications ahead of the replies that caused them.

use zk_proto::{
    AddWatchMode, CreateMode, ErrorCode, EventType, MultiOp, MultiRequest, Request, SetDataRequest,
    SetWatches, SetWatches2, WatcherType,
};

use super::watches::{expect_event, pair, reattach, watched_then_dropped};
use crate::{
    check::{ensure_eq, fail, Area, Check, CheckResult},
    ctx::{Conn, Ctx},
    req,
};

const GUIDE: &str = "Programmer's Guide: ZooKeeper Watches";
const SEMANTICS: &str = "Programmer's Guide: ZooKeeper Watches (Semantics of Watches)";
const PERSISTENT: &str = "Programmer's Guide: Persistent, Recursive Watches";
const REMOVE: &str = "zookeeper.jute: RemoveWatchesRequest";
const CHECK: &str = "zookeeper.jute: CheckWatchesRequest";
const ORDER: &str = "Programmer's Guide: ZooKeeper Watches (ordering guarantee)";

/// The checks of this part of the area.
pub const CHECKS: &[Check] = checks!(Area::Watches, "watches";
    "data.deleted", "a data watch alone fires NodeDeleted when its znode is deleted", SEMANTICS, data_deleted;
    "data.same-data", "a setData with the same bytes still fires the data watch", SEMANTICS, data_same_data;
    "data.failed-write", "a setData refused with BADVERSION fires no watch", SEMANTICS, data_failed_write;
    "exists.deleted", "an exists watch on an existing znode fires NodeDeleted on delete", SEMANTICS, exists_deleted;
    "exists.not-on-child", "an exists watch does not fire when a child is created", SEMANTICS, exists_not_on_child;
    "child.deleted", "a child watch alone fires NodeDeleted when its znode is deleted", SEMANTICS, child_deleted;
    "child.not-on-data", "a child watch does not fire when the znode's own data changes", SEMANTICS, child_not_on_data;
    "get-data.missing-no-watch", "getData with watch on a missing znode fails with NONODE and leaves no watch", SEMANTICS, get_data_missing;
    "get-children.missing-no-watch", "getChildren with watch on a missing znode fails with NONODE and leaves no watch", SEMANTICS, get_children_missing;
    "persistent.child-deleted", "a persistent watch fires NodeChildrenChanged when a child is deleted", PERSISTENT, persistent_child_deleted;
    "persistent.survives-delete", "a persistent watch fires NodeDeleted, then NodeCreated when the znode is created again", PERSISTENT, persistent_survives_delete;
    "recursive.self", "a recursive watch fires NodeDataChanged for its own znode", PERSISTENT, recursive_self;
    "recursive.ephemeral-close", "a recursive watch fires NodeDeleted for a descendant ephemeral when its session closes", PERSISTENT, recursive_ephemeral_close;
    "recursive.missing-root", "a recursive watch on a missing znode fires for it and its children once created", PERSISTENT, recursive_missing_root;
    "remove.children", "removeWatches (children) removes the child watch: no event after", REMOVE, remove_children;
    "remove.children.no-watcher", "removing a child watch where only a data watch is set fails with NOWATCHER", REMOVE, remove_children_none;
    "remove.exists-as-data", "removeWatches (data) also removes an exists watch", REMOVE, remove_exists_as_data;
    "remove.any", "removeWatches (any) removes the data and the child watch", REMOVE, remove_any;
    "remove.missing-path", "removeWatches on a missing znode without watches fails with NOWATCHER", REMOVE, remove_missing_path;
    "remove.other-session", "removing a watch leaves another session's watch on the same znode", REMOVE, remove_other_session;
    "check-watches.children", "checkWatches (children) where a child watch is set succeeds", CHECK, check_children;
    "check-watches.children.no-watcher", "checkWatches (children) where only a data watch is set fails with NOWATCHER", CHECK, check_children_none;
    "set-watches.rearmed", "a watch re-set by SetWatches with the current zxid fires on a later change", "zookeeper.jute: SetWatches", set_watches_rearmed;
    "set-watches.exist-still-missing", "an exist watch re-set on a still-missing znode fires nothing, then NodeCreated", "zookeeper.jute: SetWatches", set_watches_still_missing;
    "set-watches2.recursive", "SetWatches2 re-establishes a recursive watch on a new connection", "zookeeper.jute: SetWatches2", set_watches2_recursive;
    "before-reply.child", "a child watch's notification arrives before the reply to the session's create", ORDER, before_reply_child;
    "before-reply.delete", "a data watch's NodeDeleted arrives before the reply to the session's delete", ORDER, before_reply_delete;
    "multi.fires", "a multi's setData and create fire the data and child watches", GUIDE, multi_fires;
    "multi.failed-fires-nothing", "a failed multi fires no watch", "Programmer's Guide: multi (atomicity)", multi_failed;
);

/// The watch a trigger case sets, on the znode `pair` made.
#[derive(Debug, Clone, Copy)]
enum Watch {
    Data,
    Exist,
    Child,
    Recursive,
}

/// The change another session makes to that znode.
#[derive(Debug, Clone, Copy)]
enum Change {
    /// setData with the bytes it already has.
    SameData,
    /// setData with new bytes.
    SetData,
    /// delete.
    Delete,
    /// create of a child.
    CreateChild,
}

/// Sets `watch` on `path`.
fn set_watch(w: &mut Conn, watch: Watch, path: &str) -> CheckResult {
    match watch {
        Watch::Data => w.get_data(path, true).map(drop),
        Watch::Exist => w.exists(path, true).map(drop),
        Watch::Child => w.children(path, true).map(drop),
        Watch::Recursive => w
            .ok(&req::add_watch(path, AddWatchMode::PersistentRecursive))
            .map(drop),
    }
}

/// Sets `watch`, then `request(path)` must fail with NOWATCHER.
fn no_watcher(ctx: &mut Ctx, watch: Watch, request: fn(&str) -> Request) -> CheckResult {
    let (mut w, _, path) = pair(ctx)?;
    set_watch(&mut w, watch, &path)?;
    w.err(&request(&path), ErrorCode::NoWatcher)
}

fn remove_children_none(ctx: &mut Ctx) -> CheckResult {
    no_watcher(ctx, Watch::Data, |p| {
        req::remove_watches(p, WatcherType::Children)
    })
}

fn check_children_none(ctx: &mut Ctx) -> CheckResult {
    no_watcher(ctx, Watch::Data, |p| {
        req::check_watches(p, WatcherType::Children)
    })
}

/// Sets `watch`, removes watches of type `remove` if given, makes `change` from another
/// session: the watcher gets `want` on the znode, or (`None`) nothing.
fn trigger(
    ctx: &mut Ctx,
    watch: Watch,
    remove: Option<WatcherType>,
    change: Change,
    want: Option<EventType>,
) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    set_watch(&mut w, watch, &path)?;
    if let Some(kind) = remove {
        w.ok(&req::remove_watches(&path, kind))?;
    }
    match change {
        Change::SameData => c.set_data(&path, b"", -1).map(drop)?,
        Change::SetData => c.set_data(&path, b"1", -1).map(drop)?,
        Change::Delete => c.delete(&path)?,
        Change::CreateChild => c
            .create(&format!("{path}/c"), b"", CreateMode::Persistent)
            .map(drop)?,
    }
    match want {
        Some(kind) => expect_event(&mut w, kind, &path),
        None => w.no_event(&format!("no event for {watch:?} watch on {change:?}")),
    }
}

/// One check function per trigger case.
macro_rules! triggers {
    ($($name:ident => $watch:ident, $remove:expr, $change:ident, $want:expr;)*) => {
        $(fn $name(ctx: &mut Ctx) -> CheckResult {
            trigger(ctx, Watch::$watch, $remove, Change::$change, $want)
        })*
    };
}

triggers! {
    data_deleted => Data, None, Delete, Some(EventType::NodeDeleted);
    data_same_data => Data, None, SameData, Some(EventType::NodeDataChanged);
    exists_deleted => Exist, None, Delete, Some(EventType::NodeDeleted);
    exists_not_on_child => Exist, None, CreateChild, None;
    child_deleted => Child, None, Delete, Some(EventType::NodeDeleted);
    child_not_on_data => Child, None, SetData, None;
    recursive_self => Recursive, None, SetData, Some(EventType::NodeDataChanged);
    remove_children => Child, Some(WatcherType::Children), CreateChild, None;
    remove_exists_as_data => Exist, Some(WatcherType::Data), SetData, None;
}

fn data_failed_write(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    c.err(&req::set_data(&path, b"x", 9), ErrorCode::BadVersion)?;
    w.no_event("no event: the write was refused")
}

/// A read with watch on a missing znode: NONODE, and no notification once it is created.
fn missing_no_watch(ctx: &mut Ctx, read: fn(&str) -> Request) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let missing = format!("{path}/later");
    w.err(&read(&missing), ErrorCode::NoNode)?;
    c.create(&missing, b"", CreateMode::Persistent)?;
    c.set_data(&missing, b"1", -1)?;
    w.no_event("no watch left by a read that failed with NONODE")
}

fn get_data_missing(ctx: &mut Ctx) -> CheckResult {
    missing_no_watch(ctx, |p| req::get_data(p, true))
}

fn get_children_missing(ctx: &mut Ctx) -> CheckResult {
    missing_no_watch(ctx, |p| req::get_children(p, true))
}

fn persistent_child_deleted(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let child = format!("{path}/c");
    c.create(&child, b"", CreateMode::Persistent)?;
    w.ok(&req::add_watch(&path, AddWatchMode::Persistent))?;
    c.delete(&child)?;
    expect_event(&mut w, EventType::NodeChildrenChanged, &path)
}

fn persistent_survives_delete(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.ok(&req::add_watch(&path, AddWatchMode::Persistent))?;
    c.delete(&path)?;
    expect_event(&mut w, EventType::NodeDeleted, &path)?;
    c.create(&path, b"", CreateMode::Persistent)?;
    expect_event(&mut w, EventType::NodeCreated, &path)
}

fn recursive_ephemeral_close(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let eph = format!("{path}/e");
    c.create(&eph, b"", CreateMode::Ephemeral)?;
    w.ok(&req::add_watch(&path, AddWatchMode::PersistentRecursive))?;
    c.close()?;
    expect_event(&mut w, EventType::NodeDeleted, &eph)
}

fn recursive_missing_root(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let root = format!("{path}/later");
    w.ok(&req::add_watch(&root, AddWatchMode::PersistentRecursive))?;
    c.create(&root, b"", CreateMode::Persistent)?;
    expect_event(&mut w, EventType::NodeCreated, &root)?;
    let child = format!("{root}/c");
    c.create(&child, b"", CreateMode::Persistent)?;
    expect_event(&mut w, EventType::NodeCreated, &child)
}

fn remove_any(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    w.children(&path, true)?;
    w.ok(&req::remove_watches(&path, WatcherType::Any))?;
    c.set_data(&path, b"1", -1)?;
    c.create(&format!("{path}/c"), b"", CreateMode::Persistent)?;
    w.no_event("no event from removed watches")
}

fn remove_missing_path(ctx: &mut Ctx) -> CheckResult {
    let (mut w, _, path) = pair(ctx)?;
    w.err(
        &req::remove_watches(&format!("{path}/missing"), WatcherType::Any),
        ErrorCode::NoWatcher,
    )
}

fn remove_other_session(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    let mut other = ctx.session()?;
    w.get_data(&path, true)?;
    other.get_data(&path, true)?;
    other.ok(&req::remove_watches(&path, WatcherType::Data))?;
    c.set_data(&path, b"1", -1)?;
    expect_event(&mut w, EventType::NodeDataChanged, &path)
}

fn check_children(ctx: &mut Ctx) -> CheckResult {
    let (mut w, _, path) = pair(ctx)?;
    w.children(&path, true)?;
    let (h, _) = w.call(&req::check_watches(&path, WatcherType::Children))?;
    ensure_eq("checkWatches err", h.error_code(), ErrorCode::Ok)
}

fn set_watches(zxid: i64, data: Vec<String>, exist: Vec<String>) -> Request {
    Request::SetWatches(SetWatches {
        relative_zxid: zxid,
        data_watches: data,
        exist_watches: exist,
        child_watches: vec![],
    })
}

fn set_watches_rearmed(ctx: &mut Ctx) -> CheckResult {
    let (mut c, path, _, id, pw) = watched_then_dropped(ctx)?;
    let stat = c.set_data(&path, b"before", -1)?;
    let sw = set_watches(stat.mzxid, vec![path.clone()], vec![]);
    let mut conn = reattach(ctx, id, &pw, &sw)?;
    conn.no_event("no event: nothing changed after the zxid given")?;
    c.set_data(&path, b"after", -1)?;
    expect_event(&mut conn, EventType::NodeDataChanged, &path)
}

fn set_watches_still_missing(ctx: &mut Ctx) -> CheckResult {
    let (mut c, path, seen, id, pw) = watched_then_dropped(ctx)?;
    let missing = format!("{path}/later");
    let sw = set_watches(seen, vec![], vec![missing.clone()]);
    let mut conn = reattach(ctx, id, &pw, &sw)?;
    conn.no_event("no event: the znode is still missing")?;
    c.create(&missing, b"", CreateMode::Persistent)?;
    expect_event(&mut conn, EventType::NodeCreated, &missing)
}

fn set_watches2_recursive(ctx: &mut Ctx) -> CheckResult {
    let (mut c, path, seen, id, pw) = watched_then_dropped(ctx)?;
    let sw = Request::SetWatches2(SetWatches2 {
        relative_zxid: seen,
        data_watches: vec![],
        exist_watches: vec![],
        child_watches: vec![],
        persistent_watches: vec![],
        persistent_recursive_watches: vec![path.clone()],
    });
    let mut conn = reattach(ctx, id, &pw, &sw)?;
    let child = format!("{path}/c");
    c.create(&child, b"", CreateMode::Persistent)?;
    expect_event(&mut conn, EventType::NodeCreated, &child)?;
    c.set_data(&child, b"1", -1)?;
    expect_event(&mut conn, EventType::NodeDataChanged, &child)
}

/// The session sends `write`: the first frame after it must be the notification `want`
/// on `path`, then the write's reply.
fn notification_first(
    conn: &mut Conn,
    write: &Request,
    want: EventType,
    path: &str,
) -> CheckResult {
    let x = conn.send(write)?;
    let first = conn
        .recv_frame()?
        .ok_or_else(|| fail("a notification", "the server closed the connection"))?;
    let xid = first
        .get(..4)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    ensure_eq("xid of the first frame after the write", xid, Some(-1))?;
    let (_, ev) = zk_proto::decode_notification(first)
        .map_err(|e| fail("a well-formed notification", e.to_string()))?;
    ensure_eq(
        "notification",
        (ev.event_type, ev.path.as_str()),
        (want, path),
    )?;
    let (h, _) = conn.recv(x, write.op_code())?;
    ensure_eq("the write's err", h.error_code(), ErrorCode::Ok)
}

fn before_reply_child(ctx: &mut Ctx) -> CheckResult {
    let (mut w, _, path) = pair(ctx)?;
    w.children(&path, true)?;
    let create = req::create(&format!("{path}/c"), b"", CreateMode::Persistent);
    notification_first(&mut w, &create, EventType::NodeChildrenChanged, &path)
}

fn before_reply_delete(ctx: &mut Ctx) -> CheckResult {
    let (mut w, _, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    notification_first(
        &mut w,
        &req::delete(&path, -1),
        EventType::NodeDeleted,
        &path,
    )
}

fn set_and_create(path: &str, version: i32) -> Request {
    Request::Multi(MultiRequest {
        ops: vec![
            MultiOp::SetData(SetDataRequest {
                path: path.into(),
                data: req::data(b"m"),
                version,
            }),
            MultiOp::Create(req::create_record(
                &format!("{path}/c"),
                None,
                zk_proto::Acl::open_unsafe(),
                CreateMode::Persistent,
            )),
        ],
    })
}

fn multi_fires(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    w.children(&path, true)?;
    let (h, _) = c.call(&set_and_create(&path, -1))?;
    ensure_eq("multi err", h.error_code(), ErrorCode::Ok)?;
    w.ok(&req::exists("/", false))?;
    let mut got: Vec<(i32, String)> = w
        .queued_events()
        .into_iter()
        .map(|e| (e.event_type.code(), e.path))
        .collect();
    got.sort();
    let want = vec![
        (EventType::NodeDataChanged.code(), path.clone()),
        (EventType::NodeChildrenChanged.code(), path),
    ];
    ensure_eq("notifications (type, path) after the multi", got, want)
}

fn multi_failed(ctx: &mut Ctx) -> CheckResult {
    let (mut w, mut c, path) = pair(ctx)?;
    w.get_data(&path, true)?;
    w.children(&path, true)?;
    // The setData's version is wrong: nothing is applied.
    let first_error = match c.call(&set_and_create(&path, 7))? {
        (_, Some(zk_proto::Response::Multi(m))) => m.first_error(),
        (h, _) => Some((0, h.error_code())),
    };
    ensure_eq(
        "the failing operation",
        first_error,
        Some((0, ErrorCode::BadVersion)),
    )?;
    w.no_event("no event from a multi that was not applied")
}
