//! Ordering, opcode by opcode: each opcode pipelined with reads is answered in request
//! order (reads, writes, sync and the session-local opcodes take different paths through a
//! server), and a session's reads see its own earlier writes of each kind.

use zk_proto::{
    Acl, AddWatchMode, CreateMode, ErrorCode, GetAllChildrenNumberRequest, GetDataRequest,
    GetEphemeralsRequest, Id, MultiOp, MultiRequest, OpCode, Perms, Request, Response,
    SetDataRequest, WatcherType,
};

use crate::{
    check::{ensure, ensure_eq, fail, Area, Check, CheckResult},
    ctx::{unexpected, Conn, Ctx},
    req,
};

const FIFO: &str = "Programmer's Guide: ZooKeeper guarantees (FIFO client order)";
const RYW: &str = "Programmer's Guide: ZooKeeper guarantees (sequential consistency)";

/// The checks of this part of the area.
pub const CHECKS: &[Check] = checks!(Area::Ordering, "ordering";
    "pipelined.create", "8 pipelined creates between reads are answered in request order", FIFO, p_create;
    "pipelined.create2", "8 pipelined create2s between reads are answered in request order", FIFO, p_create2;
    "pipelined.create-container", "8 pipelined createContainers between reads are answered in request order", FIFO, p_create_container;
    "pipelined.delete", "8 pipelined deletes between reads are answered in request order", FIFO, p_delete;
    "pipelined.set-data", "8 pipelined setData between reads are answered in request order", FIFO, p_set_data;
    "pipelined.exists", "8 pipelined exists between reads are answered in request order", FIFO, p_exists;
    "pipelined.get-data", "8 pipelined getData between reads are answered in request order", FIFO, p_get_data;
    "pipelined.get-children", "8 pipelined getChildren between reads are answered in request order", FIFO, p_get_children;
    "pipelined.get-children2", "8 pipelined getChildren2 between reads are answered in request order", FIFO, p_get_children2;
    "pipelined.get-acl", "8 pipelined getACLs between reads are answered in request order", FIFO, p_get_acl;
    "pipelined.set-acl", "8 pipelined setACLs between reads are answered in request order", FIFO, p_set_acl;
    "pipelined.sync", "8 pipelined syncs between reads are answered in request order", FIFO, p_sync;
    "pipelined.multi", "8 pipelined multis between reads are answered in request order", FIFO, p_multi;
    "pipelined.multi-read", "8 pipelined multiReads between reads are answered in request order", FIFO, p_multi_read;
    "pipelined.get-all-children-number", "8 pipelined getAllChildrenNumbers between reads are answered in request order", FIFO, p_all_children;
    "pipelined.get-ephemerals", "8 pipelined getEphemerals between reads are answered in request order", FIFO, p_get_ephemerals;
    "pipelined.add-watch", "8 pipelined addWatches between reads are answered in request order", FIFO, p_add_watch;
    "pipelined.remove-watches", "8 pipelined removeWatches (each NOWATCHER) between reads are answered in request order", FIFO, p_remove_watches;
    "pipelined.check-watches", "8 pipelined checkWatches (each NOWATCHER) between reads are answered in request order", FIFO, p_check_watches;
    "pipelined.who-am-i", "8 pipelined whoAmIs between reads are answered in request order", FIFO, p_who_am_i;
    "pipelined.errors", "8 pipelined failing getData (NONODE) between reads are answered in request order", FIFO, p_errors;
    "pipelined.close", "requests pipelined before closeSession are all answered, in order, before its reply", FIFO, pipelined_close;
    "read-your-writes.create", "a pipelined getChildren sees the child the session created just before", RYW, ryw_create;
    "read-your-writes.delete", "a pipelined getChildren no longer lists the child the session deleted just before", RYW, ryw_delete;
    "read-your-writes.set-acl", "a pipelined getACL sees the ACL the session set just before", RYW, ryw_set_acl;
    "read-your-writes.multi", "a pipelined getData sees the data a multi of the session set just before", RYW, ryw_multi;
);

/// How many of the opcode a pipeline sends.
const N: usize = 8;

