//! [`expire_session`]: ending a client's session from outside, as a test's fault.
//!
//! Waiting out a session timeout is slow and racy. The classic way, used by ZooKeeper's own
//! tests and Curator's, is to take the session over on a second connection (the server
//! accepts any connection that shows the session id and password) and close it there: the
//! server deletes the session's ephemeral znodes and watches, and the client learns that its
//! session expired when it next reaches a server.
//!
//! Cut the client off first (with [`FaultProxy::partition`](crate::fault_proxy::FaultProxy::partition),
//! or by pausing its server in an ensemble): otherwise it reconnects as soon as the server
//! hands its session to the second connection, and may take it back before the close.
//!
//! ```no_run
//! # async fn f(client: zk_session::Client) {
//! use zk_testkit::{expire_session, fault_proxy::FaultProxy, shared_standalone, SessionExpiry};
//!
//! // The client connected through the proxy; partition it, expire its session, let it back.
//! let proxy = FaultProxy::start(shared_standalone().client_addr()).await;
//! proxy.partition(true);
//! let (id, password) = (client.session_id().unwrap().get(), client.session_password());
//! let done = tokio::task::spawn_blocking(move || {
//!     expire_session(shared_standalone().client_addr(), id, &password)
//! });
//! assert!(done.await.unwrap().is_ok());
//! proxy.partition(false);
//! # }
//! ```

use std::net::SocketAddr;

use zk_proto::{ErrorCode, Request};

use crate::raw::{RawConnection, RawError};

/// The session timeout asked for by the second connection; the server answers with the
/// session's own.
const RESUME_TIMEOUT_MS: i32 = 30_000;

/// How [`expire_session`] found the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionExpiry {
    /// The session was alive; it is closed now.
    Closed,
    /// The server had already expired the session (or the password was wrong): nothing was
    /// left to do.
    AlreadyExpired,
}

/// Expires session `session_id` on the server at `server` (any member of its ensemble): takes
/// it over with `password` and closes it. See the [module documentation](self).
///
/// Blocking; from async code, call it on `tokio::task::spawn_blocking`.
pub fn expire_session(
    server: SocketAddr,
    session_id: i64,
    password: &[u8],
) -> Result<SessionExpiry, RawError> {
    let mut conn = RawConnection::connect(server)?;
    let answer = conn.resume(session_id, password, RESUME_TIMEOUT_MS)?;
    if answer.is_expired() {
        return Ok(SessionExpiry::AlreadyExpired);
    }
    let (header, _) = conn.call(1, &Request::CloseSession)?;
    match header.error_code() {
        ErrorCode::Ok => Ok(SessionExpiry::Closed),
        // Expired between the resume and the close.
        ErrorCode::SessionExpired => Ok(SessionExpiry::AlreadyExpired),
        code => Err(RawError::Server(code)),
    }
}
