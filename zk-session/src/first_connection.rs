//! What waiting for a client's first connection came to, for both drivers' `connect`.

use std::time::Duration;

use crate::{
    state::{EndReason, SessionState},
    Error,
};

/// What a first connection came to: the state it reached (`None`: still connecting after
/// `waited`), as an error unless the client may be used; for both drivers' `connect`.
pub(crate) fn outcome(
    reached: Option<SessionState>,
    waited: Duration,
    last_error: impl FnOnce() -> Option<crate::ConnectError>,
) -> Result<(), Error> {
    match reached {
        // Suspended and Lost come only after a connection: one that dropped right after
        // its handshake still leaves a live session, which the client takes back.
        Some(s)
            if s.is_connected() || matches!(s, SessionState::Suspended | SessionState::Lost) =>
        {
            Ok(())
        }
        Some(SessionState::Ended(EndReason::SessionExpired)) => Err(Error::session_expired()),
        // SASL failed: with its reason. An `auth` packet the server refused has none.
        Some(SessionState::Ended(EndReason::AuthFailed)) => Err(match last_error() {
            Some(e @ crate::ConnectError::AuthFailed { .. }) => Error::AuthFailed(e),
            _ => Error::Code(zk_proto::ErrorCode::AuthFailed),
        }),
        Some(_) => Err(Error::Closed),
        None => Err(Error::ConnectTimeout {
            waited,
            last_error: last_error(),
        }),
    }
}
