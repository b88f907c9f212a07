//! Operations, error code by error code: each create opcode's refusals, createTTL's (where
//! TTL nodes are on, and its refusal where they are off), versions that match, setACL's
//! INVALIDACL per scheme, and the session-local opcodes without a watch to act on.

use bytes::BytesMut;
use zk_proto::{
    Acl, AddWatchMode, CreateMode, CreateTtlRequest, ErrorCode, GetAllChildrenNumberRequest,
    GetEphemeralsRequest, Id, OpCode, Perms, Request, Response, WatcherType,
};

use super::malformed::framed;
use crate::{
    check::{ensure, ensure_eq, fail, skip, Area, Check, CheckResult, Finding},
    ctx::{unexpected, Conn, Ctx},
    req,
};

const GUIDE: &str = "Programmer's Guide: ZooKeeper Data Model";
const EPHEMERAL: &str = "Programmer's Guide: Ephemeral Nodes";
const ACLS: &str = "Programmer's Guide: Built in ACL Schemes";
const TTL: &str = "Programmer's Guide: TTL Nodes";
const JUTE: &str = "zookeeper.jute";

/// The checks of this part of the area.
pub const CHECKS: &[Check] = checks!(Area::Ops, "ops";
    "create.bad-flags", "create with flags 99 (no CreateMode) fails with BADARGUMENTS", "zookeeper.jute: CreateRequest.flags", create_bad_flags;
    "create.ttl-mode", "create (1) with a TTL mode and no ttl is refused (UNIMPLEMENTED, or BADARGUMENTS where TTL is on)", TTL, create_ttl_mode;
    "create.root", "create of / fails with NODEEXISTS (or BADARGUMENTS)", GUIDE, create_root;
    "create2.node-exists", "create2 of an existing znode fails with NODEEXISTS", GUIDE, create2_exists;
    "create2.no-parent", "create2 under a missing parent fails with NONODE", GUIDE, create2_no_parent;
    "create2.ephemeral-parent", "create2 under an ephemeral fails with NOCHILDRENFOREPHEMERALS", EPHEMERAL, create2_ephemeral_parent;
    "create2.invalid-acl", "create2 with an empty ACL fails with INVALIDACL", ACLS, create2_invalid_acl;
    "create-container.node-exists", "createContainer of an existing znode fails with NODEEXISTS", "Programmer's Guide: Container Nodes", container_exists;
    "create-container.no-parent", "createContainer under a missing parent fails with NONODE", "Programmer's Guide: Container Nodes", container_no_parent;
    "create-container.ephemeral-parent", "createContainer under an ephemeral fails with NOCHILDRENFOREPHEMERALS", EPHEMERAL, container_ephemeral_parent;
    "create-container.invalid-acl", "createContainer with an empty ACL fails with INVALIDACL", ACLS, container_invalid_acl;
    "create-ttl.disabled", "where TTL nodes are off, createTTL fails with UNIMPLEMENTED and creates nothing", TTL, ttl_disabled;
    "create-ttl.negative", "createTTL with a negative ttl fails with BADARGUMENTS", TTL, ttl_negative;
    "create-ttl.too-large", "createTTL with a ttl over 2^40-1 ms fails with BADARGUMENTS", TTL, ttl_too_large;
    "create-ttl.non-ttl-mode", "createTTL with a mode that is not a TTL mode fails with BADARGUMENTS", TTL, ttl_non_ttl_mode;
    "create-ttl.node-exists", "createTTL of an existing znode fails with NODEEXISTS", TTL, ttl_exists;
    "create-ttl.no-parent", "createTTL under a missing parent fails with NONODE", TTL, ttl_no_parent;
    "create-ttl.sequential", "createTTL in PERSISTENT_SEQUENTIAL_WITH_TTL mode appends a %010d sequence number", TTL, ttl_sequential;
    "delete.version-match", "delete with the znode's version succeeds", GUIDE, delete_version_match;
    "set-data.version-match", "setData with the current version succeeds, then that version is stale", GUIDE, set_data_version_match;
    "set-acl.version-match", "setACL with the current aversion succeeds, then that aversion is stale", GUIDE, set_acl_version_match;
    "set-acl.world-id", "setACL with world:<not anyone> fails with INVALIDACL", ACLS, set_acl_world_id;
    "set-acl.bad-ip", "setACL with an ip ACL that is no address fails with INVALIDACL", ACLS, set_acl_bad_ip;
    "set-acl.unknown-scheme", "setACL with an unknown scheme fails with INVALIDACL", ACLS, set_acl_unknown_scheme;
    "get-children2.stat", "getChildren2's Stat is the one exists reports", "zookeeper.jute: GetChildren2Response", get_children2_stat;
    "get-acl.stat", "getACL's Stat is the one exists reports", "zookeeper.jute: GetACLResponse", get_acl_stat;
    "exists.root", "exists of / answers a Stat", GUIDE, exists_root;
    "sync.root", "sync of / answers /", "zookeeper.jute: SyncResponse", sync_root;
    "get-ephemerals.root", "getEphemerals of / lists the session's ephemerals under every parent, and only its own", JUTE, get_ephemerals_root;
    "get-ephemerals.string-prefix", "getEphemerals matches its prefix as a string, not only as a parent path", JUTE, get_ephemerals_string_prefix;
    "get-ephemerals.missing-prefix", "getEphemerals of a prefix no znode has answers an empty list, not an error", JUTE, get_ephemerals_missing_prefix;
    "get-all-children-number.ephemerals", "getAllChildrenNumber counts ephemeral descendants too", JUTE, all_children_ephemerals;
    "add-watch.missing", "addWatch on a missing znode succeeds", "zookeeper.jute: AddWatchRequest", add_watch_missing;
    "add-watch.recursive", "addWatch (PERSISTENT_RECURSIVE) is answered with error 0", "zookeeper.jute: AddWatchRequest", add_watch_recursive;
    "remove-watches.no-watcher.data", "removeWatches (data) with no watch fails with NOWATCHER", "zookeeper.jute: RemoveWatchesRequest", remove_none_data;
    "remove-watches.no-watcher.children", "removeWatches (children) with no watch fails with NOWATCHER", "zookeeper.jute: RemoveWatchesRequest", remove_none_children;
    "check-watches.no-watcher.any", "checkWatches (any) with no watch fails with NOWATCHER", "zookeeper.jute: CheckWatchesRequest", check_none_any;
);

