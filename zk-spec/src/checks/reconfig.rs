//! Dynamic reconfiguration: the configuration znode (any server) and, on an ensemble with
//! `reconfigEnabled` (`--reconfig`, `--super user:password` when it checks ACLs), reconfig
//! itself (ops.reconfig.disabled checks a server without it): its version check, its permission check, an incremental remove and add.

use zk_proto::{ErrorCode, EventType, ReconfigRequest, Request, Response, Stat};

use crate::{
    check::{ensure, ensure_eq, fail, skip, Area, Check, CheckResult, Finding},
    ctx::{unexpected, Conn, Ctx},
    req,
};

/// `/zookeeper/config`, where the configuration is kept.
pub const CONFIG_NODE: &str = "/zookeeper/config";
const GUIDE: &str = "ZooKeeper Dynamic Reconfiguration: Reconfig";
const GUIDE_ACL: &str = "ZooKeeper Dynamic Reconfiguration: Security (superuser or reconfig ACL)";
const GUIDE_CONFIG: &str = "ZooKeeper Dynamic Reconfiguration: Retrieving the current \
dynamic configuration";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Reconfig, "reconfig";
    "config-node", "/zookeeper/config lists server.N lines and a hex version=", GUIDE_CONFIG, config_node;
    "config-node.read-only", "/zookeeper/config refuses setData from a client without rights (NOAUTH)", GUIDE_ACL, config_read_only;
    "needs-auth", "reconfig by a client that is neither superuser nor allowed by the ACL fails with NOAUTH", GUIDE_ACL, needs_auth;
    "stale-version", "reconfig with a stale fromConfig fails with BADVERSION", GUIDE, stale_version;
    "remove-add", "an incremental remove then add: each answers the new config, its version the reconfig's zxid, and fires the config watch", GUIDE, remove_add;
);

/// The configuration's lines, its Stat.
fn config(conn: &mut Conn, watch: bool) -> Result<(String, Stat), Finding> {
    let (data, stat) = conn.get_data(CONFIG_NODE, watch)?;
    let text = String::from_utf8_lossy(data.as_deref().unwrap_or_default()).into_owned();
    Ok((text, stat))
}

/// The `version=` of a configuration.
fn version_of(text: &str) -> Option<i64> {
    text.lines()
        .find_map(|l| l.strip_prefix("version="))
        .and_then(|v| i64::from_str_radix(v.trim(), 16).ok())
}

/// The `server.N=...` lines: N and the line.
fn servers(text: &str) -> Vec<(u64, &str)> {
    text.lines()
        .filter_map(|l| {
            let (key, _) = l.split_once('=')?;
            Some((key.strip_prefix("server.")?.parse().ok()?, l))
        })
        .collect()
}

/// What is wrong with a configuration's text, if anything.
fn malformed_line(text: &str) -> Option<&str> {
    text.lines().filter(|l| !l.is_empty()).find(|l| {
        let server = l
            .split_once('=')
            .and_then(|(k, _)| k.strip_prefix("server."))
            .is_some_and(|n| n.parse::<u64>().is_ok());
        !server && version_of(l).is_none()
    })
}

fn config_node(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let (text, _) = config(&mut conn, false)?;
    if servers(&text).is_empty() {
        return Err(skip(
            "no dynamic configuration here (a standalone server, or reconfig never enabled)",
        ));
    }
    if let Some(line) = malformed_line(&text) {
        return Err(fail("server.N=... and version=<hex> lines only", line));
    }
    ensure(version_of(&text).is_some(), "a version=<hex> line", || {
        text.clone()
    })?;
    conn.close()
}

fn config_read_only(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let acl = match conn.ok(&req::get_acl(CONFIG_NODE))? {
        Response::GetAcl(a) => a.acl,
        other => return Err(unexpected("a getACL response", &other)),
    };
    if acl
        .iter()
        .any(|a| a.perms.0 & zk_proto::Perms::WRITE.0 != 0)
    {
        return Err(skip(format!("its ACL allows writes here: {acl:?}")));
    }
    let code = config_write_refusal(&mut conn)?;
    if code == ErrorCode::BadVersion {
        return Err(skip("the server skips ACL checks (skipACL)"));
    }
    ensure_eq("setData err", code, ErrorCode::NoAuth)?;
    conn.close()
}

/// A setData of the config node with a version it does not have; the error. The ACL is
/// checked first (NOAUTH), and a server that skips it answers BADVERSION: never a write.
fn config_write_refusal(conn: &mut Conn) -> Result<ErrorCode, Finding> {
    let (_, stat) = config(conn, false)?;
    let stale = stat.version.wrapping_add(1_000);
    let (h, _) = conn.call(&req::set_data(CONFIG_NODE, b"", stale))?;
    Ok(h.error_code())
}

fn reconfig(leaving: Option<String>, joining: Option<String>, from_config: i64) -> Request {
    Request::Reconfig(ReconfigRequest {
        joining_servers: joining,
        leaving_servers: leaving,
        new_members: None,
        cur_config_id: from_config,
    })
}