/// A parent with children `c0`..`c7`; the requests of a pipelined case act on it.
fn parent(ctx: &mut Ctx) -> Result<(Conn, String), crate::Finding> {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    conn.create(&path, b"", CreateMode::Persistent)?;
    for i in 0..N {
        conn.create(&format!("{path}/c{i}"), b"", CreateMode::Persistent)?;
    }
    Ok((conn, path))
}

/// Sends `build(parent, i)` for i in 0..8, each followed by a getData of the parent, without
/// waiting; then reads every reply, which must come in order with the error code `want`
/// (Ok for the reads).
fn pipelined(ctx: &mut Ctx, build: fn(&str, usize) -> Request, want: ErrorCode) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let mut sent = Vec::new();
    for i in 0..N {
        let r = build(&path, i);
        sent.push((conn.send(&r)?, r.op_code(), want));
        let read = req::get_data(&path, false);
        sent.push((conn.send(&read)?, OpCode::GetData, ErrorCode::Ok));
    }
    for (x, op, want) in sent {
        let (h, _) = conn.recv(x, op)?;
        ensure(
            h.error_code() == want,
            format!("the reply to xid {x} ({op:?}) with {want:?}"),
            || format!("{:?}", h.error_code()),
        )?;
    }
    Ok(())
}

fn child(path: &str, i: usize) -> String {
    format!("{path}/c{i}")
}

fn new_child(path: &str, i: usize) -> String {
    format!("{path}/new{i}")
}

fn b_create(p: &str, i: usize) -> Request {
    req::create(&new_child(p, i), b"", CreateMode::Persistent)
}
fn b_create2(p: &str, i: usize) -> Request {
    req::create2(&new_child(p, i), b"", CreateMode::Persistent)
}
fn b_create_container(p: &str, i: usize) -> Request {
    Request::CreateContainer(req::create_record(
        &new_child(p, i),
        None,
        Acl::open_unsafe(),
        CreateMode::Container,
    ))
}
fn b_delete(p: &str, i: usize) -> Request {
    req::delete(&child(p, i), 0)
}
fn b_set_data(p: &str, i: usize) -> Request {
    req::set_data(&child(p, i), b"v", 0)
}
fn b_exists(p: &str, i: usize) -> Request {
    req::exists(&child(p, i), false)
}
fn b_get_data(p: &str, i: usize) -> Request {
    req::get_data(&child(p, i), false)
}
fn b_get_children(p: &str, _: usize) -> Request {
    req::get_children(p, false)
}
fn b_get_children2(p: &str, _: usize) -> Request {
    req::get_children2(p, false)
}
fn b_get_acl(p: &str, i: usize) -> Request {
    req::get_acl(&child(p, i))
}
fn b_set_acl(p: &str, i: usize) -> Request {
    req::set_acl(&child(p, i), Acl::open_unsafe(), 0)
}
fn b_sync(p: &str, i: usize) -> Request {
    req::sync(&child(p, i))
}
fn b_multi(p: &str, i: usize) -> Request {
    Request::Multi(MultiRequest {
        ops: vec![MultiOp::SetData(SetDataRequest {
            path: child(p, i),
            data: req::data(b"m"),
            version: 0,
        })],
    })
}
fn b_multi_read(p: &str, i: usize) -> Request {
    Request::MultiRead(MultiRequest {
        ops: vec![MultiOp::GetData(GetDataRequest {
            path: child(p, i),
            watch: false,
        })],
    })
}
fn b_all_children(p: &str, _: usize) -> Request {
    Request::GetAllChildrenNumber(GetAllChildrenNumberRequest { path: p.into() })
}
fn b_get_ephemerals(p: &str, _: usize) -> Request {
    Request::GetEphemerals(GetEphemeralsRequest {
        prefix_path: p.into(),
    })
}
fn b_add_watch(p: &str, i: usize) -> Request {
    req::add_watch(&child(p, i), AddWatchMode::Persistent)
}
fn b_remove_watches(p: &str, i: usize) -> Request {
    req::remove_watches(&child(p, i), WatcherType::Any)
}
fn b_check_watches(p: &str, i: usize) -> Request {
    req::check_watches(&child(p, i), WatcherType::Any)
}
fn b_who_am_i(_: &str, _: usize) -> Request {
    Request::WhoAmI
}
fn b_missing(p: &str, i: usize) -> Request {
    req::get_data(&format!("{p}/missing{i}"), false)
}

