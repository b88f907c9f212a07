//! ACLs and authentication: world, digest (through the auth scheme), ip.

use zk_proto::{xid, Acl, AuthPacket, CreateMode, ErrorCode, Id, OpCode, Perms, Request, Response};

use crate::{
    check::{ensure, ensure_eq, Area, Check, CheckResult, Finding},
    ctx::{unexpected, Conn, Ctx},
    req,
};

const GUIDE: &str = "Programmer's Guide: ZooKeeper access control using ACLs";
const PERMS: &str = "Programmer's Guide: ACL Permissions";
const SCHEMES: &str = "Programmer's Guide: Built in ACL Schemes";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Acl, "acl";
    "world.read-only", "world:anyone READ allows getData and refuses setData with NOAUTH", SCHEMES, world_read_only;
    "create-needs-create", "creating a child needs CREATE on the parent", GUIDE, create_needs_create;
    "delete-needs-delete", "deleting a child needs DELETE on the parent", GUIDE, delete_needs_delete;
    "set-acl-needs-admin", "setACL needs ADMIN on the znode", GUIDE, set_acl_needs_admin;
    "get-acl-needs-read-or-admin", "getACL needs READ or ADMIN on the znode", GUIDE, get_acl_needs_read_or_admin;
    "digest.auth", "auth (100) digest user:password is answered with xid -4 and err 0", "zookeeper.jute: AuthPacket", digest_auth;
    "digest.acl", "an auth:'' ACL becomes the digest identity, enforced against other sessions", SCHEMES, digest_acl;
    "auth-scheme.no-identity", "an auth:'' ACL without any authenticated identity fails with INVALIDACL", SCHEMES, auth_no_identity;
    "ip.allow", "ip:<client address> grants access", SCHEMES, ip_allow;
    "ip.deny", "an ip ACL for another address refuses with NOAUTH", SCHEMES, ip_deny;
    "unknown-scheme", "an ACL with an unknown scheme fails with INVALIDACL", GUIDE, unknown_scheme;
    "auth.unknown-scheme", "auth with an unknown scheme fails with AUTHFAILED and the connection closes", "zookeeper.jute: AuthPacket", auth_unknown_scheme;
    "who-am-i.digest", "whoAmI lists the digest identity after auth", "zookeeper.jute: WhoAmIResponse", who_am_i_digest;
    "perm.get-data-needs-read", "getData without READ fails with NOAUTH", PERMS, get_data_needs_read;
    "perm.get-children-needs-read", "getChildren without READ fails with NOAUTH", PERMS, get_children_needs_read;
    "perm.get-children2-needs-read", "getChildren2 without READ fails with NOAUTH", PERMS, get_children2_needs_read;
    "perm.set-data-needs-write", "setData without WRITE fails with NOAUTH", PERMS, set_data_needs_write;
    "perm.multi-set-data-needs-write", "a multi's setData without WRITE fails with a per-op NOAUTH", PERMS, multi_set_data_needs_write;
    "perm.write-only", "WRITE alone allows setData and refuses getData", PERMS, write_only;
    "perm.exists-needs-nothing", "exists answers a Stat on a znode that grants the session nothing", PERMS, exists_needs_nothing;
    "perm.delete-ignores-own-acl", "deleting a znode needs DELETE on its parent only, not on itself", PERMS, delete_ignores_own_acl;
    "perm.admin-only", "ADMIN alone allows getACL and setACL and refuses getData", PERMS, admin_only;
    "ip.cidr-allow", "ip:127.0.0.0/8 grants a loopback client", SCHEMES, ip_cidr_allow;
    "ip.cidr-deny", "ip:192.0.2.0/24 refuses a loopback client with NOAUTH", SCHEMES, ip_cidr_deny;
    "ip.bad-mask", "an ip ACL with a /99 mask fails with INVALIDACL", SCHEMES, ip_bad_mask;
    "digest.two-identities", "a session with two digest identities is granted by an ACL for either", SCHEMES, digest_two_identities;
);

