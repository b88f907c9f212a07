//! Node kinds (ephemeral, sequential, container, TTL) and Stat bookkeeping.

use zk_proto::{Acl, CreateMode, CreateTtlRequest, ErrorCode, Request, Response};

use crate::{
    check::{ensure, ensure_eq, fail, skip, Area, Check, CheckResult, Finding},
    ctx::{unexpected, Conn, Ctx},
    req,
};

const GUIDE: &str = "Programmer's Guide: ZooKeeper Data Model (Znodes)";
const SEQ: &str = "Programmer's Guide: Sequence Nodes -- Unique Naming";
const STAT: &str = "zookeeper.jute: StatPersisted";
const TTL: &str = "Programmer's Guide: TTL Nodes";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Nodes, "nodes";
    "ephemeral.owner", "an ephemeral znode's ephemeralOwner is its session id", "Programmer's Guide: Ephemeral Nodes", ephemeral_owner;
    "persistent.owner", "a persistent znode's ephemeralOwner is 0", GUIDE, persistent_owner;
    "sequential.format", "a sequential znode's name ends with the parent's cversion as %010d", SEQ, sequential_format;
    "sequential.counter", "sequence numbers count up and are never reused, even after a delete", SEQ, sequential_counter;
    "sequential.after-plain-delete", "after a plain child's create and delete the next sequence number is still above every earlier one", SEQ, sequential_after_plain_delete;
    "sequential.per-parent", "each parent has its own counter", SEQ, sequential_per_parent;
    "ephemeral-sequential", "an ephemeral sequential znode is both", SEQ, ephemeral_sequential;
    "sequential.trailing-slash", "a sequential create of `parent/` names the child by its number alone", SEQ, sequential_trailing_slash;
    "container.create", "createContainer (19) answers path and Stat (ephemeralOwner 0 to clients) and takes children", "Programmer's Guide: Container Nodes", container_create;
    "ttl.create", "createTTL (21) answers path and the Stat exists reports (ephemeralOwner 0 to clients)", TTL, ttl_create;
    "ttl.zero", "a TTL of 0 is refused with BADARGUMENTS", TTL, ttl_zero;
    "stat.fresh", "a new znode's Stat: versions 0, czxid = mzxid = pzxid, ctime = mtime", "zookeeper.jute: StatPersisted", stat_fresh;
    "stat.parent", "a child's create bumps the parent's cversion and numChildren and sets its pzxid", "zookeeper.jute: StatPersisted", stat_parent;
    "stat.data-length", "dataLength follows setData", "zookeeper.jute: StatPersisted", stat_data_length;
    "sequential.shared-counter", "persistent and ephemeral sequential children of one parent share its counter", SEQ, sequential_shared_counter;
    "sequential.create2", "a sequential create2 answers the numbered name and that znode's Stat", SEQ, sequential_create2;
    "sequential.ephemeral-format", "an ephemeral sequential name ends in 10 digits counting from the parent's creates", SEQ, sequential_ephemeral_format;
    "ephemeral.other-session-deletes", "another session may delete a session's ephemeral", "Programmer's Guide: Ephemeral Nodes", ephemeral_other_deletes;
    "ephemeral.reattach-keeps", "an ephemeral stays while its session re-attaches on another connection", "Programmer's Guide: Ephemeral Nodes", ephemeral_reattach_keeps;
    "stat.set-data", "setData moves mzxid and mtime, never czxid or ctime", STAT, stat_set_data;
    "stat.child-delete", "a child's delete bumps the parent's cversion, lowers numChildren and sets pzxid", STAT, stat_child_delete;
    "stat.set-acl", "setACL bumps aversion only: version, cversion and mzxid stay", STAT, stat_set_acl;
    "stat.child-data", "a child's setData leaves the parent's Stat unchanged", STAT, stat_child_data;
    "stat.null-data", "a znode with null data has dataLength 0", STAT, stat_null_data;
    "stat.version-counts-sets", "version counts every setData, even of the same bytes", STAT, stat_version_counts_sets;
    "container.deleted-after-last-child", "a container is deleted once its last child is gone", "Programmer's Guide: Container Nodes", container_deleted;
    "ttl.expires", "a TTL node unmodified for its TTL and childless is deleted", TTL, ttl_expires;
);

fn parent(ctx: &mut Ctx) -> Result<(Conn, String), Finding> {
    let mut conn = ctx.session()?;
    let path = ctx.path("p");
    conn.create(&path, b"", CreateMode::Persistent)?;
    Ok((conn, path))
}

fn stat(conn: &mut Conn, path: &str) -> Result<zk_proto::Stat, Finding> {
    conn.exists(path, false)?
        .ok_or_else(|| fail(format!("{path} exists"), "NONODE"))
}