/// One check function per pipelined opcode.
macro_rules! cases {
    ($($name:ident => $build:ident, $want:ident;)*) => {
        $(fn $name(ctx: &mut Ctx) -> CheckResult { pipelined(ctx, $build, ErrorCode::$want) })*
    };
}

cases! {
    p_create => b_create, Ok;
    p_create2 => b_create2, Ok;
    p_create_container => b_create_container, Ok;
    p_delete => b_delete, Ok;
    p_set_data => b_set_data, Ok;
    p_exists => b_exists, Ok;
    p_get_data => b_get_data, Ok;
    p_get_children => b_get_children, Ok;
    p_get_children2 => b_get_children2, Ok;
    p_get_acl => b_get_acl, Ok;
    p_set_acl => b_set_acl, Ok;
    p_sync => b_sync, Ok;
    p_multi => b_multi, Ok;
    p_multi_read => b_multi_read, Ok;
    p_all_children => b_all_children, Ok;
    p_get_ephemerals => b_get_ephemerals, Ok;
    p_add_watch => b_add_watch, Ok;
    p_remove_watches => b_remove_watches, NoWatcher;
    p_check_watches => b_check_watches, NoWatcher;
    p_who_am_i => b_who_am_i, Ok;
    p_errors => b_missing, NoNode;
}

fn pipelined_close(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let mut sent = Vec::new();
    for i in 0..N {
        sent.push(conn.send(&b_set_data(&path, i))?);
    }
    let close = conn.send(&Request::CloseSession)?;
    for x in sent {
        let (h, _) = conn.recv(x, OpCode::SetData)?;
        ensure_eq("setData err", h.error_code(), ErrorCode::Ok)?;
    }
    conn.recv(close, OpCode::CloseSession)?;
    conn.expect_closed("the server closes the connection after closeSession")
}

/// Sends `write`, then `read` at once; the read's reply body.
fn write_then_read(
    conn: &mut Conn,
    write: &Request,
    read: &Request,
) -> Result<Response, crate::Finding> {
    let w = conn.send(write)?;
    let r = conn.send(read)?;
    let (h, _) = conn.recv(w, write.op_code())?;
    ensure_eq("the write's err", h.error_code(), ErrorCode::Ok)?;
    let (h, body) = conn.recv(r, read.op_code())?;
    ensure_eq("the read's err", h.error_code(), ErrorCode::Ok)?;
    body.ok_or_else(|| fail("a reply body to the read", "none"))
}

fn children_after(ctx: &mut Ctx, write: fn(&str, usize) -> Request, want: usize) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    match write_then_read(
        &mut conn,
        &write(&path, 0),
        &req::get_children(&path, false),
    )? {
        Response::GetChildren(c) => ensure_eq("number of children", c.children.len(), want),
        other => Err(unexpected("a GetChildrenResponse", &other)),
    }
}

fn ryw_create(ctx: &mut Ctx) -> CheckResult {
    children_after(ctx, b_create, N + 1)
}

fn ryw_delete(ctx: &mut Ctx) -> CheckResult {
    children_after(ctx, b_delete, N - 1)
}

fn ryw_set_acl(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let acl = vec![Acl::new(Perms::ALL, Id::new("ip", "127.0.0.1"))];
    let target = child(&path, 0);
    let write = req::set_acl(&target, acl.clone(), -1);
    match write_then_read(&mut conn, &write, &req::get_acl(&target))? {
        Response::GetAcl(g) => ensure_eq("acl", g.acl, acl),
        other => Err(unexpected("a GetACLResponse", &other)),
    }
}

fn ryw_multi(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let read = req::get_data(&child(&path, 3), false);
    match write_then_read(&mut conn, &b_multi(&path, 3), &read)? {
        Response::GetData(d) => ensure_eq("data", d.data.as_deref(), Some(&b"m"[..])),
        other => Err(unexpected("a GetDataResponse", &other)),
    }
}