/// Sends an auth packet; its reply's error code.
fn auth(conn: &mut Conn, scheme: &str, credentials: &[u8]) -> Result<ErrorCode, Finding> {
    let packet = Request::Auth(AuthPacket {
        auth_type: 0,
        scheme: scheme.into(),
        auth: req::data(credentials),
    });
    conn.send_with_xid(xid::AUTH, &packet)?;
    let (h, _) = conn.recv(xid::AUTH, OpCode::Auth)?;
    Ok(h.error_code())
}

fn create_with(
    conn: &mut Conn,
    path: &str,
    acl: Vec<Acl>,
) -> Result<(zk_proto::ReplyHeader, Option<Response>), Finding> {
    conn.call(&Request::Create(req::create_record(
        path,
        None,
        acl,
        CreateMode::Persistent,
    )))
}

fn created_with(conn: &mut Conn, path: &str, acl: Vec<Acl>) -> CheckResult {
    let (h, _) = create_with(conn, path, acl)?;
    ensure_eq("create err", h.error_code(), ErrorCode::Ok)
}

fn world_read_only(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("ro");
    created_with(&mut conn, &path, Acl::read_unsafe())?;
    conn.get_data(&path, false)?;
    conn.err(&req::set_data(&path, b"x", -1), ErrorCode::NoAuth)
}

fn create_needs_create(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("p");
    created_with(
        &mut conn,
        &path,
        vec![Acl::new(
            Perms(Perms::READ.0 | Perms::DELETE.0),
            Id::anyone(),
        )],
    )?;
    conn.err(
        &req::create(&format!("{path}/c"), b"", CreateMode::Persistent),
        ErrorCode::NoAuth,
    )
}

fn delete_needs_delete(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("p");
    conn.create(&path, b"", CreateMode::Persistent)?;
    let child = format!("{path}/c");
    conn.create(&child, b"", CreateMode::Persistent)?;
    let perms = Perms(Perms::ALL.0 & !Perms::DELETE.0);
    conn.ok(&req::set_acl(
        &path,
        vec![Acl::new(perms, Id::anyone())],
        -1,
    ))?;
    conn.err(&req::delete(&child, -1), ErrorCode::NoAuth)
}

fn digest_auth(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    ensure_eq(
        "auth err",
        auth(&mut conn, "digest", b"alice:secret")?,
        ErrorCode::Ok,
    )?;
    conn.ok(&req::exists("/", false)).map(drop)
}

fn digest_acl(ctx: &mut Ctx) -> CheckResult {
    let mut alice = ctx.session()?;
    auth(&mut alice, "digest", b"alice:secret")?;
    let path = ctx.path("secret");
    created_with(&mut alice, &path, vec![Acl::new(Perms::ALL, Id::auth())])?;
    match alice.ok(&req::get_acl(&path))? {
        Response::GetAcl(g) => {
            let ok = g.acl.len() == 1
                && g.acl[0].id.scheme == "digest"
                && g.acl[0].id.id.starts_with("alice:");
            ensure(ok, "one digest ACL for alice:<hash>", || {
                format!("{:?}", g.acl)
            })?;
        }
        other => return Err(unexpected("a GetACLResponse", &other)),
    }
    let mut anonymous = ctx.session()?;
    anonymous.err(&req::get_data(&path, false), ErrorCode::NoAuth)?;
    let mut mallory = ctx.session()?;
    auth(&mut mallory, "digest", b"alice:wrong")?;
    mallory.err(&req::get_data(&path, false), ErrorCode::NoAuth)?;
    let mut again = ctx.session()?;
    auth(&mut again, "digest", b"alice:secret")?;
    again.get_data(&path, false).map(drop)
}

fn auth_no_identity(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let (h, _) = create_with(
        &mut conn,
        &ctx.path("n"),
        vec![Acl::new(Perms::ALL, Id::auth())],
    )?;
    ensure_eq("create err", h.error_code(), ErrorCode::InvalidAcl)
}