fn ephemeral_owner(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let eph = format!("{path}/e");
    conn.create(&eph, b"", CreateMode::Ephemeral)?;
    ensure_eq(
        "ephemeralOwner",
        stat(&mut conn, &eph)?.ephemeral_owner,
        conn.session_id(),
    )
}

fn persistent_owner(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    ensure_eq("ephemeralOwner", stat(&mut conn, &path)?.ephemeral_owner, 0)
}

/// The number at the end of a sequential znode's name, checked to be 10 digits.
fn suffix(created: &str, prefix: &str) -> Result<i64, Finding> {
    let digits = created.strip_prefix(prefix).unwrap_or("");
    let ok = digits.len() == 10 && digits.bytes().all(|b| b.is_ascii_digit());
    ensure(ok, format!("{prefix} followed by 10 digits"), || {
        created.to_string()
    })?;
    digits
        .parse()
        .map_err(|_| fail("a number", digits.to_string()))
}

fn sequential_format(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    conn.create(&format!("{path}/plain"), b"", CreateMode::Persistent)?;
    let cversion = stat(&mut conn, &path)?.cversion;
    let prefix = format!("{path}/s-");
    let created = conn.create(&prefix, b"", CreateMode::PersistentSequential)?;
    ensure_eq(
        "sequence number",
        suffix(&created, &prefix)?,
        i64::from(cversion),
    )
}

fn sequential_counter(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let prefix = format!("{path}/s-");
    let a = conn.create(&prefix, b"", CreateMode::PersistentSequential)?;
    let b = conn.create(&prefix, b"", CreateMode::PersistentSequential)?;
    ensure_eq(
        "sequence numbers",
        (suffix(&a, &prefix)?, suffix(&b, &prefix)?),
        (0, 1),
    )?;
    // Deleting the newest must not let its number be handed out again.
    conn.delete(&b)?;
    let c = conn.create(&prefix, b"", CreateMode::PersistentSequential)?;
    let n = suffix(&c, &prefix)?;
    ensure(n > 1, "a sequence number above 1, never reused", || {
        n.to_string()
    })
}

fn sequential_after_plain_delete(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let prefix = format!("{path}/s-");
    let first = conn.create(&prefix, b"", CreateMode::PersistentSequential)?;
    let first = suffix(&first, &prefix)?;
    let plain = format!("{path}/plain");
    conn.create(&plain, b"", CreateMode::Persistent)?;
    conn.delete(&plain)?;
    let next = conn.create(&prefix, b"", CreateMode::PersistentSequential)?;
    let next = suffix(&next, &prefix)?;
    // The Guide promises unique, increasing numbers; 3.8 counts creates only here (the
    // number is below the parent's cversion, which counts the delete too).
    ensure(next > first, format!("a number above {first}"), || {
        next.to_string()
    })
}

fn sequential_per_parent(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, a) = parent(ctx)?;
    let b = ctx.path("q");
    conn.create(&b, b"", CreateMode::Persistent)?;
    let a_prefix = format!("{a}/s-");
    conn.create(&a_prefix, b"", CreateMode::PersistentSequential)?;
    conn.create(&a_prefix, b"", CreateMode::PersistentSequential)?;
    let b_prefix = format!("{b}/s-");
    let first = conn.create(&b_prefix, b"", CreateMode::PersistentSequential)?;
    ensure_eq(
        "first number under a new parent",
        suffix(&first, &b_prefix)?,
        0,
    )
}

fn ephemeral_sequential(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let prefix = format!("{path}/es-");
    let created = conn.create(&prefix, b"", CreateMode::EphemeralSequential)?;
    suffix(&created, &prefix)?;
    ensure_eq(
        "ephemeralOwner",
        stat(&mut conn, &created)?.ephemeral_owner,
        conn.session_id(),
    )
}

fn sequential_trailing_slash(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let prefix = format!("{path}/");
    let created = conn.create(&prefix, b"", CreateMode::PersistentSequential)?;
    ensure_eq("sequence number", suffix(&created, &prefix)?, 0)
}

fn container_create(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("c");
    let r = Request::CreateContainer(null_data(&path, CreateMode::Container));
    let created = match conn.ok(&r)? {
        Response::Create2(c) => c,
        other => return Err(unexpected("a Create2Response", &other)),
    };
    ensure_eq("path", created.path.as_str(), path.as_str())?;
    // The container marker is the server's own: clients see an ephemeralOwner of 0.
    ensure_eq("Stat from create", created.stat, stat(&mut conn, &path)?)?;
    ensure_eq("ephemeralOwner", created.stat.ephemeral_owner, 0)?;
    conn.create(&format!("{path}/child"), b"", CreateMode::Persistent)
        .map(drop)
}

