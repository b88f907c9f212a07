//! Every 3.8 opcode's success reply and the error codes it can return.

use zk_proto::{
    Acl, AddWatchMode, CheckVersionRequest, CreateMode, ErrorCode, GetAllChildrenNumberRequest,
    GetEphemeralsRequest, Id, Perms, ReconfigRequest, Request, Response, WatcherType,
};

use crate::{
    check::{ensure, ensure_eq, fail, skip, Area, Check, CheckResult},
    ctx::{unexpected, Ctx, Ending},
    req,
};

const JUTE: &str = "zookeeper.jute";
const BUG_2623: &str = "ZOOKEEPER-2623: a check (13) sent on its own is processed as a write whose \
reply has a null Stat, so it is never answered and the connection stays open (later releases answer \
UNIMPLEMENTED). Reproduce: RequestHeader{xid 1, type 13} + CheckVersionRequest{/p, 0} on a session: \
no reply until the client times out";
const DANGER_2623: &str =
    "on a server with ZOOKEEPER-2623 it writes a check transaction to the log \
that the server cannot read back when it restarts; on an ensemble at once: the followers cannot \
read the proposal and leave the leader, which then cannot reload its log (quorum lost for good)";
const GUIDE_OPS: &str = "Programmer's Guide: ZooKeeper Data Model";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Ops, "ops";
    "create", "create (1) answers the created path", "zookeeper.jute: CreateResponse", create;
    "create.node-exists", "create of an existing znode fails with NODEEXISTS", GUIDE_OPS, create_exists;
    "create.no-parent", "create under a missing parent fails with NONODE", GUIDE_OPS, create_no_parent;
    "create.ephemeral-parent", "create under an ephemeral fails with NOCHILDRENFOREPHEMERALS", "Programmer's Guide: Ephemeral Nodes", create_under_ephemeral;
    "create.empty-acl", "create with an empty ACL fails with INVALIDACL", "Programmer's Guide: ZooKeeper access control using ACLs", create_empty_acl;
    "create.invalid-acl.world-id", "create with world:<not anyone> fails with INVALIDACL", "Programmer's Guide: Built in ACL Schemes", create_world_not_anyone;
    "create.invalid-acl.bad-ip", "create with an ip ACL that is no address fails with INVALIDACL", "Programmer's Guide: Built in ACL Schemes", create_bad_ip;
    "create.invalid-acl.digest-form", "create with a digest ACL not of the form user:hash fails with INVALIDACL", "Programmer's Guide: Built in ACL Schemes", create_bad_digest;
    "create2", "create2 (15) answers the path and a Stat whose czxid is the reply's zxid", "zookeeper.jute: Create2Response", create2;
    "delete", "delete (2) removes the znode", GUIDE_OPS, delete;
    "delete.no-node", "delete of a missing znode fails with NONODE", GUIDE_OPS, delete_no_node;
    "delete.bad-version", "delete with a wrong version fails with BADVERSION", GUIDE_OPS, delete_bad_version;
    "delete.not-empty", "delete of a znode with children fails with NOTEMPTY", GUIDE_OPS, delete_not_empty;
    "delete.root", "delete of / fails with BADARGUMENTS", GUIDE_OPS, delete_root;
    "delete.zookeeper", "delete of the reserved /zookeeper fails with BADARGUMENTS", "Programmer's Guide: ZNodes (the name \"zookeeper\" is reserved)", delete_zookeeper;
    "exists", "exists (3) answers the Stat getData reports", "zookeeper.jute: ExistsResponse", exists;
    "exists.no-node", "exists of a missing znode fails with NONODE", GUIDE_OPS, exists_no_node;
    "get-data", "getData (4) answers the data and Stat", "zookeeper.jute: GetDataResponse", get_data;
    "get-data.null-vs-empty", "null data reads back as null (-1), empty data as empty (0)", "zookeeper.jute: buffer", null_vs_empty;
    "get-data.no-node", "getData of a missing znode fails with NONODE", GUIDE_OPS, get_data_no_node;
    "set-data", "setData (5) bumps the version and sets mzxid to the reply's zxid", "zookeeper.jute: SetDataResponse", set_data;
    "set-data.bad-version", "setData with a wrong version fails with BADVERSION", GUIDE_OPS, set_data_bad_version;
    "set-data.no-node", "setData of a missing znode fails with NONODE", GUIDE_OPS, set_data_no_node;
    "get-acl", "getACL (6) answers the ACL set at create", "zookeeper.jute: GetACLResponse", get_acl;
    "get-acl.no-node", "getACL of a missing znode fails with NONODE", GUIDE_OPS, get_acl_no_node;
    "set-acl", "setACL (7) replaces the ACL and bumps aversion", "zookeeper.jute: SetACLResponse", set_acl;
    "set-acl.bad-version", "setACL with a wrong aversion fails with BADVERSION", GUIDE_OPS, set_acl_bad_version;
    "set-acl.invalid-acl", "setACL with an empty ACL fails with INVALIDACL", "Programmer's Guide: ZooKeeper access control using ACLs", set_acl_empty;
    "set-acl.no-node", "setACL of a missing znode fails with NONODE", GUIDE_OPS, set_acl_no_node;
    "get-children", "getChildren (8) lists the children's names", "zookeeper.jute: GetChildrenResponse", get_children;
    "get-children.no-node", "getChildren of a missing znode fails with NONODE", GUIDE_OPS, get_children_no_node;
    "get-children2", "getChildren2 (12) adds the parent's Stat", "zookeeper.jute: GetChildren2Response", get_children2;
    "get-children2.no-node", "getChildren2 of a missing znode fails with NONODE", GUIDE_OPS, get_children2_no_node;
    "sync", "sync (9) answers the path it was given", "zookeeper.jute: SyncResponse", sync;
    "check.outside-multi", "check (13) outside a multi is refused, never answered as a success", "zookeeper.jute: CheckVersionRequest", check_outside_multi, bug = BUG_2623, danger = DANGER_2623;
    "get-ephemerals", "getEphemerals (103) lists the session's own ephemerals under the prefix", JUTE, get_ephemerals;
    "get-ephemerals.none", "getEphemerals of a session without ephemerals answers an empty list", JUTE, get_ephemerals_none;
    "get-all-children-number.leaf", "getAllChildrenNumber of a leaf answers 0", JUTE, get_all_children_number_leaf;
    "get-all-children-number", "getAllChildrenNumber (104) counts every descendant", JUTE, get_all_children_number;
    "get-all-children-number.no-node", "getAllChildrenNumber of a missing znode fails with NONODE", JUTE, get_all_children_number_no_node;
    "who-am-i", "whoAmI (107) names the session's ip identity", "zookeeper.jute: WhoAmIResponse", who_am_i;
    "add-watch", "addWatch (106) is answered with error 0", "zookeeper.jute: AddWatchRequest", add_watch;
    "remove-watches.no-watcher", "removeWatches (18) with no watch fails with NOWATCHER", "zookeeper.jute: RemoveWatchesRequest", remove_watches_none;
    "check-watches.no-watcher", "checkWatches (17) with no watch fails with NOWATCHER", "zookeeper.jute: CheckWatchesRequest", check_watches_none;
    "check-watches.set", "checkWatches (17) where a data watch is set succeeds and leaves the watch", "zookeeper.jute: CheckWatchesRequest", check_watches_set;
    "reconfig.disabled", "reconfig (16) is refused with RECONFIGDISABLED when reconfig is off", "zookeeper.jute: ReconfigRequest", reconfig_disabled;
);

