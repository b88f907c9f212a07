//! Handshake and sessions.

use zk_proto::{ConnectRequest, CreateMode, Request};

use zk_proto::jute::Record;

use crate::{
    check::{ensure, ensure_eq, fail, Area, Check, CheckResult},
    ctx::{connect_request, Ctx, Ending, SESSION_TIMEOUT_MS},
    req,
};

const BUG_WRONG_PASSWORD: &str = "ZooKeeper, seen on 3.8.0 (the code is the same in later \
releases; we know of no JIRA issue): ZooKeeperServer.processConnectRequest closes the session's \
current connection (CLIENT_RECONNECT) before reopenSession checks the password, so anyone who \
knows a session id can cut its owner off (the session survives; the owner reconnects). \
Reproduce: session S on connection A; connect B with S's id and a wrong password: B is \
refused, and A is closed";
const GUIDE_SESSIONS: &str = "Programmer's Guide: ZooKeeper Sessions";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Handshake, "handshake";
    "new-session", "a new session gets an id, a 16-byte password and a timeout", "zookeeper.jute: ConnectResponse", new_session;
    "timeout-negotiated", "the negotiated timeout is the request clamped to the server's bounds", GUIDE_SESSIONS, timeout_negotiated;
    "ping", "a ping (xid -2) is answered with xid -2", "zookeeper.jute: RequestHeader (ping)", ping;
    "reattach", "a session re-attaches on a new connection with its password, keeping its ephemerals", GUIDE_SESSIONS, reattach;
    "takeover-closes-old", "the old connection is closed when another takes its session over", GUIDE_SESSIONS, takeover_closes_old;
    "wrong-password", "re-attach with a wrong password is refused (timeout 0) and closed", GUIDE_SESSIONS, wrong_password;
    "wrong-password.spares-owner", "a re-attach with a wrong password leaves the session's own connection open", GUIDE_SESSIONS, wrong_password_spares_owner, bug = BUG_WRONG_PASSWORD;
    "unknown-session", "re-attach to a session that never existed is refused as expired", GUIDE_SESSIONS, unknown_session;
    "close", "closeSession is answered, the socket closed, the ephemerals deleted", GUIDE_SESSIONS, close;
    "close.spares-others", "closing one session leaves another session's ephemerals and connection alone", GUIDE_SESSIONS, close_spares_others;
    "session-ids-unique", "sessions opened one after another get different ids and passwords", GUIDE_SESSIONS, session_ids_unique;
    "closed-session-expired", "a closed session cannot be re-attached", GUIDE_SESSIONS, closed_session_expired;
    "expiry", "a session without a connection expires after its timeout: its ephemerals go, re-attach is refused", GUIDE_SESSIONS, expiry;
    "zxid-ahead", "a client that has seen a zxid ahead of the server is not given a session", "Programmer's Guide: ZooKeeper Sessions (lastZxidSeen)", zxid_ahead;
    "read-only-flag", "a read-write server answers a readOnly connect with readOnly false", "zookeeper.jute: ConnectRequest.readOnly", read_only_flag;
);

fn new_session(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.connect()?;
    let resp = conn.handshake(0, &[0; 16], SESSION_TIMEOUT_MS)?;
    ensure_eq("protocolVersion", resp.protocol_version, 0)?;
    ensure(resp.session_id != 0, "a non-zero session id", || "0".into())?;
    ensure(resp.timeout > 0, "a positive timeout", || {
        resp.timeout.to_string()
    })?;
    ensure_eq("password length", resp.passwd.len(), 16)?;
    conn.close()
}

fn negotiate(ctx: &mut Ctx, asked: i32) -> Result<i32, crate::Finding> {
    let mut conn = ctx.connect()?;
    let resp = conn.handshake(0, &[0; 16], asked)?;
    conn.close()?;
    Ok(resp.timeout)
}

