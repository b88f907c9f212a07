//! Per-server scratch directories (config, data, log) under `$TMPDIR/zk-testkit/`.
//!
//! Each directory is named after the owning process id. Directories are removed on drop;
//! directories left behind by processes that no longer exist (a test binary killed with
//! SIGKILL) are swept the first time a process creates one. Set `ZK_TESTKIT_KEEP=1` to
//! keep directories (and server logs) for inspection.

use std::{
    env, fs,
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicU64, Ordering},
        Once,
    },
};

use crate::{HarnessError, Result};

/// A directory removed when dropped (unless `ZK_TESTKIT_KEEP` is set).
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Creates a fresh directory whose name contains `tag`.
    pub fn new(tag: &str) -> Result<ScratchDir> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        static SWEEP: Once = Once::new();
        let root = root();
        SWEEP.call_once(|| sweep_stale(&root));
        let path = root.join(format!(
            "{}-{}-{tag}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path)
            .map_err(|e| HarnessError::io(format!("creating {}", path.display()), e))?;
        Ok(ScratchDir { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if env::var_os("ZK_TESTKIT_KEEP").is_none() {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

fn root() -> PathBuf {
    env::temp_dir().join("zk-testkit")
}

fn sweep_stale(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}
