//! Malformed records, field by field: each request record cut short at each field, and
//! length prefixes that are negative (below jute's null, -1) or far beyond the frame. The
//! server must answer the request with an error or close the connection, and the request
//! must change nothing; the runner's probe session checks the server after each.
//!
//! Each case targets a znode that exists (or, for a create, one that does not), so a server
//! that parsed the broken record leniently would answer it as a success and fail the check.

use bytes::{Bytes, BytesMut};
use zk_proto::{
    jute::Record, xid, Acl, AddWatchMode, AuthPacket, CreateMode, CreateTtlRequest,
    GetAllChildrenNumberRequest, GetEphemeralsRequest, MultiOp, MultiRequest, ReconfigRequest,
    Request, SetDataRequest, SetWatches, SetWatches2, WatcherType,
};

use super::malformed::{framed, no_session, refused};
use crate::{
    check::{ensure_eq, fail, Area, Check, CheckResult},
    ctx::{connect_request, Ctx, SESSION_TIMEOUT_MS},
    req,
};

const CONNECT: &str = "zookeeper.jute: ConnectRequest";
const BUG_RECONFIG_WEDGE: &str =
    "ZooKeeper, seen on 3.8.0 (we know of no JIRA issue): the leader's \
PrepRequestProcessor reads a ReconfigRequest before it gives the request a transaction header, so \
a reconfig it cannot read goes on without one: as a read, never committed. A follower that \
forwarded it waits for its commit forever, and its commit processor serves no write and no new \
session after it until the member restarts. Reproduce: on a follower's client port, a session \
sends reconfig (16) cut inside curConfigId: no answer, and no later connect to that member gets a \
session (the leader logs EOFException in ReconfigRequest.deserialize)";
const DANGER_RECONFIG_WEDGE: &str =
    "on a follower of a ZooKeeper 3.8 ensemble it stops that member \
from serving any write or new session until it restarts (and every check after it fails)";
const LENGTHS: &str = "jute: ustring, buffer and vector lengths (-1 is null, nothing lower)";

