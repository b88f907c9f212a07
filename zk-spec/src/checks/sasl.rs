//! SASL (`--sasl user:password`, a DIGEST-MD5 user of the server's JAAS `Server` section):
//! the login, refused credentials, the sasl ACL scheme, and enforced SASL
//! (`enforce.auth.enabled`, new in 3.8).

use zk_proto::{ErrorCode, Request, Response};

use super::identity;
use crate::{
    check::{ensure, ensure_eq, skip, Area, Check, CheckResult, Finding},
    ctx::{unexpected, Conn, Ctx},
    req, sasl_login,
    setup::Credentials,
};

const GUIDE_SASL: &str = "ZooKeeper and SASL (Programmer's Guide: ACL schemes, sasl)";
const JUTE_SASL: &str = "zookeeper.jute: GetSASLRequest / SetSASLResponse";
const BUG_LAST_USER: &str =
    "ZOOKEEPER-4839 (seen on 3.8.0; fixed upstream by apache/zookeeper pull 2176): the \
server's SASL callback handler is shared by every connection and keeps the last user who logged \
in, so an unknown user name logs in with that user's password. Reproduce: log in as bob, then \
as nobody with bob's password: accepted";
const ENFORCE: &str = "Administrator's Guide: enforce.auth.enabled / enforce.auth.schemes";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Sasl, "sasl";
    "digest-md5", "a DIGEST-MD5 login succeeds and whoAmI lists sasl:<user>", JUTE_SASL, digest_md5;
    "wrong-password", "a DIGEST-MD5 login with a wrong password fails with AUTHFAILED (or SESSIONCLOSEDREQUIRESASLAUTH where SASL is required) and the connection closes", JUTE_SASL, wrong_password;
    "unknown-user", "a DIGEST-MD5 login as an unknown user fails with AUTHFAILED and the connection closes", JUTE_SASL, unknown_user;
    "unknown-user.last-password", "an unknown user with the password of the last user to log in is refused too", JUTE_SASL, unknown_user_last_password, bug = BUG_LAST_USER;
    "acl", "a sasl:<user> ACL lets that user's sessions in and refuses others with NOAUTH", GUIDE_SASL, acl;
    "acl.digest-is-not-sasl", "a digest identity of the same name does not satisfy a sasl ACL", GUIDE_SASL, digest_is_not_sasl;
    "auth-scheme", "an auth:'' ACL set by a SASL session becomes sasl:<user>", GUIDE_SASL, auth_scheme;
    "enforced", "where SASL is required, a session that has not logged in gets SESSIONCLOSEDREQUIRESASLAUTH and is closed", ENFORCE, enforced;
);

fn user(ctx: &Ctx) -> Result<Credentials, Finding> {
    ctx.setup()
        .sasl
        .clone()
        .ok_or_else(|| skip("needs a SASL DIGEST-MD5 user: --sasl user:password"))
}

/// Whether the server requires SASL: a plain session's first request tells.
fn required(ctx: &mut Ctx) -> Result<bool, Finding> {
    let mut plain = ctx.session()?;
    let (h, _) = plain.call(&req::exists("/", false))?;
    Ok(h.error_code() == ErrorCode::SessionClosedRequireSaslAuth)
}

fn digest_md5(ctx: &mut Ctx) -> CheckResult {
    let user = user(ctx)?;
    let mut conn = ctx.sasl_session(&user)?;
    match conn.ok(&Request::WhoAmI)? {
        Response::WhoAmI(w) => ensure(
            w.client_info
                .iter()
                .any(|c| c.auth_scheme == "sasl" && c.user == user.user),
            format!("sasl:{} among the identities", user.user),
            || format!("{:?}", w.client_info),
        )?,
        other => return Err(unexpected("a WhoAmIResponse", &other)),
    }
    conn.close()
}

fn refused(ctx: &mut Ctx, user: &Credentials) -> CheckResult {
    // Where SASL is required, 3.8 answers a failed login as it does a request without one.
    let want = if required(ctx)? {
        ErrorCode::SessionClosedRequireSaslAuth
    } else {
        ErrorCode::AuthFailed
    };
    let mut conn = ctx.session()?;
    let code = sasl_login::login(&mut conn, user)?;
    ensure_eq("the login's error", code, want)?;
    conn.expect_closed("the server closes the connection after a failed login")
}

fn wrong_password(ctx: &mut Ctx) -> CheckResult {
    let mut user = user(ctx)?;
    user.password.push_str("-wrong");
    refused(ctx, &user)
}

fn unknown_user(ctx: &mut Ctx) -> CheckResult {
    let mut user = user(ctx)?;
    user.user.push_str("-nobody");
    user.password.push_str("-nobody");
    refused(ctx, &user)
}

fn unknown_user_last_password(ctx: &mut Ctx) -> CheckResult {
    let user = user(ctx)?;
    ctx.sasl_session(&user)?.close()?;
    let nobody = Credentials {
        user: format!("{}-nobody", user.user),
        password: user.password,
    };
    refused(ctx, &nobody)
}

/// A znode only `user` (scheme sasl) may use, made by a session logged in as `user`.
fn sasl_only(ctx: &mut Ctx, user: &Credentials) -> Result<(Conn, String), Finding> {
    let mut conn = ctx.sasl_session(user)?;
    let path = ctx.path("sasl-only");
    identity::create_only_for(&mut conn, &path, "sasl", &user.user)?;
    Ok((conn, path))
}

fn acl(ctx: &mut Ctx) -> CheckResult {
    let user = user(ctx)?;
    let (mut owner, path) = sasl_only(ctx, &user)?;
    owner.close()?;
    let mut again = ctx.sasl_session(&user)?;
    again.get_data(&path, false)?;
    again.close()?;
    if required(ctx)? {
        // Another session cannot even ask.
        return Ok(());
    }
    let mut plain = ctx.session()?;
    plain.err(&req::get_data(&path, false), ErrorCode::NoAuth)?;
    plain.close()
}

fn digest_is_not_sasl(ctx: &mut Ctx) -> CheckResult {
    let user = user(ctx)?;
    if required(ctx)? {
        return Err(skip(
            "the server requires SASL: a digest-only session is not served",
        ));
    }
    let (mut owner, path) = sasl_only(ctx, &user)?;
    identity::digest_refused(ctx, &path, &user.user, &user.password)?;
    owner.close()
}

fn auth_scheme(ctx: &mut Ctx) -> CheckResult {
    let user = user(ctx)?;
    let mut conn = ctx.sasl_session(&user)?;
    let path = ctx.path("auth");
    identity::auth_becomes(&mut conn, &path, "sasl", &user.user)?;
    conn.close()
}

fn enforced(ctx: &mut Ctx) -> CheckResult {
    user(ctx)?;
    let mut plain = ctx.session()?;
    let (h, _) = plain.call(&req::exists("/", false))?;
    if h.error_code() == ErrorCode::Ok {
        return Err(skip(
            "the server does not require SASL (enforce.auth.enabled)",
        ));
    }
    ensure_eq(
        "the error",
        h.error_code(),
        ErrorCode::SessionClosedRequireSaslAuth,
    )?;
    plain.expect_closed("the server closes the session's connection")
}
