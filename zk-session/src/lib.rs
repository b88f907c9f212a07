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
//! Feature `tracing` (off by default; without it nothing of this is compiled in): spans and
//! events through the `tracing` crate. Install a subscriber in the application to see them
//! (for example `tracing_subscriber::fmt::init()`).
//!
//! Spans (level `info`):
//! - `session`, one per ZooKeeper session (a new one when the ensemble expires the session
//!   and the handle creates the next), a root span that follows from the caller's span when
//!   the client was built (the client does not keep the caller's span open):
//!   `connect_string` (the servers and chroot as parsed, no credentials) and `session_id`
//!   (hex, recorded once the server has given it).
//! - `connection`, inside it, one per connection attempt, lasting as long as the connection
//!   it makes: `server` (`host:port`) and `attempt` (1, 2, … over the handle's life). The
//!   handshake, SASL, auth replies, requests and their failures, the state change and the
//!   end of that connection are told inside it; backoff waits between connections are in
//!   the session span alone.
//!
//! Events, with their fields (`session_id` in hex as the server logs it, `server` as
//! `host:port`):
//! - `debug`: "connecting" (`server`, `session_id`, `last_zxid_seen`, `timeout_ms`),
//!   "connect failed" (`server`, `reason`), "waiting before the next connection attempt"
//!   (`server`, `backoff_ms`), "connection ended" (`server`, `session_id`, `reconnect`),
//!   "request failed" (`xid`, `zxid`, `op`, `path`: the znode path as the caller gave it,
//!   under the chroot, absent for multi; `err`, e.g. `NoNode`).
//! - `info`: "connected" (`server`, `session_id`, `timeout_ms`, `read_only`, `new_session`,
//!   `after_expiry`), "SASL authenticated" (`server`, `session_id`, `mechanism`), "auth
//!   accepted" (`scheme`), "session state changed" (`session_id`, `state`, `event`), "the
//!   server says the session is expired" and "session expired: creating a new session on
//!   the same handle" (`session_id`).
//! - `warn`: "connect failed on every server" (`servers`, `passes`, `last_server`,
//!   `reason`), "authentication failed: the session ends" (`server`, `reason`), "auth
//!   refused" (`scheme`, `err`), "the server requires SASL authentication: the session
//!   ends" (`xid`, `err`), "reply out of order: reconnecting" (`xid`, `expected_xid`).
//!
//! No znode data, ACL, password, digest, auth data, certificate, key or session password is
//! ever in a span or event.
//!
//! ```no_run
//! # async fn f() -> zk_session::Result<()> {
//! use zk_session::{Client, CreateOptions};
//!
//! let client = Client::builder("127.0.0.1:2181,127.0.0.1:2182/app").connect().await?;
//! let path = client
//!     .create("/jobs/job-", b"payload", CreateOptions::persistent_sequential())
//!     .await?;
//! let (_children, _stat, watch) = client.get_children_watch("/jobs").await?;
//! let event = watch.await?;
//! println!("{path} and then {event:?}");
//! # Ok(()) }
//! ```
//!
//! ## Many requests in flight
//!
//! Every request is pipelined on the session's one connection, whichever task sends it. On
//! tokio's multi-thread runtime, where the requests come from decides much of their CPU
//! cost: with a task per request in flight, the callers answered by one read are spread
//! over the workers, and those wake-ups cost as much as the client's own work (in this
//! repository's `session_bench`, about 2x the CPU of a blocking socket loop per getData with
//! 64 or 512 in flight, against 1.3–1.4x when one task keeps them all in flight). Where one
//! piece of code has many independent requests, await them together in one task
//! (`tokio::join!`, or `futures`' `join_all` or `FuturesUnordered`) rather than spawning a
//! task each.
//!
//! ```no_run
//! # async fn f(client: zk_session::Client) -> zk_session::Result<()> {
//! // Three reads in flight at once, one task.
//! let (a, b, c) = tokio::join!(
//!     client.get_data("/config/a"),
//!     client.get_data("/config/b"),
//!     client.get_data("/config/c"),
//! );
//! let (a, b, c) = (a?.0, b?.0, c?.0);
//! # let _ = (a, b, c);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]
// Without a driver (neither `tokio` nor `blocking`) the core is compiled for its types alone.
#![cfg_attr(
    not(any(feature = "tokio", feature = "blocking")),
    allow(dead_code, unused_imports)
)]

mod argument_error;
mod backoff;
#[cfg(feature = "blocking")]
pub mod blocking;
mod builder;
mod caller_table;
#[cfg(feature = "tokio")]
mod callers;
mod chroot;
#[cfg(feature = "tokio")]
mod client;
mod command;
mod config_error;
mod connect_error;
mod connect_string;
#[cfg(feature = "tokio")]
mod connection;
mod create_options;
#[cfg(feature = "tokio")]
mod deadline_grid;
#[cfg(feature = "tokio")]
mod driver;
mod ensemble_config;
mod error;
mod first_connection;
mod jitter;
mod multi;
mod on_refusal;
mod ops;
mod protocol_violation;
mod redact;
mod retry;
#[cfg(feature = "sasl")]
pub mod sasl;
mod security;
#[cfg(feature = "tokio")]
mod senders;
mod session;
mod session_id;
#[cfg(feature = "tokio")]
mod shared;
mod slab;
mod state;
#[cfg(feature = "tokio")]
mod state_watch;
#[cfg(any(feature = "tls", feature = "blocking-tls"))]
mod tls;
mod tls_error;
mod trace;
#[cfg(feature = "tokio")]
mod transport;
#[cfg(feature = "tokio")]
mod tree_ops;
mod version;
#[cfg(feature = "tokio")]
mod watch;
mod watched_event;

pub use argument_error::ArgumentError;
pub use backoff::Backoff;
pub use builder::{ClientBuilder, OnExpiry, ReadOnly, ServerList};
#[cfg(feature = "tokio")]
pub use client::Client;
pub use config_error::ConfigError;
pub use connect_error::{AuthFailure, ConnectError, HandshakeError};
pub use create_options::CreateOptions;
pub use error::{Error, Result};
pub use multi::{Op, OpResult, ReadOp, ReadResult};
pub use on_refusal::OnRefusal;
pub use protocol_violation::ProtocolViolation;
pub use retry::{RetryPolicy, RetrySchedule};
#[cfg(feature = "gssapi")]
pub use sasl::{GssapiConfig, HostnameCanonicalization};
#[cfg(feature = "sasl")]
pub use sasl::{SaslConfig, SaslError, SaslExchange, SaslMechanism, SaslStep};
pub use session_id::SessionId;
pub use state::{EndReason, SessionEvent, SessionState};
#[cfg(feature = "tokio")]
pub use state_watch::{SessionEvents, StateWatch};
#[cfg(any(feature = "tls", feature = "blocking-tls"))]
pub use tls::{ServerNameCheck, TlsConfig, TlsConfigBuilder};
pub use tls_error::{CertProblem, Mismatch, TlsAlert, TlsError, TlsFailure};
pub use version::Version;
#[cfg(feature = "tokio")]
pub use watch::{OneshotWatch, PersistentWatch};
pub use watched_event::WatchedEvent;

pub use zk_proto::{
    Acl, AddWatchMode, ClientInfo, CreateMode, DecodeError, ErrorCode, EventType, FrameError, Id,
    OpCode, PathError, Perms, Stat, WatcherType,
};