/// The checks of this part of the area.
pub const CHECKS: &[Check] = checks!(Area::Malformed, "malformed";
    "truncated.get-data.path", "getData cut inside its path is refused", "zookeeper.jute: GetDataRequest", t_get_data_path;
    "truncated.get-data.watch", "getData cut before its watch flag is refused", "zookeeper.jute: GetDataRequest", t_get_data_watch;
    "truncated.exists.watch", "exists cut before its watch flag is refused", "zookeeper.jute: ExistsRequest", t_exists_watch;
    "truncated.get-children.watch", "getChildren cut before its watch flag is refused", "zookeeper.jute: GetChildrenRequest", t_get_children_watch;
    "truncated.get-children2.watch", "getChildren2 cut before its watch flag is refused", "zookeeper.jute: GetChildren2Request", t_get_children2_watch;
    "truncated.create.path", "create cut inside its path is refused", "zookeeper.jute: CreateRequest", t_create_path;
    "truncated.create.data-length", "create cut inside its data length is refused", "zookeeper.jute: CreateRequest", t_create_data_length;
    "truncated.create.data", "create cut inside its data is refused", "zookeeper.jute: CreateRequest", t_create_data;
    "truncated.create.acl-count", "create cut inside its ACL count is refused", "zookeeper.jute: CreateRequest", t_create_acl_count;
    "truncated.create.acl-perms", "create cut before an ACL's perms is refused", "zookeeper.jute: ACL", t_create_acl_perms;
    "truncated.create.acl-scheme", "create cut inside an ACL's scheme is refused", "zookeeper.jute: Id", t_create_acl_scheme;
    "truncated.create.acl-id", "create cut inside an ACL's id is refused", "zookeeper.jute: Id", t_create_acl_id;
    "truncated.create.flags", "create cut inside its flags is refused", "zookeeper.jute: CreateRequest", t_create_flags;
    "truncated.create2.flags", "create2 cut before its flags is refused", "zookeeper.jute: CreateRequest", t_create2_flags;
    "truncated.create-container.acl", "createContainer cut inside its ACL is refused", "zookeeper.jute: CreateRequest", t_create_container_acl;
    "truncated.create-ttl.ttl", "createTTL cut inside its ttl is refused", "zookeeper.jute: CreateTTLRequest", t_create_ttl_ttl;
    "truncated.delete.path-length", "delete cut inside its path length is refused", "zookeeper.jute: DeleteRequest", t_delete_path_length;
    "truncated.delete.version", "delete cut inside its version is refused", "zookeeper.jute: DeleteRequest", t_delete_version;
    "truncated.set-data.data", "setData cut inside its data is refused", "zookeeper.jute: SetDataRequest", t_set_data_data;
    "truncated.set-data.version", "setData cut inside its version is refused", "zookeeper.jute: SetDataRequest", t_set_data_version;
    "truncated.get-acl.path", "getACL cut inside its path is refused", "zookeeper.jute: GetACLRequest", t_get_acl_path;
    "truncated.set-acl.acl-count", "setACL cut inside its ACL count is refused", "zookeeper.jute: SetACLRequest", t_set_acl_count;
    "truncated.set-acl.acl-id", "setACL cut inside an ACL's id is refused", "zookeeper.jute: SetACLRequest", t_set_acl_id;
    "truncated.set-acl.version", "setACL cut inside its version is refused", "zookeeper.jute: SetACLRequest", t_set_acl_version;
    "truncated.sync.path", "sync cut inside its path is refused", "zookeeper.jute: SyncRequest", t_sync_path;
    "truncated.check-watches.type", "checkWatches cut inside its watcher type is refused", "zookeeper.jute: CheckWatchesRequest", t_check_watches_type;
    "truncated.remove-watches.type", "removeWatches cut before its watcher type is refused", "zookeeper.jute: RemoveWatchesRequest", t_remove_watches_type;
    "truncated.add-watch.mode", "addWatch cut before its mode is refused", "zookeeper.jute: AddWatchRequest", t_add_watch_mode;
    "truncated.get-ephemerals.path", "getEphemerals cut inside its prefix is refused", "zookeeper.jute: GetEphemeralsRequest", t_get_ephemerals_path;
    "truncated.get-all-children-number.path", "getAllChildrenNumber cut after its path length is refused", "zookeeper.jute: GetAllChildrenNumberRequest", t_all_children_path;
    "truncated.set-watches.zxid", "SetWatches cut inside its relativeZxid is refused", "zookeeper.jute: SetWatches", t_set_watches_zxid;
    "truncated.set-watches.data-watches", "SetWatches cut inside a data watch path is refused", "zookeeper.jute: SetWatches", t_set_watches_data;
    "truncated.set-watches.child-watches", "SetWatches cut inside its last child watch path is refused", "zookeeper.jute: SetWatches", t_set_watches_child;
    "truncated.set-watches2.recursive", "SetWatches2 cut inside its last vector's count is refused", "zookeeper.jute: SetWatches2", t_set_watches2_recursive;
    "truncated.auth.type", "auth cut inside its type is refused", "zookeeper.jute: AuthPacket", t_auth_type;
    "truncated.auth.scheme", "auth cut inside its scheme is refused", "zookeeper.jute: AuthPacket", t_auth_scheme;
    "truncated.auth.data", "auth cut inside its credentials is refused", "zookeeper.jute: AuthPacket", t_auth_data;
    "truncated.multi.header", "multi cut inside an operation's MultiHeader is refused", "zookeeper.jute: MultiHeader", t_multi_header;
    "truncated.multi.op", "multi cut inside an operation's record is refused", "zookeeper.jute: MultiHeader", t_multi_op;
    "truncated.multi.end", "multi cut inside its end marker is refused", "zookeeper.jute: MultiHeader", t_multi_end;
    "truncated.multi-read.op", "multiRead cut inside an operation's record is refused", "zookeeper.jute: MultiHeader", t_multi_read_op;
    "truncated.reconfig.config-id", "reconfig cut inside its curConfigId is refused", "zookeeper.jute: ReconfigRequest", t_reconfig_config_id, bug = BUG_RECONFIG_WEDGE, danger = DANGER_RECONFIG_WEDGE;
    "truncated.connect.protocol-version", "a ConnectRequest cut inside protocolVersion gets no session", CONNECT, t_connect_protocol;
    "truncated.connect.last-zxid", "a ConnectRequest cut inside lastZxidSeen gets no session", CONNECT, t_connect_last_zxid;
    "truncated.connect.timeout", "a ConnectRequest cut after timeOut gets no session", CONNECT, t_connect_timeout;
    "truncated.connect.session-id", "a ConnectRequest cut inside sessionId gets no session", CONNECT, t_connect_session_id;
    "truncated.connect.passwd-length", "a ConnectRequest cut before its passwd gets no session", CONNECT, t_connect_passwd_length;
    "truncated.connect.passwd", "a ConnectRequest cut inside its passwd gets no session", CONNECT, t_connect_passwd;
    "negative-length.create.path", "create with a path length of -2 is refused", LENGTHS, n_create_path;
    "negative-length.create.data", "create with a data length of -3 is refused", LENGTHS, n_create_data;
    "negative-length.create.acl-count", "create with an ACL count of -2 is refused", LENGTHS, n_create_acl_count;
    "negative-length.create.acl-scheme", "create with an ACL scheme length of -2 is refused", LENGTHS, n_create_acl_scheme;
    "negative-length.create.acl-id", "create with an ACL id length of -2 is refused", LENGTHS, n_create_acl_id;
    "negative-length.set-data.data", "setData with a data length of -7 is refused", LENGTHS, n_set_data_data;
    "negative-length.set-acl.scheme", "setACL with an ACL scheme length of -2 is refused", LENGTHS, n_set_acl_scheme;
    "negative-length.exists.path", "exists with a path length of -9 is refused", LENGTHS, n_exists_path;
    "negative-length.sync.path", "sync with a path length of -2 is refused", LENGTHS, n_sync_path;
    "negative-length.add-watch.path", "addWatch with a path length of -2 is refused", LENGTHS, n_add_watch_path;
    "negative-length.set-watches.path", "SetWatches with a path length of -2 is refused", LENGTHS, n_set_watches_path;
    "negative-length.auth.scheme", "auth with a scheme length of -2 is refused", LENGTHS, n_auth_scheme;
    "negative-length.auth.data", "auth with a credentials length of -2 is refused", LENGTHS, n_auth_data;
    "negative-length.multi.path", "a multi operation with a path length of -2 is refused", LENGTHS, n_multi_path;
    "negative-length.connect.passwd", "a ConnectRequest with a passwd length of -2 gets no session", LENGTHS, n_connect_passwd;
    "huge-length.get-data.path", "getData with a path length of 2^31-1 is refused without allocating it", LENGTHS, h_get_data_path;
    "huge-length.create.data", "create with a data length of 2^31-1 is refused without allocating it", LENGTHS, h_create_data;
    "huge-length.set-data.data", "setData with a data length of 2^31-1 is refused without allocating it", LENGTHS, h_set_data_data;
    "huge-length.set-watches.count", "SetWatches with a watch count of 2^31-1 is refused without allocating it", LENGTHS, h_set_watches_count;
    "huge-length.auth.data", "auth with a credentials length of 2^31-1 is refused without allocating it", LENGTHS, h_auth_data;
    "huge-length.connect.passwd", "a ConnectRequest with a passwd length of 2^31-1 gets no session", LENGTHS, h_connect_passwd;
);