fn create_ttl(
    conn: &mut Conn,
    path: &str,
    ttl: i64,
) -> Result<(zk_proto::ReplyHeader, Option<Response>), Finding> {
    conn.call(&Request::CreateTtl(CreateTtlRequest {
        path: path.into(),
        data: None,
        acl: Acl::open_unsafe(),
        mode: CreateMode::PersistentWithTtl,
        ttl,
    }))
}

fn ttl_off(code: ErrorCode) -> Finding {
    skip(format!(
        "TTL nodes are off on this server (createTTL answered {code:?}; extendedTypesEnabled)"
    ))
}

fn ttl_create(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("ttl");
    match create_ttl(&mut conn, &path, 60_000)? {
        (h, Some(Response::Create2(c))) if h.err == 0 => {
            // The TTL marker is the server's own: clients see an ephemeralOwner of 0.
            ensure_eq("Stat from create", c.stat, stat(&mut conn, &path)?)?;
            ensure_eq("ephemeralOwner", c.stat.ephemeral_owner, 0)
        }
        (h, _) if h.error_code() == ErrorCode::Unimplemented => Err(ttl_off(h.error_code())),
        other => Err(fail("a Create2Response", format!("{other:?}"))),
    }
}

fn ttl_zero(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let (h, _) = create_ttl(&mut conn, &ctx.path("ttl"), 0)?;
    match h.error_code() {
        ErrorCode::BadArguments => Ok(()),
        ErrorCode::Unimplemented => Err(ttl_off(ErrorCode::Unimplemented)),
        other => Err(fail("BadArguments", format!("{other:?}"))),
    }
}

fn stat_fresh(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let s = stat(&mut conn, &path)?;
    ensure_eq(
        "(version, cversion, aversion, numChildren)",
        (s.version, s.cversion, s.aversion, s.num_children),
        (0, 0, 0, 0),
    )?;
    ensure_eq("(mzxid, pzxid)", (s.mzxid, s.pzxid), (s.czxid, s.czxid))?;
    ensure_eq("mtime", s.mtime, s.ctime)?;
    ensure(s.ctime > 0, "a positive ctime", || s.ctime.to_string())
}

fn stat_parent(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let child = format!("{path}/c");
    conn.create(&child, b"", CreateMode::Persistent)?;
    let c = stat(&mut conn, &child)?;
    let p = stat(&mut conn, &path)?;
    ensure_eq(
        "parent (cversion, numChildren, pzxid)",
        (p.cversion, p.num_children, p.pzxid),
        (1, 1, c.czxid),
    )?;
    ensure_eq("parent version", p.version, 0)
}

fn stat_data_length(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let s = conn.set_data(&path, &[1; 300], -1)?;
    ensure_eq("dataLength", s.data_length, 300)?;
    let s = conn.set_data(&path, b"", -1)?;
    ensure_eq("dataLength", s.data_length, 0)
}

fn sequential_shared_counter(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let prefix = format!("{path}/s-");
    let a = conn.create(&prefix, b"", CreateMode::PersistentSequential)?;
    let b = conn.create(&prefix, b"", CreateMode::EphemeralSequential)?;
    let c = conn.create(&prefix, b"", CreateMode::PersistentSequential)?;
    ensure_eq(
        "sequence numbers",
        (
            suffix(&a, &prefix)?,
            suffix(&b, &prefix)?,
            suffix(&c, &prefix)?,
        ),
        (0, 1, 2),
    )
}

fn sequential_create2(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let prefix = format!("{path}/s-");
    match conn.ok(&req::create2(
        &prefix,
        b"abc",
        CreateMode::PersistentSequential,
    ))? {
        Response::Create2(c) => {
            ensure_eq("sequence number", suffix(&c.path, &prefix)?, 0)?;
            ensure_eq("Stat from create2", c.stat, stat(&mut conn, &c.path)?)
        }
        other => Err(unexpected("a Create2Response", &other)),
    }
}

fn sequential_ephemeral_format(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    conn.create(&format!("{path}/plain"), b"", CreateMode::Persistent)?;
    let prefix = format!("{path}/e-");
    let created = conn.create(&prefix, b"", CreateMode::EphemeralSequential)?;
    ensure_eq("sequence number", suffix(&created, &prefix)?, 1)
}

fn ephemeral_other_deletes(ctx: &mut Ctx) -> CheckResult {
    let (mut owner, path) = parent(ctx)?;
    let eph = format!("{path}/e");
    owner.create(&eph, b"", CreateMode::Ephemeral)?;
    let mut other = ctx.session()?;
    other.delete(&eph)?;
    ensure(
        owner.exists(&eph, false)?.is_none(),
        "the ephemeral gone",
        || "it exists".into(),
    )
}

