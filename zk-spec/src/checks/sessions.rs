//! Sessions moving between the members of an ensemble (`--ensemble`): a session re-attaches
//! on any member with its password, keeps its ephemerals, and its old connection is told.

use std::net::SocketAddr;

use zk_proto::{CreateMode, ErrorCode, Request};

use crate::{
    check::{ensure, ensure_eq, fail, skip, Area, Check, CheckResult, Finding},
    ctx::{Conn, Ctx, Ending, SESSION_TIMEOUT_MS},
    req,
};

const GUIDE_SESSIONS: &str = "Programmer's Guide: ZooKeeper Sessions";
const SESSION_MOVED: &str = "Programmer's Guide: ZooKeeper Sessions; zookeeper.jute: ReplyHeader \
(SESSIONMOVED -118)";

const BUG_MOVED_READS: &str = "ZooKeeper, seen on 3.8.0 (we know of no JIRA issue): only the \
leader checks a session's owner, for writes, so after a session moves to another member its old \
connection stays open and silent and the old member goes on answering its reads (and sync) \
until a write; the Programmer's Guide (SessionMovedException) has the old server close it. \
Reproduce: session S on member A; re-attach S on member B; getData on A's connection is \
answered";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Sessions, "sessions";
    "move", "a session re-attaches on another member with its password, keeping its id and ephemerals", GUIDE_SESSIONS, moves;
    "move.old-connection", "after a move the old member closes the session's old connection or refuses its writes with SESSIONMOVED", SESSION_MOVED, move_old_connection;
    "move.old-connection.reads", "after a move the old member refuses reads on the old connection too (SESSIONMOVED or a close)", SESSION_MOVED, move_old_connection_reads, bug = BUG_MOVED_READS;
    "move.back", "a moved session moves back to the member it came from", GUIDE_SESSIONS, move_back;
    "move.writes", "a moved session's writes on its new member are seen by every member", GUIDE_SESSIONS, move_writes;
    "move.wrong-password", "a re-attach on another member with a wrong password is refused and closed", GUIDE_SESSIONS, move_wrong_password;
    "move.wrong-password.spares-owner", "a refused re-attach on another member leaves the owner's connection served", GUIDE_SESSIONS, move_wrong_password_spares_owner;
    "move.closed", "a session closed on one member cannot be re-attached on another", GUIDE_SESSIONS, move_closed;
    "move.ephemeral-owner", "an ephemeral made after a move is owned by the same session id on every member", GUIDE_SESSIONS, move_ephemeral_owner;
);

/// Two different members: the target first when it is one of them.
fn two_members(ctx: &Ctx) -> Result<(SocketAddr, SocketAddr), Finding> {
    let members = &ctx.setup().ensemble;
    let first = if members.contains(&ctx.addr()) {
        ctx.addr()
    } else {
        *members.first().ok_or_else(|| {
            skip("needs the ensemble's members: --ensemble HOST:PORT,HOST:PORT,...")
        })?
    };
    let second = members
        .iter()
        .copied()
        .find(|m| *m != first)
        .ok_or_else(|| skip("needs two ensemble members: --ensemble HOST:PORT,HOST:PORT,..."))?;
    Ok((first, second))
}

/// Re-attaches `owner`'s session on `addr` with `password`; the new connection and answer.
fn reattach_on(
    ctx: &mut Ctx,
    addr: SocketAddr,
    owner: &Conn,
    password: &[u8],
) -> Result<(Conn, zk_proto::ConnectResponse), Finding> {
    let mut conn = ctx.connect_to(addr)?;
    let resp = conn.handshake(owner.session_id(), password, SESSION_TIMEOUT_MS)?;
    Ok((conn, resp))
}

/// Moves `owner`'s session to `addr`; the new connection, which must have it.
fn move_to(ctx: &mut Ctx, addr: SocketAddr, owner: &Conn) -> Result<Conn, Finding> {
    let (conn, resp) = reattach_on(ctx, addr, owner, &owner.password())?;
    ensure(
        !resp.is_expired(),
        format!("the session re-attached on {addr} (timeout > 0)"),
        || format!("{resp:?}"),
    )?;
    ensure_eq("session id", resp.session_id, owner.session_id())?;
    Ok(conn)
}

fn moves(ctx: &mut Ctx) -> CheckResult {
    let (a, b) = two_members(ctx)?;
    let mut owner = ctx.session_on(a)?;
    let path = ctx.path("eph");
    owner.create(&path, b"", CreateMode::Ephemeral)?;
    let mut moved = move_to(ctx, b, &owner)?;
    // The new member may lag the write: sync first.
    moved.ok(&req::sync(&path))?;
    let stat = moved.exists(&path, false)?;
    ensure(
        stat.is_some_and(|s| s.ephemeral_owner == owner.session_id()),
        "the session's ephemeral znode, seen on the new member",
        || format!("{stat:?}"),
    )?;
    moved.close()
}