/// A znode of the check's, with a connection.
fn made(ctx: &mut Ctx) -> Result<(Conn, String), Finding> {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    conn.create(&path, b"", CreateMode::Persistent)?;
    Ok((conn, path))
}

fn create_bad_flags(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    let mut b = BytesMut::new();
    req::create(&path, b"", CreateMode::Persistent).encode(1000, &mut b);
    let n = b.len();
    b[n - 4..].copy_from_slice(&99i32.to_be_bytes());
    conn.send_bytes(&framed(&b))?;
    let (h, _) = conn.recv(1000, OpCode::Create)?;
    ensure_eq("create err", h.error_code(), ErrorCode::BadArguments)?;
    ensure(conn.exists(&path, false)?.is_none(), "no znode", || {
        "the znode was created".into()
    })
}

fn create_ttl_mode(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    let (h, _) = conn.call(&req::create(&path, b"", CreateMode::PersistentWithTtl))?;
    let code = h.error_code();
    ensure(
        code == ErrorCode::Unimplemented || code == ErrorCode::BadArguments,
        "UNIMPLEMENTED or BADARGUMENTS",
        || format!("{code:?}"),
    )
}

fn create_root(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let (h, _) = conn.call(&req::create("/", b"", CreateMode::Persistent))?;
    let code = h.error_code();
    ensure(
        code == ErrorCode::NodeExists || code == ErrorCode::BadArguments,
        "NODEEXISTS or BADARGUMENTS",
        || format!("{code:?}"),
    )
}

/// The request a create opcode sends for `path`, with `acl`.
type Builder = fn(&str, Vec<Acl>) -> Request;

fn create2_of(path: &str, acl: Vec<Acl>) -> Request {
    Request::Create2(req::create_record(path, None, acl, CreateMode::Persistent))
}

