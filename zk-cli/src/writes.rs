//! The write commands: set, create, delete, deleteall, setAcl.

use std::time::Duration;

use serde_json::json;
use zk_session::{Acl, CreateMode, CreateOptions, Version};

use crate::{acl, dispatch::Ctx, exit, output, session_failure, watching, Failure};

type Done = Result<i32, Failure>;

fn version(v: Option<i32>) -> Version {
    v.map_or(Version::Any, Version::Exact)
}

/// `set [-v N] PATH [DATA]`.
pub async fn set(ctx: &Ctx, path: &str, data: &[u8], v: Option<i32>) -> Done {
    ctx.client
        .set_data(path, data, version(v))
        .await
        .map_err(|e| session_failure(&format!("set {path}"), &e))?;
    Ok(exit::OK)
}

/// create's flags.
#[derive(Debug, Clone, Copy, Default)]
pub struct CreateHow {
    pub ephemeral: bool,
    pub sequential: bool,
    pub container: bool,
    pub ttl_ms: Option<u64>,
    pub parents: bool,
}

impl CreateHow {
    /// The create options these flags ask for (the argument parser has ruled out the
    /// combinations ZooKeeper has no mode for).
    pub fn options(&self, acl: Vec<Acl>) -> CreateOptions {
        let options = match (self.ttl_ms, self.container) {
            (Some(ms), _) if self.sequential => {
                CreateOptions::ttl_sequential(Duration::from_millis(ms))
            }
            (Some(ms), _) => CreateOptions::ttl(Duration::from_millis(ms)),
            (None, true) => CreateOptions::container(),
            (None, false) => CreateOptions::new(match (self.ephemeral, self.sequential) {
                (false, false) => CreateMode::Persistent,
                (false, true) => CreateMode::PersistentSequential,
                (true, false) => CreateMode::Ephemeral,
                (true, true) => CreateMode::EphemeralSequential,
            }),
        };
        options.with_acl(acl)
    }
}

/// `create [-e] [-s] [-c] [-t TTL_MS] [-p] PATH [DATA [ACL]]`.
pub async fn create(ctx: &Ctx, path: &str, data: &[u8], how: CreateHow, acl: Option<&str>) -> Done {
    let acl = match acl {
        Some(text) => acl::parse(text).map_err(Failure::usage)?,
        None => Acl::open_unsafe(),
    };
    let options = how.options(acl);
    let c = &ctx.client;
    let created = if how.parents {
        c.create_with_parents(path, data, options).await
    } else {
        c.create(path, data, options).await
    }
    .map_err(|e| session_failure(&format!("create {path}"), &e))?;
    if ctx.json {
        output::json(&json!({"path": created}))?;
    } else {
        output::raw(format!("{created}\n").as_bytes())?;
    }
    if how.ephemeral && !ctx.interactive {
        // An ephemeral node lives as long as this session: keep it open until told.
        return watching::hold_session(ctx).await;
    }
    Ok(exit::OK)
}

/// `delete [-v N] PATH`.
pub async fn delete(ctx: &Ctx, path: &str, v: Option<i32>) -> Done {
    ctx.client
        .delete(path, version(v))
        .await
        .map_err(|e| session_failure(&format!("delete {path}"), &e))?;
    Ok(exit::OK)
}

/// `deleteall PATH`.
pub async fn delete_all(ctx: &Ctx, path: &str) -> Done {
    ctx.client
        .delete_all(path)
        .await
        .map_err(|e| session_failure(&format!("deleteall {path}"), &e))?;
    Ok(exit::OK)
}

/// `setAcl [-v N] PATH ACL`.
pub async fn set_acl(ctx: &Ctx, path: &str, text: &str, v: Option<i32>) -> Done {
    let list = acl::parse(text).map_err(Failure::usage)?;
    ctx.client
        .set_acl(path, &list, version(v))
        .await
        .map_err(|e| session_failure(&format!("setAcl {path}"), &e))?;
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_choose_the_mode() {
        let mode = |how: CreateHow| how.options(Acl::open_unsafe()).mode();
        let base = CreateHow::default();
        assert_eq!(mode(base), CreateMode::Persistent);
        let es = CreateHow {
            ephemeral: true,
            sequential: true,
            ..base
        };
        assert_eq!(mode(es), CreateMode::EphemeralSequential);
        let c = CreateHow {
            container: true,
            ..base
        };
        assert_eq!(mode(c), CreateMode::Container);
        let t = CreateHow {
            ttl_ms: Some(500),
            sequential: true,
            ..base
        };
        let o = t.options(Acl::open_unsafe());
        assert_eq!(o.mode(), CreateMode::PersistentSequentialWithTtl);
        assert_eq!(o.ttl_duration(), Some(Duration::from_millis(500)));
    }
}
