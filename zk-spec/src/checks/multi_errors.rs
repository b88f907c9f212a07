//! multi, operation kind by operation kind: each kind's own error code as a per-op result
//! (with the transaction rolled back), rollback of each kind of write, operations seeing
//! the earlier operations of their transaction, and multiRead's reads.

use zk_proto::{
    Acl, CheckVersionRequest, CreateMode, DeleteRequest, ErrorCode, GetChildrenRequest,
    GetDataRequest, MultiOp, MultiRequest, MultiResponse, MultiResult, Request, Response,
    SetDataRequest,
};

use crate::{
    check::{ensure, ensure_eq, fail, Area, Check, CheckResult, Finding},
    ctx::{Conn, Ctx},
    req,
};

const JUTE: &str = "zookeeper.jute: MultiResponse (ErrorResult per operation)";
const ATOMIC: &str = "Programmer's Guide: multi (atomicity)";

/// The checks of this part of the area.
pub const CHECKS: &[Check] = checks!(Area::Multi, "multi";
    "op-error.create.node-exists", "a multi's create of an existing znode fails with a per-op NODEEXISTS", JUTE, e_create_exists;
    "op-error.create.no-parent", "a multi's create under a missing parent fails with a per-op NONODE", JUTE, e_create_no_parent;
    "op-error.create.ephemeral-parent", "a multi's create under an ephemeral fails with a per-op NOCHILDRENFOREPHEMERALS", JUTE, e_create_ephemeral_parent;
    "op-error.create.invalid-acl", "a multi's create with an empty ACL fails with a per-op INVALIDACL", JUTE, e_create_invalid_acl;
    "op-error.create.bad-path", "a multi's create of a path ending in / fails with a per-op BADARGUMENTS", JUTE, e_create_bad_path;
    "op-error.create2.node-exists", "a multi's create2 of an existing znode fails with a per-op NODEEXISTS", JUTE, e_create2_exists;
    "op-error.create-container.no-parent", "a multi's createContainer under a missing parent fails with a per-op NONODE", JUTE, e_container_no_parent;
    "op-error.delete.no-node", "a multi's delete of a missing znode fails with a per-op NONODE", JUTE, e_delete_no_node;
    "op-error.delete.not-empty", "a multi's delete of a znode with children fails with a per-op NOTEMPTY", JUTE, e_delete_not_empty;
    "op-error.delete.bad-version", "a multi's delete with a wrong version fails with a per-op BADVERSION", JUTE, e_delete_bad_version;
    "op-error.set-data.no-node", "a multi's setData of a missing znode fails with a per-op NONODE", JUTE, e_set_data_no_node;
    "op-error.set-data.bad-version", "a multi's setData with a wrong version fails with a per-op BADVERSION", JUTE, e_set_data_bad_version;
    "op-error.check.no-node", "a multi's check of a missing znode fails with a per-op NONODE", JUTE, e_check_no_node;
    "rollback.set-data", "a rolled-back multi's setData leaves data and version as they were", ATOMIC, rollback_set_data;
    "rollback.delete", "a rolled-back multi's delete leaves the znode in place", ATOMIC, rollback_delete;
    "rollback.to-other-session", "another session never sees a rolled-back multi's create", ATOMIC, rollback_other_session;
    "sees-earlier-ops.create", "a multi's create of a child sees the create of its parent earlier in the multi", ATOMIC, sees_parent;
    "sees-earlier-ops.delete-create", "a multi may delete a znode and create it again", ATOMIC, delete_then_create;
    "sees-earlier-ops.check", "a multi's check sees the version an earlier setData gave", ATOMIC, check_after_set;
    "read.get-children", "multiRead answers getChildren with the children", "zookeeper.jute: MultiResponse (multiRead)", read_children;
    "read.empty", "an empty multiRead is answered with no results", "zookeeper.jute: MultiResponse (multiRead)", read_empty;
);