fn container_of(path: &str, acl: Vec<Acl>) -> Request {
    Request::CreateContainer(req::create_record(path, None, acl, CreateMode::Container))
}

/// What a create's target is, for its error.
#[derive(Debug, Clone, Copy)]
enum Refusal {
    Exists,
    NoParent,
    EphemeralParent,
    EmptyAcl,
}

fn refused_create(ctx: &mut Ctx, build: Builder, why: Refusal) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    let eph = format!("{path}-eph");
    conn.create(&eph, b"", CreateMode::Ephemeral)?;
    let open = Acl::open_unsafe();
    let (target, acl, code) = match why {
        Refusal::Exists => (path.clone(), open, ErrorCode::NodeExists),
        Refusal::NoParent => (format!("{path}/missing/c"), open, ErrorCode::NoNode),
        Refusal::EphemeralParent => (format!("{eph}/c"), open, ErrorCode::NoChildrenForEphemerals),
        Refusal::EmptyAcl => (format!("{path}/c"), vec![], ErrorCode::InvalidAcl),
    };
    conn.err(&build(&target, acl), code)
}

fn create2_exists(ctx: &mut Ctx) -> CheckResult {
    refused_create(ctx, create2_of, Refusal::Exists)
}

fn create2_no_parent(ctx: &mut Ctx) -> CheckResult {
    refused_create(ctx, create2_of, Refusal::NoParent)
}

fn create2_ephemeral_parent(ctx: &mut Ctx) -> CheckResult {
    refused_create(ctx, create2_of, Refusal::EphemeralParent)
}

fn create2_invalid_acl(ctx: &mut Ctx) -> CheckResult {
    refused_create(ctx, create2_of, Refusal::EmptyAcl)
}

fn container_exists(ctx: &mut Ctx) -> CheckResult {
    refused_create(ctx, container_of, Refusal::Exists)
}

fn container_no_parent(ctx: &mut Ctx) -> CheckResult {
    refused_create(ctx, container_of, Refusal::NoParent)
}

fn container_ephemeral_parent(ctx: &mut Ctx) -> CheckResult {
    refused_create(ctx, container_of, Refusal::EphemeralParent)
}

fn container_invalid_acl(ctx: &mut Ctx) -> CheckResult {
    refused_create(ctx, container_of, Refusal::EmptyAcl)
}

fn ttl_request(path: &str, mode: CreateMode, ttl: i64) -> Request {
    Request::CreateTtl(CreateTtlRequest {
        path: path.into(),
        data: None,
        acl: Acl::open_unsafe(),
        mode,
        ttl,
    })
}

/// createTTL answers `code`; skipped where TTL nodes are off (UNIMPLEMENTED).
fn ttl_answers(conn: &mut Conn, request: &Request, code: ErrorCode) -> CheckResult {
    let (h, _) = conn.call(request)?;
    match h.error_code() {
        c if c == code => Ok(()),
        ErrorCode::Unimplemented => Err(skip(
            "TTL nodes are off on this server (createTTL answered Unimplemented)",
        )),
        other => Err(fail(format!("{code:?}"), format!("{other:?}"))),
    }
}

fn ttl_disabled(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("ttl");
    let (h, _) = conn.call(&ttl_request(&path, CreateMode::PersistentWithTtl, 60_000))?;
    match h.error_code() {
        ErrorCode::Unimplemented => {
            ensure(conn.exists(&path, false)?.is_none(), "no znode", || {
                "the znode was created".into()
            })
        }
        ErrorCode::Ok => Err(skip("TTL nodes are on on this server")),
        other => Err(fail(
            "UNIMPLEMENTED, or a created TTL node",
            format!("{other:?}"),
        )),
    }
}

fn ttl_bad(ctx: &mut Ctx, mode: CreateMode, ttl: i64) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("ttl");
    ttl_answers(
        &mut conn,
        &ttl_request(&path, mode, ttl),
        ErrorCode::BadArguments,
    )?;
    ensure(conn.exists(&path, false)?.is_none(), "no znode", || {
        "the znode was created".into()
    })
}

fn ttl_negative(ctx: &mut Ctx) -> CheckResult {
    ttl_bad(ctx, CreateMode::PersistentWithTtl, -5)
}