/// Where a record is cut or patched, in bytes of the record (after the request header).
#[derive(Debug, Clone, Copy)]
enum At {
    /// `n` bytes from the record's start.
    Start(usize),
    /// `n` bytes after the record's leading path (its length prefix and bytes).
    AfterPath(usize),
    /// `n` bytes before the record's end.
    End(usize),
}

/// What the target znode is before the malformed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Missing: a create of it would succeed.
    Missing,
    /// Created with data `x`.
    Exists,
    /// Created, with a data watch of this session on it.
    Watched,
}

/// The request a case breaks, its xid and what its target must be.
struct Case {
    build: fn(&str) -> Request,
    xid: i32,
    target: Target,
}

impl Case {
    fn on(build: fn(&str) -> Request, target: Target) -> Case {
        Case {
            build,
            xid: 100,
            target,
        }
    }

    fn with_xid(build: fn(&str) -> Request, xid: i32) -> Case {
        Case {
            build,
            xid,
            target: Target::Exists,
        }
    }
}

/// How the record is broken.
#[derive(Debug, Clone, Copy)]
enum Break {
    /// Cut at this point.
    Cut(At),
    /// The i32 at this point replaced (a length prefix).
    Patch(At, i32),
}

fn offset(at: At, path: &str, record_len: usize) -> usize {
    match at {
        At::Start(n) => n,
        At::AfterPath(n) => 4 + path.len() + n,
        At::End(n) => record_len.saturating_sub(n),
    }
}