/// A session allowed to reconfig: the superuser's, or any when the server skips ACLs.
fn admin(ctx: &mut Ctx) -> Result<Conn, Finding> {
    if !ctx.setup().reconfig {
        return Err(skip(
            "needs an ensemble with reconfigEnabled: --reconfig [--super user:password]",
        ));
    }
    let mut conn = ctx.session()?;
    if let Some(su) = ctx.setup().super_user.clone() {
        let code = conn.auth("digest", format!("{}:{}", su.user, su.password).as_bytes())?;
        ensure_eq("the superuser's auth", code, ErrorCode::Ok)?;
    }
    Ok(conn)
}

/// The current configuration and its version; skips without server lines.
fn current(conn: &mut Conn) -> Result<(String, i64), Finding> {
    let (text, _) = config(conn, false)?;
    let version = version_of(&text)
        .ok_or_else(|| skip("no dynamic configuration here (no version= line)"))?;
    Ok((text, version))
}

/// The member to remove and add back: not the one the checks talk to, not the leader when
/// four-letter words say which it is (its removal means an election).
fn victim(ctx: &Ctx, text: &str) -> Result<(u64, String), Finding> {
    let target_port = format!(":{}", ctx.addr().port());
    let mut candidates: Vec<(u64, &str)> = servers(text)
        .into_iter()
        .filter(|(_, l)| !l.ends_with(&target_port))
        .collect();
    if candidates.is_empty() {
        return Err(skip("the configuration has no member besides the target"));
    }
    let is_leader = |line: &str| {
        let client = line.rsplit(';').next().unwrap_or_default();
        client.parse().ok().is_some_and(|addr| {
            zk_testkit::four_letter_word(addr, "srvr", ctx.io_timeout())
                .is_ok_and(|t| t.contains("Mode: leader"))
        })
    };
    candidates.sort_by_key(|(_, l)| is_leader(l));
    let (id, line) = candidates[0];
    let spec = line.split_once('=').map_or("", |(_, s)| s);
    Ok((id, format!("server.{id}={spec}")))
}

fn needs_auth(ctx: &mut Ctx) -> CheckResult {
    let Some(_) = ctx.setup().super_user else {
        return Err(skip(
            "needs a server that checks ACLs and its superuser: --reconfig --super user:password",
        ));
    };
    let mut conn = ctx.session()?;
    // Where ACLs are skipped this reconfig would go through: see that they are checked.
    if config_write_refusal(&mut conn)? != ErrorCode::NoAuth {
        return Err(skip("the server skips ACL checks (skipACL)"));
    }
    let (text, version) = current(&mut conn)?;
    let (id, _) = victim(ctx, &text)?;
    conn.err(
        &reconfig(Some(id.to_string()), None, version),
        ErrorCode::NoAuth,
    )?;
    conn.close()
}

fn stale_version(ctx: &mut Ctx) -> CheckResult {
    let mut conn = admin(ctx)?;
    let (text, version) = current(&mut conn)?;
    let (id, _) = victim(ctx, &text)?;
    conn.err(
        &reconfig(Some(id.to_string()), None, version - 1),
        ErrorCode::BadVersion,
    )?;
    let (after, _) = current(&mut conn)?;
    ensure_eq("the configuration after", after, text)?;
    conn.close()
}

/// Sends a reconfig that must succeed; the new configuration and its Stat.
fn reconfigured(conn: &mut Conn, request: &Request) -> Result<(String, Stat), Finding> {
    match conn.ok(request)? {
        Response::GetData(d) => Ok((
            String::from_utf8_lossy(d.data.as_deref().unwrap_or_default()).into_owned(),
            d.stat,
        )),
        other => Err(unexpected("a GetDataResponse with the new config", &other)),
    }
}

fn remove_add(ctx: &mut Ctx) -> CheckResult {
    let mut conn = admin(ctx)?;
    let (text, version) = current(&mut conn)?;
    let (id, line) = victim(ctx, &text)?;
    let mut watcher = ctx.session()?;
    config(&mut watcher, true)?;
    let (removed, stat) = reconfigured(&mut conn, &reconfig(Some(id.to_string()), None, version))?;
    ensure(
        !servers(&removed).iter().any(|(n, _)| *n == id),
        format!("server.{id} gone from the new config"),
        || removed.clone(),
    )?;
    ensure_eq("its version=", version_of(&removed), Some(stat.mzxid))?;
    let ev = watcher.event()?;
    ensure_eq(
        "the config watch's event",
        (ev.event_type, ev.path.as_str()),
        (EventType::NodeDataChanged, CONFIG_NODE),
    )?;
    let (added, stat) = reconfigured(&mut conn, &reconfig(None, Some(line.clone()), stat.mzxid))?;
    ensure(
        added.lines().any(|l| l == line),
        format!("{line} back in the config"),
        || added.clone(),
    )?;
    ensure_eq("its version=", version_of(&added), Some(stat.mzxid))?;
    watcher.close()?;
    conn.close()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "server.1=127.0.0.1:1:2:participant;127.0.0.1:3\n\
                          server.2=127.0.0.1:4:5:participant;127.0.0.1:6\nversion=100000003";

    #[test]
    fn reads_a_configuration() {
        assert_eq!(version_of(CONFIG), Some(0x1_0000_0003));
        assert_eq!(
            servers(CONFIG).iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!(malformed_line(CONFIG), None);
        assert_eq!(malformed_line("server.x=1\nversion=1"), Some("server.x=1"));
        assert_eq!(malformed_line("version=zz"), Some("version=zz"));
    }
}
