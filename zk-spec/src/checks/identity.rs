//! What the sasl and x509 areas share: znodes only one identity may use, an auth:'' ACL
//! turning into the session's identity, and a digest identity of the same name that must
//! not pass for it.

use zk_proto::{Acl, CreateMode, ErrorCode, Id, Perms, Request, Response};

use crate::{
    check::{ensure, ensure_eq, CheckResult},
    ctx::{unexpected, Conn, Ctx},
    req,
};

/// Creates `path` with all permissions for `scheme:id` only.
pub(crate) fn create_only_for(conn: &mut Conn, path: &str, scheme: &str, id: &str) -> CheckResult {
    create_with(conn, path, Id::new(scheme, id))
}

fn create_with(conn: &mut Conn, path: &str, id: Id) -> CheckResult {
    let acl = vec![Acl::new(Perms::ALL, id)];
    let create = Request::Create(req::create_record(
        path,
        req::data(b"i"),
        acl,
        CreateMode::Persistent,
    ));
    conn.ok(&create).map(drop)
}

/// Creates `path` with the ACL auth:'' on `conn`: getACL must show `scheme:id`.
pub(crate) fn auth_becomes(conn: &mut Conn, path: &str, scheme: &str, id: &str) -> CheckResult {
    create_with(conn, path, Id::new("auth", ""))?;
    let acl = match conn.ok(&req::get_acl(path))? {
        Response::GetAcl(a) => a.acl,
        other => return Err(unexpected("a getACL response", &other)),
    };
    ensure(
        acl.iter().any(|a| a.id.scheme == scheme && a.id.id == id),
        format!("{scheme}:{id} in the ACL"),
        || format!("{acl:?}"),
    )
}

/// A plain session with the digest identity `name` is refused `path` with NOAUTH.
pub(crate) fn digest_refused(ctx: &mut Ctx, path: &str, name: &str, password: &str) -> CheckResult {
    let mut digest = ctx.session()?;
    let code = digest.auth("digest", format!("{name}:{password}").as_bytes())?;
    ensure_eq("the digest auth", code, ErrorCode::Ok)?;
    digest.err(&req::get_data(path, false), ErrorCode::NoAuth)?;
    digest.close()
}