/// The request's frame body (header and record), broken as `how` says.
fn broken(request: &Request, xid: i32, path: &str, how: Break) -> Result<Vec<u8>, crate::Finding> {
    let mut b = BytesMut::new();
    request.encode(xid, &mut b);
    let (header, record) = b.split_at(8);
    let mut out = header.to_vec();
    match how {
        Break::Cut(at) => {
            let keep = offset(at, path, record.len());
            // A cut at or past the end breaks nothing: the case itself would be wrong.
            let kept = record
                .get(..keep)
                .filter(|_| keep < record.len())
                .ok_or_else(|| fail("a cut inside the record", format!("cut at {keep}")))?;
            out.extend_from_slice(kept);
        }
        Break::Patch(at, value) => {
            let i = offset(at, path, record.len());
            let mut r = record.to_vec();
            r.get_mut(i..i + 4)
                .ok_or_else(|| fail("a field inside the record", format!("patch at {i}")))?
                .copy_from_slice(&value.to_be_bytes());
            out.extend_from_slice(&r);
        }
    }
    Ok(out)
}

/// Sends the case's request broken as `how` says: the server must refuse it, and the target
/// znode must be as it was.
fn send_broken(ctx: &mut Ctx, case: Case, how: Break) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    if case.target != Target::Missing {
        conn.create(&path, b"x", CreateMode::Persistent)?;
    }
    if case.target == Target::Watched {
        conn.get_data(&path, true)?;
    }
    let before = conn.exists(&path, false)?;
    let request = (case.build)(&path);
    let body = broken(&request, case.xid, &path, how)?;
    conn.send_bytes(&framed(&body))?;
    refused(&mut conn, case.xid, request.op_code())?;
    let after = ctx.session()?.exists(&path, false)?;
    ensure_eq(
        "the target's Stat after the malformed request",
        after,
        before,
    )
}

fn cut(ctx: &mut Ctx, case: Case, at: At) -> CheckResult {
    send_broken(ctx, case, Break::Cut(at))
}

fn patch(ctx: &mut Ctx, case: Case, at: At, value: i32) -> CheckResult {
    send_broken(ctx, case, Break::Patch(at, value))
}

/// A ConnectRequest broken as `how` says, as a connection's first frame: no session.
fn connect_broken(ctx: &mut Ctx, how: Break) -> CheckResult {
    let mut b = BytesMut::new();
    connect_request(0, &[0; 16], SESSION_TIMEOUT_MS).encode(&mut b);
    let mut body = b.to_vec();
    match how {
        Break::Cut(At::Start(n)) => body.truncate(n),
        Break::Patch(At::Start(i), v) => body[i..i + 4].copy_from_slice(&v.to_be_bytes()),
        other => {
            return Err(fail(
                "a connect case at a fixed offset",
                format!("{other:?}"),
            ))
        }
    }
    let mut conn = ctx.connect()?;
    conn.send_bytes(&framed(&body))?;
    no_session(&mut conn, "the connection closed without a session")
}