fn ttl_too_large(ctx: &mut Ctx) -> CheckResult {
    ttl_bad(ctx, CreateMode::PersistentWithTtl, 1 << 40)
}

fn ttl_non_ttl_mode(ctx: &mut Ctx) -> CheckResult {
    ttl_bad(ctx, CreateMode::Persistent, 60_000)
}

fn ttl_exists(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    let r = ttl_request(&path, CreateMode::PersistentWithTtl, 60_000);
    ttl_answers(&mut conn, &r, ErrorCode::NodeExists)
}

fn ttl_no_parent(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    let r = ttl_request(
        &format!("{path}/missing/c"),
        CreateMode::PersistentWithTtl,
        60_000,
    );
    ttl_answers(&mut conn, &r, ErrorCode::NoNode)
}

fn ttl_sequential(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    let prefix = format!("{path}/s-");
    let r = ttl_request(&prefix, CreateMode::PersistentSequentialWithTtl, 60_000);
    match conn.call(&r)? {
        (h, Some(Response::Create2(c))) if h.err == 0 => {
            let suffix = c.path.strip_prefix(&prefix).unwrap_or_default();
            ensure(
                suffix.len() == 10 && suffix.bytes().all(|b| b.is_ascii_digit()),
                format!("{prefix} and ten digits"),
                || c.path.clone(),
            )
        }
        (h, _) if h.error_code() == ErrorCode::Unimplemented => Err(skip(
            "TTL nodes are off on this server (createTTL answered Unimplemented)",
        )),
        (h, body) => Err(fail(
            "a Create2Response",
            format!("{:?} {body:?}", h.error_code()),
        )),
    }
}

fn delete_version_match(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    conn.set_data(&path, b"1", -1)?;
    conn.ok(&req::delete(&path, 1))?;
    ensure(
        conn.exists(&path, false)?.is_none(),
        "the znode gone",
        || "it exists".into(),
    )
}

fn set_data_version_match(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    let stat = conn.set_data(&path, b"1", 0)?;
    ensure_eq("version", stat.version, 1)?;
    conn.err(&req::set_data(&path, b"2", 0), ErrorCode::BadVersion)
}

fn set_acl_version_match(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    conn.ok(&req::set_acl(&path, Acl::open_unsafe(), 0))?;
    conn.err(
        &req::set_acl(&path, Acl::open_unsafe(), 0),
        ErrorCode::BadVersion,
    )
}

fn set_acl_refused(ctx: &mut Ctx, scheme: &str, id: &str) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    let acl = vec![Acl::new(Perms::ALL, Id::new(scheme, id))];
    conn.err(&req::set_acl(&path, acl, -1), ErrorCode::InvalidAcl)?;
    match conn.ok(&req::get_acl(&path))? {
        Response::GetAcl(g) => ensure_eq("acl unchanged", g.acl, Acl::open_unsafe()),
        other => Err(unexpected("a GetACLResponse", &other)),
    }
}

fn set_acl_world_id(ctx: &mut Ctx) -> CheckResult {
    set_acl_refused(ctx, "world", "nobody")
}

fn set_acl_bad_ip(ctx: &mut Ctx) -> CheckResult {
    set_acl_refused(ctx, "ip", "not-an-address")
}

fn set_acl_unknown_scheme(ctx: &mut Ctx) -> CheckResult {
    set_acl_refused(ctx, "no-such-scheme", "x")
}

fn get_children2_stat(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    conn.create(&format!("{path}/c"), b"", CreateMode::Persistent)?;
    match conn.ok(&req::get_children2(&path, false))? {
        Response::GetChildren2(g) => ensure_eq("Stat", Some(g.stat), conn.exists(&path, false)?),
        other => Err(unexpected("a GetChildren2Response", &other)),
    }
}

fn get_acl_stat(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    conn.set_data(&path, b"1", -1)?;
    match conn.ok(&req::get_acl(&path))? {
        Response::GetAcl(g) => ensure_eq("Stat", Some(g.stat), conn.exists(&path, false)?),
        other => Err(unexpected("a GetACLResponse", &other)),
    }
}

fn exists_root(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    ensure(conn.exists("/", false)?.is_some(), "a Stat for /", || {
        "NONODE".into()
    })
}