fn make(ctx: &mut Ctx) -> Result<(crate::Conn, String), crate::Finding> {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    conn.create(&path, b"v0", CreateMode::Persistent)?;
    Ok((conn, path))
}

/// The request `on` makes for a znode that does not exist fails with NONODE.
fn missing(ctx: &mut Ctx, on: fn(&str) -> Request) -> CheckResult {
    let mut conn = ctx.session()?;
    conn.err(&on(&ctx.path("missing")), ErrorCode::NoNode)
}

fn create(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    let (h, body) = conn.call(&req::create(&path, b"x", CreateMode::Persistent))?;
    ensure_eq("err", h.error_code(), ErrorCode::Ok)?;
    ensure(h.zxid > 0, "a positive zxid", || format!("{:#x}", h.zxid))?;
    match body {
        Some(Response::Create(c)) => ensure_eq("created path", c.path, path),
        other => Err(fail("a CreateResponse", format!("{other:?}"))),
    }
}

fn create_exists(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    conn.err(
        &req::create(&path, b"", CreateMode::Persistent),
        ErrorCode::NodeExists,
    )
}

fn create_no_parent(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = format!("{}/child", ctx.path("missing"));
    conn.err(
        &req::create(&path, b"", CreateMode::Persistent),
        ErrorCode::NoNode,
    )
}

fn create_under_ephemeral(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("eph");
    conn.create(&path, b"", CreateMode::Ephemeral)?;
    let child = format!("{path}/c");
    conn.err(
        &req::create(&child, b"", CreateMode::Persistent),
        ErrorCode::NoChildrenForEphemerals,
    )
}

