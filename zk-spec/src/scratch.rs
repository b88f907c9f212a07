//! The root znode a run works under, made at the start and removed, with everything under
//! it, at the end.

use std::{
    net::SocketAddr,
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use zk_proto::CreateMode;

use crate::{
    check::{fail, Finding},
    ctx::{Conn, Ctx},
    req, sasl_login,
    setup::Credentials,
};

/// A session, logged in with SASL when `sasl` names a user (a server that requires SASL
/// serves nothing else).
fn session(
    addr: SocketAddr,
    io_timeout: Duration,
    sasl: Option<&Credentials>,
) -> Result<Conn, Finding> {
    let mut conn = Ctx::new(addr, String::new(), io_timeout, Arc::default()).session()?;
    if let Some(user) = sasl {
        let code = sasl_login::login(&mut conn, user)?;
        if code != zk_proto::ErrorCode::Ok {
            return Err(fail("a SASL login", format!("{code:?}")));
        }
    }
    Ok(conn)
}

/// Creates `/<prefix>-<pid>-<nanos>`; its path.
pub(crate) fn create(
    addr: SocketAddr,
    io_timeout: Duration,
    prefix: &str,
) -> Result<String, Finding> {
    create_as(addr, io_timeout, prefix, None)
}

/// [`create`], logged in with SASL as `sasl` when given.
pub(crate) fn create_as(
    addr: SocketAddr,
    io_timeout: Duration,
    prefix: &str,
    sasl: Option<&Credentials>,
) -> Result<String, Finding> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let root = format!("/{prefix}-{}-{nanos:08x}", std::process::id());
    let mut conn = session(addr, io_timeout, sasl)?;
    conn.create(&root, b"", CreateMode::Persistent)?;
    conn.close()?;
    Ok(root)
}

/// Deletes `root` and everything under it, as far as it can.
pub(crate) fn remove(addr: SocketAddr, io_timeout: Duration, root: &str) {
    remove_as(addr, io_timeout, root, None);
}

/// [`remove`], logged in with SASL as `sasl` when given.
pub(crate) fn remove_as(
    addr: SocketAddr,
    io_timeout: Duration,
    root: &str,
    sasl: Option<&Credentials>,
) {
    let conn = session(addr, io_timeout, sasl).or_else(|_| session(addr, io_timeout, None));
    let Ok(mut conn) = conn else {
        return;
    };
    let mut stack = vec![(root.to_string(), false)];
    while let Some((path, expanded)) = stack.pop() {
        if expanded {
            let _ = conn.call(&req::delete(&path, -1));
            continue;
        }
        stack.push((path.clone(), true));
        if let Ok(children) = conn.children(&path, false) {
            let parent = path.trim_end_matches('/');
            stack.extend(
                children
                    .into_iter()
                    .map(|c| (format!("{parent}/{c}"), false)),
            );
        }
    }
    let _ = conn.close();
}