fn timeout_negotiated(ctx: &mut Ctx) -> CheckResult {
    let low = negotiate(ctx, 1)?;
    let high = negotiate(ctx, i32::MAX)?;
    ensure(
        0 < low && low <= high,
        "0 < minSessionTimeout <= maxSessionTimeout",
        || format!("asking 1 ms gave {low}, asking i32::MAX gave {high}"),
    )?;
    ensure(low > 1, "a 1 ms request raised to the minimum", || {
        format!("{low}")
    })?;
    ensure(
        high < i32::MAX,
        "an i32::MAX request lowered to the maximum",
        || format!("{high}"),
    )?;
    let mid = low + (high - low) / 2 + 1;
    let got = negotiate(ctx, mid)?;
    ensure_eq(
        &format!("timeout for a request of {mid} ms within [{low}, {high}]"),
        got,
        mid.min(high),
    )
}

fn ping(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    conn.send_with_xid(zk_proto::xid::PING, &Request::Ping)?;
    let (h, _) = conn.recv(zk_proto::xid::PING, zk_proto::OpCode::Ping)?;
    ensure_eq("ping reply err", h.err, 0)?;
    conn.close()
}

fn reattach(ctx: &mut Ctx) -> CheckResult {
    let mut first = ctx.session()?;
    let path = ctx.path("eph");
    first.create(&path, b"", CreateMode::Ephemeral)?;
    let mut second = ctx.connect()?;
    let resp = second.handshake(first.session_id(), &first.password(), SESSION_TIMEOUT_MS)?;
    ensure(
        !resp.is_expired(),
        "the session re-attached (timeout > 0)",
        || format!("{resp:?}"),
    )?;
    ensure_eq("session id", resp.session_id, first.session_id())?;
    let stat = second.exists(&path, false)?;
    ensure(
        stat.is_some_and(|s| s.ephemeral_owner == resp.session_id),
        "the session's ephemeral znode still there",
        || format!("{stat:?}"),
    )?;
    second.close()
}

fn takeover_closes_old(ctx: &mut Ctx) -> CheckResult {
    let mut first = ctx.session()?;
    let mut second = ctx.connect()?;
    let resp = second.handshake(first.session_id(), &first.password(), SESSION_TIMEOUT_MS)?;
    ensure(!resp.is_expired(), "the session re-attached", || {
        format!("{resp:?}")
    })?;
    first.expect_closed("the server closes the session's old connection")?;
    second.close()
}

fn wrong_password(ctx: &mut Ctx) -> CheckResult {
    let first = ctx.session()?;
    let mut wrong = first.password().to_vec();
    wrong[0] ^= 0xff;
    let mut second = ctx.connect()?;
    let resp = second.handshake(first.session_id(), &wrong, SESSION_TIMEOUT_MS)?;
    ensure(resp.timeout <= 0, "a refusal: timeout <= 0", || {
        format!("{resp:?}")
    })?;
    second.expect_closed("the server closes a refused connection")
}

fn wrong_password_spares_owner(ctx: &mut Ctx) -> CheckResult {
    let mut first = ctx.session()?;
    let mut wrong = first.password().to_vec();
    wrong[0] ^= 0xff;
    let mut second = ctx.connect()?;
    second.handshake(first.session_id(), &wrong, SESSION_TIMEOUT_MS)?;
    let _ = second.ending();
    first.exists("/", false).map_err(|f| match f {
        crate::Finding::Fail { got, .. } => fail("the owner's connection still served", got),
        other => other,
    })?;
    first.close()
}

fn unknown_session(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.connect()?;
    let resp = conn.handshake(0x0bad_5e55_1000_0001, &[7; 16], SESSION_TIMEOUT_MS)?;
    ensure(resp.timeout <= 0, "a refusal: timeout <= 0", || {
        format!("{resp:?}")
    })?;
    conn.expect_closed("the server closes a refused connection")
}

fn close(ctx: &mut Ctx) -> CheckResult {
    let mut owner = ctx.session()?;
    let path = ctx.path("eph");
    owner.create(&path, b"", CreateMode::Ephemeral)?;
    owner.close()?;
    let mut other = ctx.session()?;
    let stat = other.exists(&path, false)?;
    ensure(
        stat.is_none(),
        "the closed session's ephemeral znode deleted",
        || format!("{stat:?}"),
    )?;
    other.close()
}

