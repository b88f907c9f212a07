//! An async ZooKeeper 3.8 client session on tokio.
//!
//! [`Client`] is a cheap handle; one background task per session owns the connection. It
//! pipelines any number of requests, sends heartbeats, moves to another server with the same
//! session when a server dies or stalls, re-sends auth and re-registers watches there, and
//! reports connection states ([`SessionEvent`]) the way Curator does.
//!
//! Feature `tls` (off by default): connections over TLS with rustls, configured by
//! `TlsConfig` and `ClientBuilder::tls`.
//!
//! Feature `tracing` (off by default): `tracing` events for connection attempts, state
//! changes, session expiry and the new session, auth results and failed requests, with
//! `session_id` (hex), `server`, `xid` and `zxid` fields. No znode data, password, auth data,
//! certificate or session password is ever in them. Install a subscriber in the application
//! to see them (for example `tracing_subscriber::fmt::init()`).
//!
//! ```no_run
//! # async fn f() -> zk_session::Result<()> {
//! use zk_session::{Client, CreateOptions};
//!
//! let client = Client::builder("127.0.0.1:2181,127.0.0.1:2182/app").connect().await?;
//! let path = client
//!     .create("/jobs/job-", b"payload", &CreateOptions::persistent_sequential())
//!     .await?;
//! let (_children, _stat, watch) = client.get_children_watch("/jobs").await?;
//! let event = watch.await?;
//! println!("{path} and then {event:?}");
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod builder;
mod chroot;
mod client;
mod command;
mod connect_string;
mod connection;
mod create_options;
mod driver;
mod error;
mod jitter;
mod multi;
mod redact;
mod retry;
#[cfg(feature = "sasl")]
pub mod sasl;
mod session;
mod state;
#[cfg(feature = "tls")]
mod tls;
mod trace;
mod transport;
mod tree_ops;
mod version;
mod watch;
mod watch_table;

pub use builder::{ClientBuilder, OnExpiry, ReadOnly};
pub use client::Client;
pub use create_options::CreateOptions;
pub use error::{Error, Result};
pub use multi::{Op, OpResult, ReadOp, ReadResult};
pub use retry::RetryPolicy;
#[cfg(feature = "sasl")]
pub use sasl::{SaslConfig, SaslError, SaslExchange, SaslMechanism, SaslStep};
pub use state::{SessionEvent, SessionEvents, SessionState};
#[cfg(feature = "tls")]
pub use tls::{ServerNameCheck, TlsConfig, TlsConfigBuilder};
pub use version::Version;
pub use watch::{OneshotWatch, PersistentWatch, WatchedEvent};

pub use zk_proto::{
    Acl, AddWatchMode, ClientInfo, CreateMode, ErrorCode, EventType, Id, PathError, Perms, Stat,
    WatcherType,
};
