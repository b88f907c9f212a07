//! Read-only mode (`--read-only HOST:PORT`): a member with `readonlymode.enabled` that has
//! lost its quorum serves clients that allow read-only connections, reads only.

use std::net::SocketAddr;

use zk_proto::{ConnectRequest, CreateMode, ErrorCode, MultiOp, MultiRequest, Request};

use crate::{
    check::{ensure, fail, skip, Area, Check, CheckResult, Finding},
    ctx::{connect_request, Conn, Ctx, Ending, SESSION_TIMEOUT_MS},
    req,
};

const GUIDE_RO: &str = "Programmer's Guide: ZooKeeper Sessions (read-only mode, canBeReadOnly)";
const JUTE_RO: &str = "zookeeper.jute: ConnectRequest.readOnly / ConnectResponse.readOnly";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::ReadOnly, "read-only";
    "connect", "a connect that allows read-only gets a session with readOnly true", JUTE_RO, connect;
    "reads", "getData, exists and getChildren are served", GUIDE_RO, reads;
    "writes", "create, setData, delete and setACL fail with NOTREADONLY", GUIDE_RO, writes;
    "multi", "a multi with a write fails with NOTREADONLY", GUIDE_RO, multi;
    "multi-read", "multiRead is served", GUIDE_RO, multi_read;
    "ping", "a ping is answered", GUIDE_RO, ping;
    "refuses-read-write", "a connect that does not allow read-only is closed without a session", GUIDE_RO, refuses_read_write;
    "reattach", "a read-only session re-attaches on a new connection with its password", GUIDE_RO, reattach;
    "close", "closeSession is answered and the connection closed", GUIDE_RO, close;
);

fn member(ctx: &Ctx) -> Result<SocketAddr, Finding> {
    ctx.setup().read_only.ok_or_else(|| {
        skip("needs a member without its quorum, readonlymode.enabled: --read-only HOST:PORT")
    })
}

fn ro_request() -> ConnectRequest {
    ConnectRequest {
        read_only: true,
        ..connect_request(0, &[0; 16], SESSION_TIMEOUT_MS)
    }
}

/// A read-only session on the read-only member.
fn session(ctx: &mut Ctx) -> Result<Conn, Finding> {
    let addr = member(ctx)?;
    let mut conn = ctx.connect_to(addr)?;
    let resp = conn.handshake_with(&ro_request())?;
    ensure(
        !resp.is_expired() && resp.session_id != 0,
        "a session (timeout > 0, a session id)",
        || format!("{resp:?}"),
    )?;
    ensure(
        resp.read_only,
        "readOnly true in the ConnectResponse",
        || format!("{resp:?}"),
    )?;
    Ok(conn)
}

fn connect(ctx: &mut Ctx) -> CheckResult {
    session(ctx)?.close()
}

fn reads(ctx: &mut Ctx) -> CheckResult {
    let mut conn = session(ctx)?;
    conn.get_data("/", false)?;
    let children = conn.children("/", false)?;
    ensure(
        children.iter().any(|c| c == "zookeeper"),
        "/zookeeper among the root's children",
        || format!("{children:?}"),
    )?;
    ensure(
        conn.exists("/zookeeper", false)?.is_some(),
        "exists /zookeeper",
        || "none".into(),
    )?;
    conn.close()
}

fn writes(ctx: &mut Ctx) -> CheckResult {
    let mut conn = session(ctx)?;
    let path = ctx.path("w");
    conn.err(
        &req::create(&path, b"", CreateMode::Persistent),
        ErrorCode::NotReadOnly,
    )?;
    conn.err(&req::set_data("/", b"x", -1), ErrorCode::NotReadOnly)?;
    conn.err(&req::delete(&path, -1), ErrorCode::NotReadOnly)?;
    conn.err(
        &req::set_acl(&path, zk_proto::Acl::open_unsafe(), -1),
        ErrorCode::NotReadOnly,
    )?;
    conn.close()
}

fn multi(ctx: &mut Ctx) -> CheckResult {
    let mut conn = session(ctx)?;
    let op = MultiOp::Create(req::create_record(
        &ctx.path("m"),
        None,
        zk_proto::Acl::open_unsafe(),
        CreateMode::Persistent,
    ));
    conn.err(
        &Request::Multi(MultiRequest { ops: vec![op] }),
        ErrorCode::NotReadOnly,
    )?;
    conn.close()
}

fn multi_read(ctx: &mut Ctx) -> CheckResult {
    let mut conn = session(ctx)?;
    let op = MultiOp::GetChildren(zk_proto::GetChildrenRequest {
        path: "/".into(),
        watch: false,
    });
    conn.ok(&Request::MultiRead(MultiRequest { ops: vec![op] }))?;
    conn.close()
}

fn ping(ctx: &mut Ctx) -> CheckResult {
    let mut conn = session(ctx)?;
    conn.send_with_xid(zk_proto::xid::PING, &Request::Ping)?;
    let (h, _) = conn.recv(zk_proto::xid::PING, zk_proto::OpCode::Ping)?;
    ensure(h.err == 0, "ping reply err 0", || h.err.to_string())?;
    conn.close()
}

fn refuses_read_write(ctx: &mut Ctx) -> CheckResult {
    let addr = member(ctx)?;
    let mut conn = ctx.connect_to(addr)?;
    conn.send_connect(&connect_request(0, &[0; 16], SESSION_TIMEOUT_MS))?;
    match conn.ending()? {
        Ending::Closed => Ok(()),
        Ending::Frame(f) => Err(fail(
            "the connection closed, no ConnectResponse",
            format!("a frame of {} bytes", f.len()),
        )),
    }
}

fn reattach(ctx: &mut Ctx) -> CheckResult {
    let first = session(ctx)?;
    let addr = member(ctx)?;
    let mut second = ctx.connect_to(addr)?;
    let resp = second.handshake_with(&ConnectRequest {
        read_only: true,
        ..connect_request(first.session_id(), &first.password(), SESSION_TIMEOUT_MS)
    })?;
    ensure(
        !resp.is_expired() && resp.session_id == first.session_id(),
        "the same session, re-attached (timeout > 0)",
        || format!("{resp:?}"),
    )?;
    second.exists("/", false)?;
    second.close()
}

fn close(ctx: &mut Ctx) -> CheckResult {
    session(ctx)?.close()
}