/// Moves a session from one member to another, then sends `request` (`what`, for
/// messages) on its old connection: the answer must be SESSIONMOVED, or a close.
fn old_connection_refuses(ctx: &mut Ctx, request: &Request, what: &str) -> CheckResult {
    let (a, b) = two_members(ctx)?;
    let mut owner = ctx.session_on(a)?;
    let mut moved = move_to(ctx, b, &owner)?;
    moved.ok(&req::sync("/"))?;
    let x = match owner.send(request) {
        Ok(x) => x,
        // Already closed: the old connection was told.
        Err(_) => return moved.close(),
    };
    match owner.recv(x, request.op_code()) {
        Ok((h, _)) => ensure(
            h.error_code() == ErrorCode::SessionMoved,
            format!("SESSIONMOVED (-118) or a close for a {what} on the old connection"),
            || format!("an answer: {:?} ({})", h.error_code(), h.err),
        )?,
        Err(Finding::Fail { got, .. }) if got.contains("closed") => {}
        Err(f) => return Err(f),
    }
    moved.close()
}

fn move_old_connection(ctx: &mut Ctx) -> CheckResult {
    // A write through the old member goes to the leader, which knows the session moved.
    // 3.8.0 says nothing to the old connection at the move (it stays open and silent) and
    // closes it at this write.
    let create = req::create(&ctx.path("after-move"), b"", CreateMode::Persistent);
    old_connection_refuses(ctx, &create, "write")
}

fn move_old_connection_reads(ctx: &mut Ctx) -> CheckResult {
    old_connection_refuses(ctx, &req::get_data("/", false), "read")
}

fn move_back(ctx: &mut Ctx) -> CheckResult {
    let (a, b) = two_members(ctx)?;
    let owner = ctx.session_on(a)?;
    let moved = move_to(ctx, b, &owner)?;
    let mut back = move_to(ctx, a, &moved)?;
    back.ok(&req::sync("/"))?;
    back.exists("/", false)?;
    back.close()
}

fn move_writes(ctx: &mut Ctx) -> CheckResult {
    let (a, b) = two_members(ctx)?;
    let owner = ctx.session_on(a)?;
    let mut moved = move_to(ctx, b, &owner)?;
    let path = ctx.path("written");
    moved.create(&path, b"moved", CreateMode::Persistent)?;
    let mut reader = ctx.session_on(a)?;
    reader.ok(&req::sync(&path))?;
    let (data, _) = reader.get_data(&path, false)?;
    ensure_eq(
        "data on the old member",
        data.as_deref(),
        Some(&b"moved"[..]),
    )?;
    reader.close()?;
    moved.close()
}

fn wrong_password(owner: &Conn) -> Vec<u8> {
    let mut wrong = owner.password().to_vec();
    if let Some(b) = wrong.first_mut() {
        *b ^= 0xff;
    }
    wrong
}

fn move_wrong_password(ctx: &mut Ctx) -> CheckResult {
    let (a, b) = two_members(ctx)?;
    let mut owner = ctx.session_on(a)?;
    let (mut refused, resp) = reattach_on(ctx, b, &owner, &wrong_password(&owner))?;
    ensure(resp.timeout <= 0, "a refusal: timeout <= 0", || {
        format!("{resp:?}")
    })?;
    refused.expect_closed("the server closes a refused connection")?;
    owner.close()
}

fn move_wrong_password_spares_owner(ctx: &mut Ctx) -> CheckResult {
    let (a, b) = two_members(ctx)?;
    let mut owner = ctx.session_on(a)?;
    let (mut refused, _) = reattach_on(ctx, b, &owner, &wrong_password(&owner))?;
    let _ = refused.ending();
    owner.exists("/", false).map_err(|f| match f {
        Finding::Fail { got, .. } => fail("the owner's connection still served", got),
        other => other,
    })?;
    owner.close()
}

fn move_closed(ctx: &mut Ctx) -> CheckResult {
    let (a, b) = two_members(ctx)?;
    let mut owner = ctx.session_on(a)?;
    let (id, password) = (owner.session_id(), owner.password());
    owner.close()?;
    let mut conn = ctx.connect_to(b)?;
    let resp = conn.handshake(id, &password, SESSION_TIMEOUT_MS)?;
    ensure(resp.timeout <= 0, "a refusal: timeout <= 0", || {
        format!("{resp:?}")
    })?;
    match conn.ending()? {
        Ending::Closed => Ok(()),
        Ending::Frame(f) => Err(fail(
            "the server closes a refused connection",
            format!("a frame of {} bytes", f.len()),
        )),
    }
}

fn move_ephemeral_owner(ctx: &mut Ctx) -> CheckResult {
    let (a, b) = two_members(ctx)?;
    let owner = ctx.session_on(a)?;
    let mut moved = move_to(ctx, b, &owner)?;
    let path = ctx.path("eph-after");
    moved.create(&path, b"", CreateMode::Ephemeral)?;
    let mut other = ctx.session_on(a)?;
    other.ok(&req::sync(&path))?;
    let stat = other.exists(&path, false)?;
    ensure(
        stat.is_some_and(|s| s.ephemeral_owner == owner.session_id()),
        format!("ephemeralOwner {:#x} on the old member", owner.session_id()),
        || format!("{stat:?}"),
    )?;
    other.close()?;
    moved.ok(&Request::CloseSession).map(drop)
}