/// A persistent znode with data "v", version 0, and a connection.
fn setup(ctx: &mut Ctx) -> Result<(Conn, String), Finding> {
    let mut conn = ctx.session()?;
    let path = ctx.path("m");
    conn.create(&path, b"v", CreateMode::Persistent)?;
    Ok((conn, path))
}

fn multi(conn: &mut Conn, ops: Vec<MultiOp>, read: bool) -> Result<MultiResponse, Finding> {
    let m = MultiRequest { ops };
    let r = if read {
        Request::MultiRead(m)
    } else {
        Request::Multi(m)
    };
    match conn.call(&r)? {
        (_, Some(Response::Multi(m))) => Ok(m),
        (h, other) => Err(fail(
            "a MultiResponse",
            format!("err {} body {other:?}", h.err),
        )),
    }
}

fn create(path: &str, mode: CreateMode) -> MultiOp {
    MultiOp::Create(req::create_record(path, None, Acl::open_unsafe(), mode))
}

fn set_data(path: &str, version: i32) -> MultiOp {
    MultiOp::SetData(SetDataRequest {
        path: path.into(),
        data: req::data(b"changed"),
        version,
    })
}

fn delete(path: &str, version: i32) -> MultiOp {
    MultiOp::Delete(DeleteRequest {
        path: path.into(),
        version,
    })
}

fn check(path: &str, version: i32) -> MultiOp {
    MultiOp::Check(CheckVersionRequest {
        path: path.into(),
        version,
    })
}

/// multi [create `m/first`, the op `failing(m)` builds]: results [Ok, `code`], and
/// `m/first` not created.
fn op_error(ctx: &mut Ctx, failing: fn(&str) -> MultiOp, code: ErrorCode) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    // Things the failing ops need: a child, and an ephemeral.
    conn.create(&format!("{path}/full"), b"", CreateMode::Persistent)?;
    conn.create(&format!("{path}/full/c"), b"", CreateMode::Persistent)?;
    conn.create(&format!("{path}/eph"), b"", CreateMode::Ephemeral)?;
    let first = format!("{path}/first");
    let m = multi(
        &mut conn,
        vec![create(&first, CreateMode::Persistent), failing(&path)],
        false,
    )?;
    ensure_eq(
        "results",
        m.results,
        vec![MultiResult::Error(ErrorCode::Ok), MultiResult::Error(code)],
    )?;
    ensure(
        conn.exists(&first, false)?.is_none(),
        "the first op's create rolled back",
        || "it exists".into(),
    )
}

/// One check function per failing op kind.
macro_rules! cases {
    ($($name:ident => |$p:ident| $op:expr, $code:ident;)*) => {
        $(fn $name(ctx: &mut Ctx) -> CheckResult {
            op_error(ctx, |$p| $op, ErrorCode::$code)
        })*
    };
}

cases! {
    e_create_exists => |p| create(&format!("{p}/full"), CreateMode::Persistent), NodeExists;
    e_create_no_parent => |p| create(&format!("{p}/missing/c"), CreateMode::Persistent), NoNode;
    e_create_ephemeral_parent => |p| create(&format!("{p}/eph/c"), CreateMode::Persistent), NoChildrenForEphemerals;
    e_create_invalid_acl => |p| MultiOp::Create(req::create_record(&format!("{p}/x"), None, vec![], CreateMode::Persistent)), InvalidAcl;
    e_create_bad_path => |p| create(&format!("{p}/full/"), CreateMode::Persistent), BadArguments;
    e_create2_exists => |p| MultiOp::Create2(req::create_record(&format!("{p}/full"), None, Acl::open_unsafe(), CreateMode::Persistent)), NodeExists;
    e_container_no_parent => |p| MultiOp::CreateContainer(req::create_record(&format!("{p}/missing/c"), None, Acl::open_unsafe(), CreateMode::Container)), NoNode;
    e_delete_no_node => |p| delete(&format!("{p}/missing"), -1), NoNode;
    e_delete_not_empty => |p| delete(&format!("{p}/full"), -1), NotEmpty;
    e_delete_bad_version => |p| delete(&format!("{p}/full"), 5), BadVersion;
    e_set_data_no_node => |p| set_data(&format!("{p}/missing"), -1), NoNode;
    e_set_data_bad_version => |p| set_data(p, 3), BadVersion;
    e_check_no_node => |p| check(&format!("{p}/missing"), 0), NoNode;
}