fn close_spares_others(ctx: &mut Ctx) -> CheckResult {
    let mut closing = ctx.session()?;
    let mut staying = ctx.session()?;
    let (gone, kept) = (ctx.path("gone"), ctx.path("kept"));
    closing.create(&gone, b"", CreateMode::Ephemeral)?;
    staying.create(&kept, b"", CreateMode::Ephemeral)?;
    closing.close()?;
    // The staying session's own connection still serves it, ephemeral and all.
    let stat = staying.exists(&kept, false)?;
    ensure_eq(
        "ephemeralOwner of the other session's znode",
        stat.map(|s| s.ephemeral_owner),
        Some(staying.session_id()),
    )?;
    ensure(
        staying.exists(&gone, false)?.is_none(),
        "the closed session's ephemeral gone",
        || "it is still there".into(),
    )
}

fn session_ids_unique(ctx: &mut Ctx) -> CheckResult {
    let a = ctx.session()?;
    let b = ctx.session()?;
    ensure(
        a.session_id() != b.session_id() && a.password() != b.password(),
        "two ids and two passwords",
        || format!("{:#x} and {:#x}", a.session_id(), b.session_id()),
    )
}

fn closed_session_expired(ctx: &mut Ctx) -> CheckResult {
    let mut owner = ctx.session()?;
    let (id, pw) = (owner.session_id(), owner.password());
    owner.close()?;
    let mut again = ctx.connect()?;
    let resp = again.handshake(id, &pw, SESSION_TIMEOUT_MS)?;
    ensure(resp.timeout <= 0, "a refusal: timeout <= 0", || {
        format!("{resp:?}")
    })?;
    again.expect_closed("the server closes a refused connection")
}

fn zxid_ahead(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.connect()?;
    conn.send_connect(&ConnectRequest {
        last_zxid_seen: i64::MAX - 1,
        ..connect_request(0, &[0; 16], SESSION_TIMEOUT_MS)
    })?;
    match conn.ending()? {
        Ending::Closed => Ok(()),
        Ending::Frame(f) => {
            let resp =
                <zk_proto::ConnectResponse as Record>::decode_exact(f.clone(), "ConnectResponse");
            match resp {
                Ok(r) if r.is_expired() => {
                    conn.expect_closed("the connection closed after the refusal")
                }
                _ => Err(fail(
                    "the connection closed without a session",
                    format!("a frame {f:02x?}"),
                )),
            }
        }
    }
}

fn read_only_flag(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.connect()?;
    conn.send_connect(&ConnectRequest {
        read_only: true,
        ..connect_request(0, &[0; 16], SESSION_TIMEOUT_MS)
    })?;
    let f = conn
        .recv_frame()?
        .ok_or_else(|| fail("a connect response", "closed"))?;
    let resp =
        <zk_proto::ConnectResponse as Record>::decode_exact(f, "ConnectResponse").map_err(|e| {
            fail(
                "a 37-byte ConnectResponse with the readOnly byte",
                e.to_string(),
            )
        })?;
    ensure(
        !resp.read_only,
        "readOnly false from a read-write server",
        || "true".into(),
    )?;
    conn.session = Some(resp);
    conn.ok(&req::exists("/", false))?;
    conn.close()
}

fn expiry(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.connect()?;
    // The shortest timeout the server allows.
    let resp = conn.handshake(0, &[0; 16], 1)?;
    if resp.timeout > 6_000 {
        return Err(crate::check::skip(format!(
            "the shortest session timeout here is {} ms: too long to wait for",
            resp.timeout
        )));
    }
    let path = ctx.path("eph");
    conn.create(&path, b"", CreateMode::Ephemeral)?;
    let (id, pw) = (conn.session_id(), conn.password());
    drop(conn);
    let mut other = ctx.session()?;
    // The server may take up to twice the timeout (tick rounding) to expire it.
    let deadline = std::time::Instant::now()
        + std::time::Duration::from_millis(3 * resp.timeout as u64 + 1_000);
    while other.exists(&path, false)?.is_some() {
        if std::time::Instant::now() > deadline {
            return Err(fail(
                format!("the ephemeral gone within 3 x {} ms", resp.timeout),
                "it is still there",
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let mut again = ctx.connect()?;
    let resp = again.handshake(id, &pw, SESSION_TIMEOUT_MS)?;
    ensure(resp.is_expired(), "a refusal: timeout <= 0", || {
        format!("{resp:?}")
    })?;
    other.close()
}