fn ephemeral_reattach_keeps(ctx: &mut Ctx) -> CheckResult {
    let (mut owner, path) = parent(ctx)?;
    let eph = format!("{path}/e");
    owner.create(&eph, b"", CreateMode::Ephemeral)?;
    let (id, pw) = (owner.session_id(), owner.password());
    drop(owner);
    let mut again = ctx.connect()?;
    let resp = again.handshake(id, &pw, crate::ctx::SESSION_TIMEOUT_MS)?;
    ensure_eq("session id on re-attach", resp.session_id, id)?;
    ensure_eq(
        "ephemeralOwner after re-attach",
        stat(&mut again, &eph)?.ephemeral_owner,
        id,
    )
}

fn stat_set_data(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let before = stat(&mut conn, &path)?;
    let after = conn.set_data(&path, b"x", -1)?;
    ensure_eq(
        "(czxid, ctime)",
        (after.czxid, after.ctime),
        (before.czxid, before.ctime),
    )?;
    ensure(
        after.mzxid > before.mzxid && after.mtime >= before.mtime,
        "a later mzxid, an mtime not earlier",
        || format!("{before:?} -> {after:?}"),
    )
}

fn stat_child_delete(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let child = format!("{path}/c");
    conn.create(&child, b"", CreateMode::Persistent)?;
    let (h, _) = conn.call(&req::delete(&child, -1))?;
    ensure_eq("delete err", h.error_code(), ErrorCode::Ok)?;
    let p = stat(&mut conn, &path)?;
    ensure_eq(
        "parent (cversion, numChildren, pzxid)",
        (p.cversion, p.num_children, p.pzxid),
        (2, 0, h.zxid),
    )
}

fn stat_set_acl(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let before = stat(&mut conn, &path)?;
    conn.ok(&req::set_acl(&path, Acl::open_unsafe(), -1))?;
    let after = stat(&mut conn, &path)?;
    ensure_eq(
        "(version, cversion, aversion, mzxid)",
        (after.version, after.cversion, after.aversion, after.mzxid),
        (before.version, before.cversion, 1, before.mzxid),
    )
}

fn stat_child_data(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    let child = format!("{path}/c");
    conn.create(&child, b"", CreateMode::Persistent)?;
    let before = stat(&mut conn, &path)?;
    conn.set_data(&child, b"x", -1)?;
    ensure_eq("parent Stat", stat(&mut conn, &path)?, before)
}

fn stat_null_data(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("null");
    conn.ok(&Request::Create(null_data(&path, CreateMode::Persistent)))?;
    ensure_eq("dataLength", stat(&mut conn, &path)?.data_length, 0)
}

fn stat_version_counts_sets(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = parent(ctx)?;
    for _ in 0..3 {
        conn.set_data(&path, b"same", -1)?;
    }
    ensure_eq("version", stat(&mut conn, &path)?.version, 3)
}

/// How long the checks of server-side deletion wait: ZooKeeper runs them every
/// `znode.container.checkIntervalMs` (60 s by default), so they are skipped on a server
/// that does not delete within this.
const REAPER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Waits up to [`REAPER_WAIT`] for the server to delete `path`; skips when it does not.
fn deleted_by_server(ctx: &mut Ctx, path: &str) -> CheckResult {
    let mut watcher = ctx.session()?;
    if watcher.exists(path, true)?.is_none() {
        return Ok(());
    }
    watcher.set_timeout(REAPER_WAIT)?;
    match watcher.event() {
        Ok(ev) => ensure_eq(
            "notification",
            (ev.event_type, ev.path.as_str()),
            (zk_proto::EventType::NodeDeleted, path),
        ),
        Err(_) => {
            let still = ctx.session()?.exists(path, false)?;
            ensure(still.is_some(), "a NodeDeleted notification", || {
                "the znode went without one".into()
            })?;
            Err(skip(format!(
                "not deleted within {REAPER_WAIT:?}: the server checks less often \
                 (ZooKeeper: znode.container.checkIntervalMs, 60 s by default)"
            )))
        }
    }
}

fn container_deleted(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("c");
    conn.ok(&Request::CreateContainer(null_data(
        &path,
        CreateMode::Container,
    )))?;
    let child = format!("{path}/child");
    conn.create(&child, b"", CreateMode::Persistent)?;
    conn.delete(&child)?;
    deleted_by_server(ctx, &path)
}

fn ttl_expires(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("ttl");
    let (h, _) = create_ttl(&mut conn, &path, 100)?;
    match h.error_code() {
        ErrorCode::Ok => deleted_by_server(ctx, &path),
        ErrorCode::Unimplemented => Err(ttl_off(ErrorCode::Unimplemented)),
        other => Err(fail("a created TTL node", format!("{other:?}"))),
    }
}

/// The record of a create of `path` with null data and an open ACL.
fn null_data(path: &str, mode: CreateMode) -> zk_proto::CreateRequest {
    req::create_record(path, None, Acl::open_unsafe(), mode)
}
