//! Connecting: the global options made into a connected client, or a clear failure.

use std::time::Duration;

use zk_session::{Client, Error, OnRefusal};

use crate::{cli::Global, exit, input, security, session_failure, Failure};

/// The shortest time given to one server before the next is tried.
const MIN_PER_SERVER: Duration = Duration::from_millis(500);

/// Connects as the global options say. A malformed `--server` is a usage error (2); no
/// connection within `--connect-timeout` is exit 3, naming the servers.
pub async fn connect(g: &Global) -> Result<Client, Failure> {
    let server = input::utf8(&g.server(), "--server")?;
    connect_to(g, &server).await
}

/// The largest reply a session accepts: room for the batched reads of whole trees
/// (multiRead replies of many znodes), beyond ZooKeeper's 1 MiB default.
const MAX_FRAME: usize = 64 << 20;

/// Connects to `server` (another ensemble than `--server`'s, for `cp` and `diff`) with the
/// other global options.
pub async fn connect_to(g: &Global, server: &str) -> Result<Client, Failure> {
    let server = server.to_owned();
    let mut builder = Client::builder(&server)
        .session_timeout(g.session_timeout)
        .first_connection_timeout(g.connect_timeout)
        .connect_attempt_timeout(per_server(&server, g.connect_timeout))
        // An operator who mistyped a port hears of it at once, not after the timeout.
        .on_refusal(OnRefusal::FailFast)
        .max_frame_len(MAX_FRAME);
    for auth in &g.auth {
        let (scheme, cred) = input::auth(auth)?;
        builder = builder.auth(&scheme, &cred);
    }
    let builder = security::apply(builder, &g.security)?;
    builder.connect().await.map_err(|e| match e {
        // A bad host list, or a bad chroot path.
        Error::Config(_) | Error::InvalidPath { .. } => {
            Failure::usage(format!("--server {server:?}: {e}"))
        }
        Error::ConnectRefused { errors } => Failure::new(
            exit::CONNECTION,
            format!(
                "could not connect: every server refused ({})",
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Error::ConnectTimeout { waited, last_error } => Failure::new(
            exit::CONNECTION,
            format!(
                "could not connect to any of {} within {:.1} s (last attempt: {})",
                hosts(&server).join(", "),
                waited.as_secs_f64(),
                last_error.map_or_else(|| "none".to_owned(), |e| e.to_string())
            ),
        ),
        // Every server failed TLS for a reason no retry fixes (a certificate, a port that
        // does or does not speak TLS): said at once, in one line (no usable session: 3).
        Error::Tls(e) => Failure::new(
            exit::CONNECTION,
            format!("connecting to {server}: TLS handshake failed: {e}"),
        ),
        // No Kerberos ticket, or one the KDC or the server refused: no retry helps either.
        // The reason first, then where to look.
        Error::AuthFailed(why) if g.security.wants_gssapi() => Failure::new(
            exit::CONNECTION,
            format!(
                "connecting to {server}: Kerberos (GSSAPI) authentication as {} failed (AuthFailed): \
                 {why}; check the ticket (klist), --sasl-principal, --sasl-keytab and the \
                 server principal (--sasl-service, --sasl-canonicalize)",
                g.security
                    .sasl_principal
                    .as_deref()
                    .unwrap_or("the ticket cache's principal")
            ),
        ),
        // The server refused the SASL credentials: no retry helps (no usable session: 3).
        Error::AuthFailed(why) if g.security.sasl_user.is_some() => Failure::new(
            exit::CONNECTION,
            format!(
                "connecting to {server}: SASL authentication as {:?} failed (AuthFailed): \
                 {why}; check --sasl-user and the password",
                g.security.sasl_user.as_deref().unwrap_or_default()
            ),
        ),
        e => session_failure(&format!("connecting to {server}"), &e),
    })
}

/// The servers of a connect string (its chroot left out).
pub fn hosts(server: &str) -> Vec<&str> {
    let hosts = server.split('/').next().unwrap_or_default();
    hosts.split(',').map(str::trim).collect()
}

/// Each server gets an equal share of the whole connect timeout, so that one that accepts and
/// never answers does not use it all up.
fn per_server(server: &str, total: Duration) -> Duration {
    let n = hosts(server).len().max(1) as u32;
    (total / n)
        .max(MIN_PER_SERVER)
        .min(total.max(Duration::from_millis(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_shares() {
        assert_eq!(hosts("a:1,b:2/app"), ["a:1", "b:2"]);
        assert_eq!(hosts("a"), ["a"]);
        let five = Duration::from_secs(5);
        assert_eq!(per_server("a:1", five), five);
        assert_eq!(per_server("a,b,c,d,e", five), Duration::from_secs(1));
        assert_eq!(per_server(&"a,".repeat(99), five), MIN_PER_SERVER);
        assert_eq!(
            per_server("a", Duration::from_millis(100)),
            Duration::from_millis(100)
        );
    }
}
