//! ACLs and authentication: world, digest (through the auth scheme), ip.

use zk_proto::{xid, Acl, AuthPacket, CreateMode, ErrorCode, Id, OpCode, Perms, Request, Response};

use crate::{
    check::{ensure, ensure_eq, Area, Check, CheckResult, Finding},
    ctx::{unexpected, Conn, Ctx},
    req,
};

const GUIDE: &str = "Programmer's Guide: ZooKeeper access control using ACLs";
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
