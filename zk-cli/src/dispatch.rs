//! One command, run on a connected client: from the command line or a line of the shell.

use zk_session::Client;

use crate::{cli::Cmd, explore, input, reads, run, watching, writes, Failure};

/// What every command needs.
#[derive(Clone)]
pub struct Ctx {
    pub client: Client,
    /// --json: machine-readable output.
    pub json: bool,
    /// In the shell: the session outlives the command (so `create -e` need not hold it).
    pub interactive: bool,
}

/// Runs `cmd`; the exit code it earns.
pub async fn execute(ctx: &Ctx, cmd: Cmd) -> Result<i32, Failure> {
    let c = &ctx.client;
    match cmd {
        Cmd::Ls {
            recursive,
            stat,
            watch,
            path,
        } => reads::ls(ctx, &input::path(&path)?, recursive, stat, watch).await,
        Cmd::Get { stat, watch, path } => reads::get(ctx, &input::path(&path)?, stat, watch).await,
        Cmd::Stat { path } => reads::stat(ctx, &input::path(&path)?).await,
        Cmd::GetAcl { path } => reads::get_acl(ctx, &input::path(&path)?).await,
        Cmd::Sync { path } => reads::sync(ctx, &input::path(&path)?).await,
        Cmd::Config => reads::config(ctx).await,
        Cmd::Whoami => reads::whoami(ctx).await,
        Cmd::GetEphemerals { path } => {
            let prefix = path.map(|p| input::path(&p)).transpose()?;
            reads::get_ephemerals(ctx, prefix.as_deref().unwrap_or("/")).await
        }
        Cmd::Set {
            version,
            path,
            data,
        } => {
            // In the shell, stdin is the terminal the shell reads: only an explicit '-' reads it.
            let data = input::data(data.as_ref(), !ctx.interactive)?;
            writes::set(ctx, &input::path(&path)?, &data, version).await
        }
        Cmd::Create {
            ephemeral,
            sequential,
            container,
            ttl,
            parents,
            path,
            data,
            acl,
        } => {
            let how = writes::CreateHow {
                ephemeral,
                sequential,
                container,
                ttl_ms: ttl,
                parents,
            };
            let acl = acl.map(|a| input::utf8(&a, "ACL")).transpose()?;
            let data = input::data(data.as_ref(), false)?;
            writes::create(ctx, &input::path(&path)?, &data, how, acl.as_deref()).await
        }
        Cmd::Delete { version, path } => writes::delete(ctx, &input::path(&path)?, version).await,
        Cmd::DeleteAll { path } => writes::delete_all(ctx, &input::path(&path)?).await,
        Cmd::SetAcl { version, path, acl } => {
            let acl = input::utf8(&acl, "ACL")?;
            writes::set_acl(ctx, &input::path(&path)?, &acl, version).await
        }
        Cmd::AddWatch { mode, path } => watching::persistent(ctx, &input::path(&path)?, mode).await,
        Cmd::Watch {
            recursive,
            cache: true,
            depth,
            path,
        } => {
            let scope = crate::cache_watch::Scope { recursive, depth };
            crate::cache_watch::watch(ctx, &input::path(&path)?, scope).await
        }
        Cmd::Watch {
            recursive, path, ..
        } => {
            let mode = if recursive {
                crate::cli::WatchMode::PersistentRecursive
            } else {
                crate::cli::WatchMode::Persistent
            };
            watching::persistent(ctx, &input::path(&path)?, mode).await
        }
        Cmd::Lock { path, timeout, cmd } => run::lock(c, &input::path(&path)?, timeout, &cmd).await,
        Cmd::Semaphore {
            path,
            leases,
            timeout,
            cmd,
        } => run::semaphore(c, &input::path(&path)?, leases, timeout, &cmd).await,
        Cmd::Elect {
            path,
            id,
            timeout,
            cmd,
        } => run::elect(c, &input::path(&path)?, id, timeout, &cmd).await,
        Cmd::Services { base } => crate::discovery::services(ctx, &input::path(&base)?).await,
        Cmd::Register {
            name,
            id,
            address,
            port,
            base,
            uri_spec,
            cmd,
        } => {
            let r = crate::discovery::Registration {
                name: &name,
                id: &id,
                address: &address,
                port,
                uri_spec: uri_spec.as_deref(),
            };
            crate::discovery::register(ctx, &input::path(&base)?, r, &cmd).await
        }
        Cmd::Du { depth, path } => explore::du(ctx, &input::path(&path)?, Some(depth)).await,
        Cmd::Tree { depth, path } => explore::tree(ctx, &input::path(&path)?, depth).await,
        Cmd::Find {
            depth,
            pattern,
            path,
        } => explore::find(ctx, &pattern, &input::path(&path)?, depth).await,
        Cmd::Grep {
            depth,
            pattern,
            path,
        } => explore::grep(ctx, &pattern, &input::path(&path)?, depth).await,
        Cmd::Shell
        | Cmd::Completions { .. }
        | Cmd::Cp { .. }
        | Cmd::Diff { .. }
        | Cmd::Health { .. } => Err(Failure::usage(
            "shell, completions, cp, diff and health are not commands of the shell".into(),
        )),
    }
}