fn create_empty_acl(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let r = Request::Create(req::create_record(
        &ctx.path("n"),
        None,
        vec![],
        CreateMode::Persistent,
    ));
    conn.err(&r, ErrorCode::InvalidAcl)
}

fn create2(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    let (h, body) = conn.call(&req::create2(&path, b"abc", CreateMode::Persistent))?;
    ensure_eq("err", h.error_code(), ErrorCode::Ok)?;
    let Some(Response::Create2(c)) = body else {
        return Err(fail("a Create2Response", format!("{body:?}")));
    };
    ensure_eq("path", c.path.as_str(), path.as_str())?;
    ensure_eq("stat.czxid", c.stat.czxid, h.zxid)?;
    ensure_eq("stat.mzxid", c.stat.mzxid, h.zxid)?;
    ensure_eq("stat.version", c.stat.version, 0)?;
    ensure_eq("stat.dataLength", c.stat.data_length, 3)
}

fn delete(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    let body = conn.ok(&req::delete(&path, 0))?;
    ensure_eq("delete reply body", body, Response::Empty)?;
    let stat = conn.exists(&path, false)?;
    ensure(stat.is_none(), "the znode gone", || format!("{stat:?}"))
}

fn delete_no_node(ctx: &mut Ctx) -> CheckResult {
    missing(ctx, |p| req::delete(p, -1))
}

fn delete_bad_version(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    conn.err(&req::delete(&path, 5), ErrorCode::BadVersion)
}

fn delete_not_empty(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    conn.create(&format!("{path}/c"), b"", CreateMode::Persistent)?;
    conn.err(&req::delete(&path, -1), ErrorCode::NotEmpty)
}

fn delete_root(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    conn.err(&req::delete("/", -1), ErrorCode::BadArguments)
}

fn delete_zookeeper(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    conn.err(&req::delete("/zookeeper", -1), ErrorCode::BadArguments)
}

fn exists(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    let stat = conn.exists(&path, false)?;
    let (_, read) = conn.get_data(&path, false)?;
    ensure_eq("exists' Stat", stat, Some(read))
}

fn exists_no_node(ctx: &mut Ctx) -> CheckResult {
    missing(ctx, |p| req::exists(p, false))
}

fn get_data(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    let payload = b"\x00\x01\xffbinary data";
    conn.create(&path, payload, CreateMode::Persistent)?;
    let (data, stat) = conn.get_data(&path, false)?;
    ensure_eq("data", data.as_deref(), Some(&payload[..]))?;
    ensure_eq("stat.dataLength", stat.data_length as usize, payload.len())?;
    ensure_eq("stat.version", stat.version, 0)
}

fn null_vs_empty(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let null = ctx.path("null");
    let empty = ctx.path("empty");
    conn.ok(&Request::Create(req::create_record(
        &null,
        None,
        Acl::open_unsafe(),
        CreateMode::Persistent,
    )))?;
    conn.create(&empty, b"", CreateMode::Persistent)?;
    let (n, _) = conn.get_data(&null, false)?;
    let (e, _) = conn.get_data(&empty, false)?;
    ensure_eq("data of a znode created with null data", n, None)?;
    ensure_eq(
        "data of a znode created with empty data",
        e.as_deref(),
        Some(&b""[..]),
    )
}

fn get_data_no_node(ctx: &mut Ctx) -> CheckResult {
    missing(ctx, |p| req::get_data(p, false))
}

fn set_data(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    let (h, body) = conn.call(&req::set_data(&path, b"v1", 0))?;
    ensure_eq("err", h.error_code(), ErrorCode::Ok)?;
    let Some(Response::Stat(stat)) = body else {
        return Err(fail("a Stat", format!("{body:?}")));
    };
    ensure_eq("stat.version", stat.version, 1)?;
    ensure_eq("stat.mzxid", stat.mzxid, h.zxid)?;
    let (data, _) = conn.get_data(&path, false)?;
    ensure_eq("data", data.as_deref(), Some(&b"v1"[..]))
}

fn set_data_bad_version(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    conn.err(&req::set_data(&path, b"", 7), ErrorCode::BadVersion)
}

fn set_data_no_node(ctx: &mut Ctx) -> CheckResult {
    missing(ctx, |p| req::set_data(p, b"", -1))
}

fn read_only_acl() -> Vec<Acl> {
    vec![
        Acl::new(Perms::ALL, Id::new("ip", "127.0.0.1")),
        Acl::new(Perms::READ, Id::anyone()),
    ]
}

