//! The harness's error type.

use std::{io, path::PathBuf, time::Duration};

/// Result alias used throughout the harness.
pub type Result<T, E = HarnessError> = std::result::Result<T, E>;

/// Why the harness could not provide a server.
///
/// Messages are written for a person reading a failed test: startup failures carry the last
/// lines of the server log and its path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// ZooKeeper or Java is missing and could not be installed.
    #[error("ZooKeeper is not available: {0}")]
    Install(String),

    /// The Kerberos KDC could not be installed, set up or started (see [`crate::kdc`]).
    #[error("Kerberos KDC: {0}")]
    Kerberos(String),

    /// An I/O operation of the harness itself failed.
    #[error("I/O error while {context}: {source}")]
    Io {
        /// What the harness was doing.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// The server did not report a `Mode:` in `srvr` before the timeout.
    #[error(
        "{what} did not become healthy within {timeout:?}\n--- last lines of {} ---\n{log_tail}",
        log.display()
    )]
    StartTimeout {
        /// Which server.
        what: String,
        /// How long the harness waited.
        timeout: Duration,
        /// The server log.
        log: PathBuf,
        /// Its last lines.
        log_tail: String,
    },

    /// The server process exited while the harness waited for it.
    #[error("{what} exited ({status})\n--- last lines of {} ---\n{log_tail}", log.display())]
    Exited {
        /// Which server.
        what: String,
        /// The exit status as text.
        status: String,
        /// The server log.
        log: PathBuf,
        /// Its last lines.
        log_tail: String,
    },

    /// A port the server needed was taken by someone else; start again with new ports.
    #[error(
        "{what} could not bind one of its ports {ports:?} (address already in use)\n{log_tail}"
    )]
    PortInUse {
        /// Which server.
        what: String,
        /// The ports it was configured with.
        ports: Vec<u16>,
        /// The last lines of its log.
        log_tail: String,
    },

    /// The ensemble did not settle on one leader with every running member serving.
    #[error("ensemble not healthy within {timeout:?}: {detail}")]
    EnsembleUnhealthy {
        /// How long the harness waited.
        timeout: Duration,
        /// The last observed state of each member.
        detail: String,
    },

    /// The operation needs a running server process.
    #[error("{what} is not running")]
    NotRunning {
        /// Which server.
        what: String,
    },
}

impl HarnessError {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        HarnessError::Io {
            context: context.into(),
            source,
        }
    }
}
