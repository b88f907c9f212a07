//! Read-only mode (`--read-only HOST:PORT`): a member with `readonlymode.enabled` that has
//! lost its quorum serves clients that allow read-only connections, reads only.

use std::net::SocketAddr;

use zk_proto::{
    jute::Record, ConnectRequest, ConnectResponse, CreateMode, ErrorCode, MultiOp, MultiRequest,
    ReplyHeader, Request,
};

use crate::{
    check::{ensure, fail, skip, Area, Check, CheckResult, Finding},
    ctx::{connect_request, Conn, Ctx, Ending, SESSION_TIMEOUT_MS},
    req,
};

const GUIDE_RO: &str = "Programmer's Guide: ZooKeeper Sessions (read-only mode, canBeReadOnly)";
const BUG_GLOBAL_SESSION: &str = "ZooKeeper, seen on 3.8.0: a read-only member without \
localSessionsEnabled=true cannot make a (global) session and answers a read-only connect with a \
16-byte reply header (xid 0, err NOTREADONLY) instead of a ConnectResponse, which no client can \
decode; read-only mode needs local sessions (documented upstream by apache/zookeeper \
pull 1922). Reproduce: 3 members with readonlymode.enabled and no local sessions, stop two, \
connect to the third with readOnly true";
/// A ReplyHeader's length: xid, zxid, err.
const REPLY_HEADER_LEN: usize = 16;
const JUTE_RO: &str = "zookeeper.jute: ConnectRequest.readOnly / ConnectResponse.readOnly";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::ReadOnly, "read-only";
    "connect", "a connect that allows read-only gets a ConnectResponse with readOnly true", JUTE_RO, connect, bug = BUG_GLOBAL_SESSION;
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

/// Connects to the read-only member with `request`: the connection, or (inner `Err`) what
/// the member sent in place of a ConnectResponse when it was a reply header.
fn open(ctx: &mut Ctx, request: &ConnectRequest) -> Result<Result<Conn, String>, Finding> {
    let addr = member(ctx)?;
    let mut conn = ctx.connect_to(addr)?;
    conn.send_connect(request)?;
    let frame = conn
        .recv_frame()?
        .ok_or_else(|| fail("a ConnectResponse", "the server closed the connection"))?;
    if frame.len() == REPLY_HEADER_LEN {
        if let Ok(h) = ReplyHeader::decode_exact(frame.clone(), "ReplyHeader") {
            return Ok(Err(format!(
                "a reply header (xid {}, zxid {:#x}, err {:?} ({})) in place of a ConnectResponse",
                h.xid,
                h.zxid,
                h.error_code(),
                h.err
            )));
        }
    }
    let resp = ConnectResponse::decode_exact(frame, "ConnectResponse")
        .map_err(|e| fail("a ConnectResponse record", e.to_string()))?;
    conn.session = Some(resp);
    Ok(Ok(conn))
}

/// A read-only session on the read-only member; skips when the member gives none (which
/// `read-only.connect` reports).
fn session(ctx: &mut Ctx) -> Result<Conn, Finding> {
    match open(ctx, &ro_request())? {
        Ok(conn) => checked(conn),
        Err(got) => Err(skip(format!(
            "the member gives no read-only session (see read-only.connect): {got}"
        ))),
    }
}

/// `conn` when its ConnectResponse gives a read-only session.
fn checked(conn: Conn) -> Result<Conn, Finding> {
    let resp = conn.session.clone().unwrap_or_default();
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
    match open(ctx, &ro_request())? {
        Ok(conn) => checked(conn)?.close(),
        Err(got) => Err(fail("a ConnectResponse with readOnly true", got)),
    }
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
    let request = ConnectRequest {
        read_only: true,
        ..connect_request(first.session_id(), &first.password(), SESSION_TIMEOUT_MS)
    };
    let mut second = open(ctx, &request)?.map_err(|got| fail("a ConnectResponse", got))?;
    let resp = second.session.clone().unwrap_or_default();
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