fn ip_allow(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("ip");
    let ip = conn
        .stream()
        .local_addr()
        .map_err(|e| crate::check::fail("a local address", e.to_string()))?
        .ip();
    created_with(
        &mut conn,
        &path,
        vec![Acl::new(Perms::ALL, Id::new("ip", ip.to_string()))],
    )?;
    conn.set_data(&path, b"ok", -1).map(drop)
}

fn ip_deny(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("ip");
    created_with(
        &mut conn,
        &path,
        vec![Acl::new(Perms::ALL, Id::new("ip", "192.0.2.1"))],
    )?;
    conn.err(&req::get_data(&path, false), ErrorCode::NoAuth)
}

fn unknown_scheme(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let (h, _) = create_with(
        &mut conn,
        &ctx.path("n"),
        vec![Acl::new(Perms::ALL, Id::new("no-such-scheme", "x"))],
    )?;
    ensure_eq("create err", h.error_code(), ErrorCode::InvalidAcl)
}

fn auth_refused(ctx: &mut Ctx, scheme: &str, credentials: &[u8]) -> CheckResult {
    let mut conn = ctx.session()?;
    ensure_eq(
        "auth err",
        auth(&mut conn, scheme, credentials)?,
        ErrorCode::AuthFailed,
    )?;
    conn.expect_closed("the server closes the connection after AUTHFAILED")
}

fn auth_unknown_scheme(ctx: &mut Ctx) -> CheckResult {
    auth_refused(ctx, "no-such-scheme", b"x")
}

fn who_am_i_digest(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    auth(&mut conn, "digest", b"alice:secret")?;
    match conn.ok(&Request::WhoAmI)? {
        Response::WhoAmI(w) => ensure(
            w.client_info
                .iter()
                .any(|c| c.auth_scheme == "digest" && c.user == "alice"),
            "digest:alice among the identities",
            || format!("{:?}", w.client_info),
        ),
        other => Err(unexpected("a WhoAmIResponse", &other)),
    }
}

/// A znode whose ACL gives world:anyone only `perms`.
fn with_world_perms(ctx: &mut Ctx, name: &str, perms: Perms) -> Result<(Conn, String), Finding> {
    let mut conn = ctx.session()?;
    let path = ctx.path(name);
    created_with(&mut conn, &path, vec![Acl::new(perms, Id::anyone())])?;
    Ok((conn, path))
}

fn set_acl_needs_admin(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = with_world_perms(ctx, "p", Perms(Perms::ALL.0 & !Perms::ADMIN.0))?;
    conn.err(
        &req::set_acl(&path, Acl::open_unsafe(), -1),
        ErrorCode::NoAuth,
    )
}

fn get_acl_needs_read_or_admin(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = with_world_perms(ctx, "write", Perms::WRITE)?;
    conn.err(&req::get_acl(&path), ErrorCode::NoAuth)?;
    let (mut conn, path) = with_world_perms(ctx, "admin", Perms::ADMIN)?;
    conn.ok(&req::get_acl(&path)).map(drop)
}

/// A znode whose only ACL entry gives world:anyone `perms`.
fn with_perms(ctx: &mut Ctx, perms: Perms) -> Result<(Conn, String), Finding> {
    let mut conn = ctx.session()?;
    let path = ctx.path("p");
    created_with(&mut conn, &path, vec![Acl::new(perms, Id::anyone())])?;
    Ok((conn, path))
}

fn all_but(perm: Perms) -> Perms {
    Perms(Perms::ALL.0 & !perm.0)
}

fn no_auth(ctx: &mut Ctx, missing: Perms, request: fn(&str) -> Request) -> CheckResult {
    let (mut conn, path) = with_perms(ctx, all_but(missing))?;
    conn.err(&request(&path), ErrorCode::NoAuth)
}

fn get_data_needs_read(ctx: &mut Ctx) -> CheckResult {
    no_auth(ctx, Perms::READ, |p| req::get_data(p, false))
}

fn get_children_needs_read(ctx: &mut Ctx) -> CheckResult {
    no_auth(ctx, Perms::READ, |p| req::get_children(p, false))
}