fn get_acl(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    let acl = read_only_acl();
    conn.ok(&Request::Create(req::create_record(
        &path,
        None,
        acl.clone(),
        CreateMode::Persistent,
    )))?;
    match conn.ok(&req::get_acl(&path))? {
        Response::GetAcl(g) => {
            ensure_eq("acl", g.acl, acl)?;
            ensure_eq("stat.aversion", g.stat.aversion, 0)
        }
        other => Err(unexpected("a GetACLResponse", &other)),
    }
}

fn get_acl_no_node(ctx: &mut Ctx) -> CheckResult {
    missing(ctx, req::get_acl)
}

fn set_acl(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    let acl = read_only_acl();
    match conn.ok(&req::set_acl(&path, acl.clone(), 0))? {
        Response::Stat(s) => ensure_eq("stat.aversion", s.aversion, 1)?,
        other => return Err(unexpected("a Stat", &other)),
    }
    match conn.ok(&req::get_acl(&path))? {
        Response::GetAcl(g) => ensure_eq("acl", g.acl, acl),
        other => Err(unexpected("a GetACLResponse", &other)),
    }
}

fn set_acl_bad_version(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    conn.err(
        &req::set_acl(&path, Acl::open_unsafe(), 3),
        ErrorCode::BadVersion,
    )
}

fn set_acl_empty(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    conn.err(&req::set_acl(&path, vec![], -1), ErrorCode::InvalidAcl)
}

fn get_children(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    for c in ["b", "a", "c"] {
        conn.create(&format!("{path}/{c}"), b"", CreateMode::Persistent)?;
    }
    ensure_eq(
        "children",
        conn.children(&path, false)?,
        vec!["a".to_string(), "b".into(), "c".into()],
    )
}

fn get_children_no_node(ctx: &mut Ctx) -> CheckResult {
    missing(ctx, |p| req::get_children(p, false))
}

fn get_children2(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    conn.create(&format!("{path}/a"), b"", CreateMode::Persistent)?;
    conn.create(&format!("{path}/b"), b"", CreateMode::Persistent)?;
    match conn.ok(&req::get_children2(&path, false))? {
        Response::GetChildren2(g) => {
            ensure_eq("number of children", g.children.len(), 2)?;
            ensure_eq("stat.numChildren", g.stat.num_children, 2)?;
            ensure_eq("stat.cversion", g.stat.cversion, 2)
        }
        other => Err(unexpected("a GetChildren2Response", &other)),
    }
}

fn sync(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    match conn.ok(&req::sync(&path))? {
        Response::Sync(s) => ensure_eq("path", s.path, path),
        other => Err(unexpected("a SyncResponse", &other)),
    }
}

fn check_outside_multi(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    let x = conn.send(&Request::Check(CheckVersionRequest { path, version: 0 }))?;
    match conn.ending()? {
        Ending::Closed => Ok(()),
        Ending::Frame(f) => {
            let (h, _) = zk_proto::decode_reply(f, zk_proto::OpCode::Check)
                .map_err(|e| fail("a reply header", e.to_string()))?;
            ensure_eq("xid", h.xid, x)?;
            ensure(h.err != 0, "an error code", || "0 (success)".into())
        }
    }
}

fn get_ephemerals(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    let mine = format!("{path}/mine");
    conn.create(&mine, b"", CreateMode::Ephemeral)?;
    let mut other = ctx.session()?;
    other.create(&format!("{path}/theirs"), b"", CreateMode::Ephemeral)?;
    match conn.ok(&Request::GetEphemerals(GetEphemeralsRequest {
        prefix_path: path,
    }))? {
        Response::GetEphemerals(g) => ensure_eq("ephemerals", g.ephemerals, vec![mine]),
        other => Err(unexpected("a GetEphemeralsResponse", &other)),
    }
}

fn get_all_children_number(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    for c in ["a", "a/x", "a/y", "b"] {
        conn.create(&format!("{path}/{c}"), b"", CreateMode::Persistent)?;
    }
    all_children_number(&mut conn, path, 4)
}

/// getAllChildrenNumber of `path` answers `want`.
fn all_children_number(conn: &mut crate::Conn, path: String, want: i32) -> CheckResult {
    match conn.ok(&Request::GetAllChildrenNumber(
        GetAllChildrenNumberRequest { path },
    ))? {
        Response::GetAllChildrenNumber(n) => ensure_eq("totalNumber", n.total_number, want),
        other => Err(unexpected("a GetAllChildrenNumberResponse", &other)),
    }
}