// The requests the cases break. Data "d" (create) and "dd" (setData), ACL world:anyone:
// create's record is path, 4+1 data, 4 count, 4 perms, 4+5 scheme, 4+6 id, 4 flags.

fn get_data(p: &str) -> Request {
    req::get_data(p, true)
}
fn exists(p: &str) -> Request {
    req::exists(p, true)
}
fn get_children(p: &str) -> Request {
    req::get_children(p, true)
}
fn get_children2(p: &str) -> Request {
    req::get_children2(p, true)
}
fn create(p: &str) -> Request {
    req::create(p, b"d", CreateMode::Persistent)
}
fn create2(p: &str) -> Request {
    req::create2(p, b"d", CreateMode::Persistent)
}
fn create_container(p: &str) -> Request {
    let r = req::create_record(
        p,
        req::data(b"d"),
        Acl::open_unsafe(),
        CreateMode::Container,
    );
    Request::CreateContainer(r)
}
fn create_ttl(p: &str) -> Request {
    Request::CreateTtl(CreateTtlRequest {
        path: p.into(),
        data: req::data(b"d"),
        acl: Acl::open_unsafe(),
        mode: CreateMode::PersistentWithTtl,
        ttl: 60_000,
    })
}
fn delete(p: &str) -> Request {
    req::delete(p, 0)
}
fn set_data(p: &str) -> Request {
    req::set_data(p, b"dd", -1)
}
fn get_acl(p: &str) -> Request {
    req::get_acl(p)
}
fn set_acl(p: &str) -> Request {
    req::set_acl(p, Acl::open_unsafe(), -1)
}
fn sync(p: &str) -> Request {
    req::sync(p)
}
fn check_watches(p: &str) -> Request {
    req::check_watches(p, WatcherType::Data)
}
fn remove_watches(p: &str) -> Request {
    req::remove_watches(p, WatcherType::Data)
}
fn add_watch(p: &str) -> Request {
    req::add_watch(p, AddWatchMode::Persistent)
}
fn get_ephemerals(p: &str) -> Request {
    Request::GetEphemerals(GetEphemeralsRequest {
        prefix_path: p.into(),
    })
}
fn all_children(p: &str) -> Request {
    Request::GetAllChildrenNumber(GetAllChildrenNumberRequest { path: p.into() })
}
/// relativeZxid (8), then data [p], exist [], child [p].
fn set_watches(p: &str) -> Request {
    Request::SetWatches(SetWatches {
        relative_zxid: 1,
        data_watches: vec![p.into()],
        exist_watches: vec![],
        child_watches: vec![p.into()],
    })
}
fn set_watches2(p: &str) -> Request {
    Request::SetWatches2(SetWatches2 {
        relative_zxid: 1,
        data_watches: vec![p.into()],
        exist_watches: vec![],
        child_watches: vec![],
        persistent_watches: vec![],
        persistent_recursive_watches: vec![],
    })
}
/// type (4), scheme "digest" (4+6), credentials "u:p" (4+3).
fn auth(_: &str) -> Request {
    Request::Auth(AuthPacket {
        auth_type: 0,
        scheme: "digest".into(),
        auth: Some(Bytes::from_static(b"u:p")),
    })
}
/// One setData (its 9-byte MultiHeader, then its record), then the 9-byte end marker.
fn multi(p: &str) -> Request {
    Request::Multi(MultiRequest {
        ops: vec![MultiOp::SetData(SetDataRequest {
            path: p.into(),
            data: req::data(b"m"),
            version: -1,
        })],
    })
}
fn multi_read(p: &str) -> Request {
    Request::MultiRead(MultiRequest {
        ops: vec![MultiOp::GetData(zk_proto::GetDataRequest {
            path: p.into(),
            watch: false,
        })],
    })
}
fn reconfig(_: &str) -> Request {
    Request::Reconfig(ReconfigRequest {
        joining_servers: None,
        leaving_servers: Some("250".into()),
        new_members: None,
        cur_config_id: -1,
    })
}