fn get_children2_needs_read(ctx: &mut Ctx) -> CheckResult {
    no_auth(ctx, Perms::READ, |p| req::get_children2(p, false))
}

fn set_data_needs_write(ctx: &mut Ctx) -> CheckResult {
    no_auth(ctx, Perms::WRITE, |p| req::set_data(p, b"x", -1))
}

fn multi_set_data_needs_write(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = with_perms(ctx, all_but(Perms::WRITE))?;
    let ops = vec![zk_proto::MultiOp::SetData(zk_proto::SetDataRequest {
        path,
        data: req::data(b"x"),
        version: -1,
    })];
    match conn.call(&Request::Multi(zk_proto::MultiRequest { ops }))? {
        (_, Some(Response::Multi(m))) => ensure_eq(
            "results",
            m.results,
            vec![zk_proto::MultiResult::Error(ErrorCode::NoAuth)],
        ),
        (h, body) => Err(crate::check::fail(
            "a MultiResponse",
            format!("{:?} {body:?}", h.error_code()),
        )),
    }
}

fn write_only(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = with_perms(ctx, Perms::WRITE)?;
    conn.set_data(&path, b"x", -1)?;
    conn.err(&req::get_data(&path, false), ErrorCode::NoAuth)
}

/// An ACL that grants everything to an address that is not the checker's.
fn elsewhere() -> Vec<Acl> {
    vec![Acl::new(Perms::ALL, Id::new("ip", "192.0.2.1"))]
}

fn exists_needs_nothing(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("p");
    created_with(&mut conn, &path, elsewhere())?;
    ensure(conn.exists(&path, false)?.is_some(), "a Stat", || {
        "NONODE".into()
    })
}

fn delete_ignores_own_acl(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("p");
    conn.create(&path, b"", CreateMode::Persistent)?;
    let child = format!("{path}/c");
    created_with(&mut conn, &child, elsewhere())?;
    conn.delete(&child)
}

fn admin_only(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = with_perms(ctx, Perms::ADMIN)?;
    conn.ok(&req::get_acl(&path))?;
    conn.ok(&req::set_acl(
        &path,
        vec![Acl::new(Perms::ADMIN, Id::anyone())],
        -1,
    ))?;
    conn.err(&req::get_data(&path, false), ErrorCode::NoAuth)
}

fn ip_acl(ctx: &mut Ctx, id: &str) -> Result<(Conn, String), Finding> {
    let mut conn = ctx.session()?;
    let path = ctx.path("ip");
    created_with(
        &mut conn,
        &path,
        vec![Acl::new(Perms::ALL, Id::new("ip", id))],
    )?;
    Ok((conn, path))
}

fn ip_cidr_allow(ctx: &mut Ctx) -> CheckResult {
    if !ctx.addr().ip().is_loopback() {
        return Err(crate::check::skip(
            "the server is not on a loopback address",
        ));
    }
    let (mut conn, path) = ip_acl(ctx, "127.0.0.0/8")?;
    conn.get_data(&path, false).map(drop)
}

fn ip_cidr_deny(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = ip_acl(ctx, "192.0.2.0/24")?;
    conn.err(&req::get_data(&path, false), ErrorCode::NoAuth)
}

fn ip_bad_mask(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("ip");
    let acl = vec![Acl::new(Perms::ALL, Id::new("ip", "127.0.0.1/99"))];
    let (h, _) = create_with(&mut conn, &path, acl)?;
    ensure_eq("create err", h.error_code(), ErrorCode::InvalidAcl)
}

fn digest_two_identities(ctx: &mut Ctx) -> CheckResult {
    let mut bob = ctx.session()?;
    auth(&mut bob, "digest", b"bob:pw")?;
    let path = ctx.path("bob");
    created_with(&mut bob, &path, vec![Acl::new(Perms::ALL, Id::auth())])?;
    let mut both = ctx.session()?;
    // Bob's identity first: a server that kept only the latest one would refuse.
    auth(&mut both, "digest", b"bob:pw")?;
    auth(&mut both, "digest", b"alice:secret")?;
    both.get_data(&path, false).map(drop)
}
