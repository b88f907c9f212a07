//! The x509 scheme over TLS (`--tls HOST:PORT --tls-ca --tls-cert --tls-key`): a client
//! certificate's subject DN is the session's identity, for ACLs as for whoAmI.

use zk_proto::{ErrorCode, Request, Response};

use super::identity;
use crate::{
    check::{fail, Area, Check, CheckResult, Finding},
    ctx::{unexpected, Conn, Ctx},
    req,
};

const GUIDE_X509: &str = "Programmer's Guide: Builtin ACL Schemes (x509); Administrator's \
Guide: ssl.clientAuth";
const WHO_AM_I: &str = "zookeeper.jute: WhoAmIResponse";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::X509, "x509";
    "session", "a session over TLS with a client certificate is served", GUIDE_X509, session;
    "who-am-i", "whoAmI over TLS lists x509:<the certificate's subject DN>", WHO_AM_I, who_am_i;
    "acl", "an x509:<subject> ACL lets that certificate's sessions in and refuses plain sessions with NOAUTH", GUIDE_X509, acl;
    "auth-scheme", "an auth:'' ACL set over TLS becomes x509:<subject>", GUIDE_X509, auth_scheme;
    "acl.digest-is-not-x509", "a digest identity named like the subject does not satisfy an x509 ACL", GUIDE_X509, digest_is_not_x509;
);

fn session(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.tls_session()?;
    conn.exists("/", false)?;
    conn.close()
}

/// The x509 identity of a TLS session: the subject given in the setup when there is one,
/// which whoAmI must list.
fn subject_of(ctx: &Ctx, conn: &mut Conn) -> Result<String, Finding> {
    let infos = match conn.ok(&Request::WhoAmI)? {
        Response::WhoAmI(w) => w.client_info,
        other => return Err(unexpected("a WhoAmIResponse", &other)),
    };
    let x509: Vec<&str> = infos
        .iter()
        .filter(|c| c.auth_scheme == "x509")
        .map(|c| c.user.as_str())
        .collect();
    let subject = ctx.setup().tls.as_ref().and_then(|t| t.subject.clone());
    match (x509.as_slice(), subject) {
        ([one], None) if !one.is_empty() => Ok(one.to_string()),
        ([one], Some(s)) if *one == s => Ok(s),
        (_, want) => Err(fail(
            format!(
                "one x509 identity{}",
                want.map_or(String::new(), |s| format!(", {s}"))
            ),
            format!("{infos:?}"),
        )),
    }
}

fn who_am_i(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.tls_session()?;
    subject_of(ctx, &mut conn)?;
    conn.close()
}

/// A znode only the certificate's subject may use; the TLS session and the path.
fn x509_only(ctx: &mut Ctx, name: &str) -> Result<(Conn, String), Finding> {
    let mut conn = ctx.tls_session()?;
    let subject = subject_of(ctx, &mut conn)?;
    let path = ctx.path(name);
    identity::create_only_for(&mut conn, &path, "x509", &subject)?;
    Ok((conn, path))
}

fn acl(ctx: &mut Ctx) -> CheckResult {
    let (mut owner, path) = x509_only(ctx, "x509-only")?;
    owner.close()?;
    let mut again = ctx.tls_session()?;
    again.get_data(&path, false)?;
    again.close()?;
    let mut plain = ctx.session()?;
    plain.err(&req::get_data(&path, false), ErrorCode::NoAuth)?;
    plain.close()
}

fn digest_is_not_x509(ctx: &mut Ctx) -> CheckResult {
    let (mut owner, path) = x509_only(ctx, "x509-digest")?;
    let subject = subject_of(ctx, &mut owner)?;
    identity::digest_refused(ctx, &path, &subject, "pw")?;
    owner.close()
}

fn auth_scheme(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.tls_session()?;
    let subject = subject_of(ctx, &mut conn)?;
    let path = ctx.path("auth");
    identity::auth_becomes(&mut conn, &path, "x509", &subject)?;
    conn.close()
}
