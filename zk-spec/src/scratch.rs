//! The root znode a run works under, made at the start and removed, with everything under
//! it, at the end.

use std::{
    net::SocketAddr,
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use zk_proto::CreateMode;

use crate::{check::Finding, ctx::Ctx, req};

fn ctx(addr: SocketAddr, io_timeout: Duration) -> Ctx {
    Ctx::new(addr, String::new(), io_timeout, Arc::default())
}

/// Creates `/<prefix>-<pid>-<nanos>`; its path.
pub(crate) fn create(
    addr: SocketAddr,
    io_timeout: Duration,
    prefix: &str,
) -> Result<String, Finding> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let root = format!("/{prefix}-{}-{nanos:08x}", std::process::id());
    let mut conn = ctx(addr, io_timeout).session()?;
    conn.create(&root, b"", CreateMode::Persistent)?;
    conn.close()?;
    Ok(root)
}

/// Deletes `root` and everything under it, as far as it can.
pub(crate) fn remove(addr: SocketAddr, io_timeout: Duration, root: &str) {
    let Ok(mut conn) = ctx(addr, io_timeout).session() else {
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