fn sync_root(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    match conn.ok(&req::sync("/"))? {
        Response::Sync(s) => ensure_eq("path", s.path.as_str(), "/"),
        other => Err(unexpected("a SyncResponse", &other)),
    }
}

fn ephemerals(conn: &mut Conn, prefix: &str) -> Result<Vec<String>, Finding> {
    match conn.ok(&Request::GetEphemerals(GetEphemeralsRequest {
        prefix_path: prefix.into(),
    }))? {
        Response::GetEphemerals(g) => {
            let mut e = g.ephemerals;
            e.sort();
            Ok(e)
        }
        other => Err(unexpected("a GetEphemeralsResponse", &other)),
    }
}

fn get_ephemerals_root(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    let mut other = ctx.session()?;
    let mut mine = vec![format!("{path}/e1"), format!("{path}-e2")];
    for e in &mine {
        conn.create(e, b"", CreateMode::Ephemeral)?;
    }
    other.create(&format!("{path}/theirs"), b"", CreateMode::Ephemeral)?;
    mine.sort();
    ensure_eq("ephemerals under /", ephemerals(&mut conn, "/")?, mine)
}

fn get_ephemerals_string_prefix(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    let (a, b) = (format!("{path}/ab"), format!("{path}/ac"));
    conn.create(&a, b"", CreateMode::Ephemeral)?;
    conn.create(&b, b"", CreateMode::Ephemeral)?;
    ensure_eq(
        "ephemerals with the prefix .../ab",
        ephemerals(&mut conn, &a)?,
        vec![a.clone()],
    )?;
    ensure_eq(
        "ephemerals with the prefix .../a",
        ephemerals(&mut conn, &format!("{path}/a"))?,
        vec![a, b],
    )
}

fn get_ephemerals_missing_prefix(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    conn.create(&format!("{path}/e"), b"", CreateMode::Ephemeral)?;
    let missing = format!("{path}/missing");
    ensure_eq("ephemerals", ephemerals(&mut conn, &missing)?, vec![])
}

fn all_children_ephemerals(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    conn.create(&format!("{path}/p"), b"", CreateMode::Persistent)?;
    conn.create(&format!("{path}/e"), b"", CreateMode::Ephemeral)?;
    conn.create(&format!("{path}/p/e"), b"", CreateMode::Ephemeral)?;
    match conn.ok(&Request::GetAllChildrenNumber(
        GetAllChildrenNumberRequest { path },
    ))? {
        Response::GetAllChildrenNumber(n) => ensure_eq("totalNumber", n.total_number, 3),
        other => Err(unexpected("a GetAllChildrenNumberResponse", &other)),
    }
}

fn add_watch_ok(ctx: &mut Ctx, missing: bool, mode: AddWatchMode) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    let target = if missing {
        format!("{path}/missing")
    } else {
        path
    };
    match conn.ok(&req::add_watch(&target, mode))? {
        Response::Error(e) => ensure_eq("ErrorResponse.err", e.err, 0),
        other => Err(unexpected("an ErrorResponse body", &other)),
    }
}

fn add_watch_missing(ctx: &mut Ctx) -> CheckResult {
    add_watch_ok(ctx, true, AddWatchMode::Persistent)
}

fn add_watch_recursive(ctx: &mut Ctx) -> CheckResult {
    add_watch_ok(ctx, false, AddWatchMode::PersistentRecursive)
}

fn no_watcher(ctx: &mut Ctx, request: fn(&str) -> Request) -> CheckResult {
    let (mut conn, path) = made(ctx)?;
    conn.err(&request(&path), ErrorCode::NoWatcher)
}

fn remove_none_data(ctx: &mut Ctx) -> CheckResult {
    no_watcher(ctx, |p| req::remove_watches(p, WatcherType::Data))
}

fn remove_none_children(ctx: &mut Ctx) -> CheckResult {
    no_watcher(ctx, |p| req::remove_watches(p, WatcherType::Children))
}

fn check_none_any(ctx: &mut Ctx) -> CheckResult {
    no_watcher(ctx, |p| req::check_watches(p, WatcherType::Any))
}