use At::{AfterPath, End, Start};
use Target::{Exists, Missing, Watched};

/// One check function per case: `name => how(ctx, case, ...)`.
macro_rules! cases {
    ($($name:ident => $how:ident($($arg:expr),*);)*) => {
        $(fn $name(ctx: &mut Ctx) -> CheckResult { $how(ctx, $($arg),*) })*
    };
}

cases! {
    t_get_data_path => cut(Case::on(get_data, Exists), Start(6));
    t_get_data_watch => cut(Case::on(get_data, Exists), End(1));
    t_exists_watch => cut(Case::on(exists, Exists), End(1));
    t_get_children_watch => cut(Case::on(get_children, Exists), End(1));
    t_get_children2_watch => cut(Case::on(get_children2, Exists), End(1));
    t_create_path => cut(Case::on(create, Missing), Start(6));
    t_create_data_length => cut(Case::on(create, Missing), AfterPath(2));
    t_create_data => cut(Case::on(create, Missing), AfterPath(4));
    t_create_acl_count => cut(Case::on(create, Missing), AfterPath(7));
    t_create_acl_perms => cut(Case::on(create, Missing), AfterPath(11));
    t_create_acl_scheme => cut(Case::on(create, Missing), AfterPath(19));
    t_create_acl_id => cut(Case::on(create, Missing), AfterPath(28));
    t_create_flags => cut(Case::on(create, Missing), End(2));
    t_create2_flags => cut(Case::on(create2, Missing), End(4));
    t_create_container_acl => cut(Case::on(create_container, Missing), AfterPath(9));
    t_create_ttl_ttl => cut(Case::on(create_ttl, Missing), End(5));
    t_delete_path_length => cut(Case::on(delete, Exists), Start(3));
    t_delete_version => cut(Case::on(delete, Exists), End(3));
    t_set_data_data => cut(Case::on(set_data, Exists), AfterPath(5));
    t_set_data_version => cut(Case::on(set_data, Exists), End(1));
    t_get_acl_path => cut(Case::on(get_acl, Exists), Start(7));
    t_set_acl_count => cut(Case::on(set_acl, Exists), AfterPath(2));
    t_set_acl_id => cut(Case::on(set_acl, Exists), AfterPath(23));
    t_set_acl_version => cut(Case::on(set_acl, Exists), End(2));
    t_sync_path => cut(Case::on(sync, Exists), Start(5));
    t_check_watches_type => cut(Case::on(check_watches, Watched), End(2));
    t_remove_watches_type => cut(Case::on(remove_watches, Watched), End(4));
    t_add_watch_mode => cut(Case::on(add_watch, Exists), End(4));
    t_get_ephemerals_path => cut(Case::on(get_ephemerals, Exists), Start(9));
    t_all_children_path => cut(Case::on(all_children, Exists), Start(4));
    t_set_watches_zxid => cut(Case::with_xid(set_watches, xid::SET_WATCHES), Start(5));
    t_set_watches_data => cut(Case::with_xid(set_watches, xid::SET_WATCHES), Start(19));
    t_set_watches_child => cut(Case::with_xid(set_watches, xid::SET_WATCHES), End(2));
    t_set_watches2_recursive => cut(Case::with_xid(set_watches2, xid::SET_WATCHES), End(2));
    t_auth_type => cut(Case::with_xid(auth, xid::AUTH), Start(2));
    t_auth_scheme => cut(Case::with_xid(auth, xid::AUTH), Start(10));
    t_auth_data => cut(Case::with_xid(auth, xid::AUTH), End(1));
    t_multi_header => cut(Case::on(multi, Exists), Start(5));
    t_multi_op => cut(Case::on(multi, Exists), End(10));
    t_multi_end => cut(Case::on(multi, Exists), End(4));
    t_multi_read_op => cut(Case::on(multi_read, Exists), End(10));
    t_reconfig_config_id => cut(Case::on(reconfig, Exists), End(4));
    t_connect_protocol => connect_broken(Break::Cut(Start(2)));
    t_connect_last_zxid => connect_broken(Break::Cut(Start(8)));
    t_connect_timeout => connect_broken(Break::Cut(Start(16)));
    t_connect_session_id => connect_broken(Break::Cut(Start(20)));
    t_connect_passwd_length => connect_broken(Break::Cut(Start(24)));
    t_connect_passwd => connect_broken(Break::Cut(Start(36)));
    n_create_path => patch(Case::on(create, Missing), Start(0), -2);
    n_create_data => patch(Case::on(create, Missing), AfterPath(0), -3);
    n_create_acl_count => patch(Case::on(create, Missing), AfterPath(5), -2);
    n_create_acl_scheme => patch(Case::on(create, Missing), AfterPath(13), -2);
    n_create_acl_id => patch(Case::on(create, Missing), AfterPath(22), -2);
    n_set_data_data => patch(Case::on(set_data, Exists), AfterPath(0), -7);
    n_set_acl_scheme => patch(Case::on(set_acl, Exists), AfterPath(8), -2);
    n_exists_path => patch(Case::on(exists, Exists), Start(0), -9);
    n_sync_path => patch(Case::on(sync, Exists), Start(0), -2);
    n_add_watch_path => patch(Case::on(add_watch, Exists), Start(0), -2);
    n_set_watches_path => patch(Case::with_xid(set_watches, xid::SET_WATCHES), Start(12), -2);
    n_auth_scheme => patch(Case::with_xid(auth, xid::AUTH), Start(4), -2);
    n_auth_data => patch(Case::with_xid(auth, xid::AUTH), End(7), -2);
    n_multi_path => patch(Case::on(multi, Exists), Start(9), -2);
    n_connect_passwd => connect_broken(Break::Patch(Start(24), -2));
    h_get_data_path => patch(Case::on(get_data, Exists), Start(0), i32::MAX);
    h_create_data => patch(Case::on(create, Missing), AfterPath(0), i32::MAX);
    h_set_data_data => patch(Case::on(set_data, Exists), AfterPath(0), i32::MAX);
    h_set_watches_count => patch(Case::with_xid(set_watches, xid::SET_WATCHES), Start(8), i32::MAX);
    h_auth_data => patch(Case::with_xid(auth, xid::AUTH), End(7), i32::MAX);
    h_connect_passwd => connect_broken(Break::Patch(Start(24), i32::MAX));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_and_patches_land_where_the_cases_say() {
        let p = "/abc";
        // create: path (4+4), data length (4) and "d", ACL count...
        let body = broken(&create(p), 7, p, Break::Cut(AfterPath(4))).unwrap();
        assert_eq!(body.len(), 8 + 8 + 4);
        assert_eq!(&body[16..20], &1i32.to_be_bytes());
        let body = broken(&create(p), 7, p, Break::Patch(AfterPath(5), -2)).unwrap();
        assert_eq!(&body[8 + 8 + 5..8 + 8 + 9], &(-2i32).to_be_bytes());
        // The ACL's id length: 4 count + 4 perms + 4+5 "world" after the data.
        let body = broken(&create(p), 7, p, Break::Patch(AfterPath(22), -2)).unwrap();
        assert_eq!(
            &body[8 + 8 + 5 + 17..8 + 8 + 5 + 21],
            &(-2i32).to_be_bytes()
        );
        // A cut at the end breaks nothing, and is refused as a broken case.
        assert!(broken(&create(p), 7, p, Break::Cut(End(0))).is_err());
        assert!(broken(&create(p), 7, p, Break::Patch(End(2), 0)).is_err());
    }
}