/// A failing check after `ops`: the transaction must not apply.
fn rolled_back(conn: &mut Conn, mut ops: Vec<MultiOp>, path: &str) -> CheckResult {
    ops.push(check(path, 99));
    let m = multi(conn, ops, false)?;
    ensure(
        m.first_error().is_some(),
        "the multi failed on its check",
        || format!("{:?}", m.results),
    )
}

fn rollback_set_data(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    rolled_back(&mut conn, vec![set_data(&path, 0)], &path)?;
    let (data, stat) = conn.get_data(&path, false)?;
    ensure_eq(
        "(data, version) after the rollback",
        (data.as_deref(), stat.version),
        (Some(&b"v"[..]), 0),
    )
}

fn rollback_delete(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let child = format!("{path}/c");
    conn.create(&child, b"", CreateMode::Persistent)?;
    rolled_back(&mut conn, vec![delete(&child, 0)], &path)?;
    ensure(
        conn.exists(&child, false)?.is_some(),
        "the child still there",
        || "NONODE".into(),
    )
}

fn rollback_other_session(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let mut other = ctx.session()?;
    let child = format!("{path}/c");
    other.exists(&child, true)?;
    rolled_back(
        &mut conn,
        vec![create(&child, CreateMode::Persistent)],
        &path,
    )?;
    ensure(other.exists(&child, false)?.is_none(), "no child", || {
        "the child exists".into()
    })?;
    other.no_event("no NodeCreated for a rolled-back create")
}

fn sees_parent(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let a = format!("{path}/a");
    let b = format!("{a}/b");
    let ops = vec![
        create(&a, CreateMode::Persistent),
        create(&b, CreateMode::Persistent),
    ];
    let m = multi(&mut conn, ops, false)?;
    ensure_eq("first error", m.first_error(), None)?;
    ensure(
        conn.exists(&b, false)?.is_some(),
        "the child created",
        || "NONODE".into(),
    )
}

fn delete_then_create(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let child = format!("{path}/c");
    conn.create(&child, b"", CreateMode::Persistent)?;
    let before = conn.exists(&child, false)?;
    let ops = vec![delete(&child, 0), create(&child, CreateMode::Persistent)];
    let m = multi(&mut conn, ops, false)?;
    ensure_eq("first error", m.first_error(), None)?;
    let after = conn.exists(&child, false)?;
    ensure(
        matches!((before, after), (Some(b), Some(a)) if a.czxid > b.czxid),
        "the znode created anew (a later czxid)",
        || format!("{before:?} -> {after:?}"),
    )
}

fn check_after_set(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let m = multi(&mut conn, vec![set_data(&path, 0), check(&path, 1)], false)?;
    ensure_eq("first error", m.first_error(), None)
}

fn read_children(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    for c in ["x", "y"] {
        conn.create(&format!("{path}/{c}"), b"", CreateMode::Persistent)?;
    }
    let ops = vec![
        MultiOp::GetChildren(GetChildrenRequest {
            path: path.clone(),
            watch: false,
        }),
        MultiOp::GetData(GetDataRequest {
            path: path.clone(),
            watch: false,
        }),
    ];
    let m = multi(&mut conn, ops, true)?;
    match m.results.as_slice() {
        [MultiResult::GetChildren(c), MultiResult::GetData(d)] => {
            let mut names = c.children.clone();
            names.sort();
            ensure_eq("children", names, vec!["x".to_string(), "y".into()])?;
            ensure_eq("data", d.data.as_deref(), Some(&b"v"[..]))
        }
        other => Err(fail(
            "getChildren and getData results",
            format!("{other:?}"),
        )),
    }
}

fn read_empty(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, _) = setup(ctx)?;
    let m = multi(&mut conn, vec![], true)?;
    ensure_eq("results", m.results, vec![])
}