fn get_all_children_number_no_node(ctx: &mut Ctx) -> CheckResult {
    missing(ctx, |p| {
        Request::GetAllChildrenNumber(GetAllChildrenNumberRequest { path: p.into() })
    })
}

fn who_am_i(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    match conn.ok(&Request::WhoAmI)? {
        Response::WhoAmI(w) => {
            let ip = w.client_info.iter().find(|c| c.auth_scheme == "ip");
            ensure(
                ip.is_some_and(|c| {
                    c.user == ctx.addr().ip().to_string() || ctx.addr().ip().is_loopback()
                }),
                "an ip identity",
                || format!("{:?}", w.client_info),
            )
        }
        other => Err(unexpected("a WhoAmIResponse", &other)),
    }
}

fn add_watch(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    match conn.ok(&req::add_watch(&path, AddWatchMode::Persistent))? {
        Response::Error(e) => ensure_eq("ErrorResponse.err", e.err, 0),
        other => Err(unexpected("an ErrorResponse body", &other)),
    }
}

fn remove_watches_none(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    conn.err(
        &req::remove_watches(&path, WatcherType::Any),
        ErrorCode::NoWatcher,
    )
}

fn check_watches_none(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    conn.err(
        &req::check_watches(&path, WatcherType::Data),
        ErrorCode::NoWatcher,
    )
}

fn reconfig_disabled(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    // Removing a member id no ensemble has: harmless where reconfig is on.
    let r = Request::Reconfig(ReconfigRequest {
        joining_servers: None,
        leaving_servers: Some("250".into()),
        new_members: None,
        cur_config_id: -1,
    });
    let (h, _) = conn.call(&r)?;
    match h.error_code() {
        ErrorCode::ReconfigDisabled => Ok(()),
        ErrorCode::Ok => Err(fail("a refusal", "reconfig applied")),
        other => Err(skip(format!("reconfig is on here (answered {other:?})"))),
    }
}

/// create with one ACL entry, which the server must refuse with INVALIDACL.
fn create_refused_acl(ctx: &mut Ctx, scheme: &str, id: &str) -> CheckResult {
    let mut conn = ctx.session()?;
    let acl = vec![Acl::new(Perms::ALL, Id::new(scheme, id))];
    let path = ctx.path("n");
    conn.err(
        &Request::Create(req::create_record(&path, None, acl, CreateMode::Persistent)),
        ErrorCode::InvalidAcl,
    )?;
    ensure(conn.exists(&path, false)?.is_none(), "no znode", || {
        "the znode was created".into()
    })
}

fn create_world_not_anyone(ctx: &mut Ctx) -> CheckResult {
    create_refused_acl(ctx, "world", "nobody")
}

fn create_bad_ip(ctx: &mut Ctx) -> CheckResult {
    create_refused_acl(ctx, "ip", "not-an-address")
}

fn create_bad_digest(ctx: &mut Ctx) -> CheckResult {
    create_refused_acl(ctx, "digest", "no-colon-here")
}

fn set_acl_no_node(ctx: &mut Ctx) -> CheckResult {
    missing(ctx, |p| req::set_acl(p, Acl::open_unsafe(), -1))
}

fn get_children2_no_node(ctx: &mut Ctx) -> CheckResult {
    missing(ctx, |p| req::get_children2(p, false))
}

fn get_ephemerals_none(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    // Another session's ephemeral under the prefix must not be listed.
    let mut other = ctx.session()?;
    other.create(&format!("{path}/theirs"), b"", CreateMode::Ephemeral)?;
    match conn.ok(&Request::GetEphemerals(GetEphemeralsRequest {
        prefix_path: path,
    }))? {
        Response::GetEphemerals(g) => ensure_eq("ephemerals", g.ephemerals, vec![]),
        other => Err(unexpected("a GetEphemeralsResponse", &other)),
    }
}

fn get_all_children_number_leaf(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    all_children_number(&mut conn, path, 0)
}

fn check_watches_set(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = make(ctx)?;
    conn.get_data(&path, true)?;
    let (h, _) = conn.call(&req::check_watches(&path, WatcherType::Data))?;
    ensure_eq("checkWatches err", h.error_code(), ErrorCode::Ok)?;
    // checkWatches only asks: the watch must still fire.
    let mut writer = ctx.session()?;
    writer.set_data(&path, b"v1", -1)?;
    let ev = conn.event()?;
    ensure_eq(
        "notification",
        (ev.event_type, ev.path),
        (zk_proto::EventType::NodeDataChanged, path),
    )
}
