//! The spans of one session task: a `session` span per ZooKeeper session and, inside it, a
//! `connection` span per connection attempt, which lasts as long as the connection it makes.
//!
//! The driver keeps them and enters the current one around every call into the session core
//! and every future it runs, so each event lands in the span of the connection (or, between
//! connections, the session) it is about. Without the `tracing` feature every method here is
//! empty and [`Current`] is a unit struct: nothing is kept and nothing is entered.

use std::future::Future;

use crate::chroot::Chroot;

/// The span to enter: the current connection's, or else the session's.
#[cfg(feature = "tracing")]
pub(crate) type Current = tracing::Span;

/// Nothing to enter without the `tracing` feature.
#[cfg(not(feature = "tracing"))]
#[derive(Clone, Copy)]
pub(crate) struct Current;

#[cfg(not(feature = "tracing"))]
impl Current {
    #[inline(always)]
    pub fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
        f()
    }
}

/// The session task's spans; see the module documentation.
pub(crate) struct Spans {
    #[cfg(feature = "tracing")]
    on: On,
}

#[cfg(feature = "tracing")]
struct On {
    /// The caller's span when the client was built: every session span follows from it. Only
    /// its id is kept, so the client does not hold the caller's span open for its whole life
    /// (a request span that built a client would otherwise never close).
    caller: Option<tracing::Id>,
    /// The connect string without credentials, for each new session span.
    connect_string: String,
    session: tracing::Span,
    /// The id recorded on `session`, once known.
    session_id: Option<i64>,
    connection: Option<tracing::Span>,
    /// Connection attempts so far, over every session of this handle.
    attempts: u64,
}

impl Spans {
    /// The spans of a session of the ensemble `hosts` under `chroot`; the caller's current
    /// span is what they follow from. `resume`: the session id given to take over, if any.
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    pub fn new(hosts: &[(String, u16)], chroot: &Chroot, resume: Option<i64>) -> Spans {
        #[cfg(feature = "tracing")]
        {
            let caller = tracing::Span::current().id();
            let connect_string = connect_string(hosts, chroot);
            let session = session_span(caller.clone(), &connect_string);
            let mut on = On {
                caller,
                connect_string,
                session,
                session_id: None,
                connection: None,
                attempts: 0,
            };
            if let Some(id) = resume.filter(|&id| id != 0) {
                on.record_session_id(id);
            }
            Spans { on }
        }
        #[cfg(not(feature = "tracing"))]
        Spans {}
    }

    /// The span to enter now.
    #[inline(always)]
    pub fn current(&self) -> Current {
        #[cfg(feature = "tracing")]
        {
            self.on
                .connection
                .as_ref()
                .unwrap_or(&self.on.session)
                .clone()
        }
        #[cfg(not(feature = "tracing"))]
        Current
    }

    /// `fut` inside the current span.
    #[inline(always)]
    pub fn instrument<F: Future>(&self, fut: F) -> impl Future<Output = F::Output> {
        #[cfg(feature = "tracing")]
        {
            tracing::Instrument::instrument(fut, self.current())
        }
        #[cfg(not(feature = "tracing"))]
        fut
    }

    /// A connection attempt to `server` starts, asking for `session_id` (0: a new session,
    /// which after an earlier one gets a session span of its own). Returns its span.
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    #[inline(always)]
    pub fn connection_started(&mut self, server: &(String, u16), session_id: i64) -> Current {
        #[cfg(feature = "tracing")]
        {
            let on = &mut self.on;
            if session_id == 0 && on.session_id.is_some() {
                let next = session_span(on.caller.clone(), &on.connect_string);
                next.follows_from(&on.session);
                on.session = next;
                on.session_id = None;
            }
            if session_id != 0 {
                on.record_session_id(session_id);
            }
            on.attempts += 1;
            let span = tracing::info_span!(
                parent: &on.session,
                "connection",
                server = %super::Server(server),
                attempt = on.attempts,
            );
            on.connection = Some(span.clone());
            span
        }
        #[cfg(not(feature = "tracing"))]
        Current
    }

    /// The server gave the session `session_id`.
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    #[inline(always)]
    pub fn session_known(&mut self, session_id: i64) {
        #[cfg(feature = "tracing")]
        self.on.record_session_id(session_id);
    }

    /// The attempt failed, or its connection ended.
    #[inline(always)]
    pub fn connection_over(&mut self) {
        #[cfg(feature = "tracing")]
        {
            self.on.connection = None;
        }
    }
}

#[cfg(feature = "tracing")]
impl On {
    fn record_session_id(&mut self, id: i64) {
        if self.session_id != Some(id) {
            self.session_id = Some(id);
            self.session
                .record("session_id", tracing::field::display(super::SessionId(id)));
        }
    }
}

/// A root span: a session outlives whatever the caller was doing when it built the client.
#[cfg(feature = "tracing")]
fn session_span(caller: Option<tracing::Id>, connect_string: &str) -> tracing::Span {
    let span = tracing::info_span!(
        parent: None,
        "session",
        session_id = tracing::field::Empty,
        connect_string,
    );
    span.follows_from(caller);
    span
}

/// `host:port,host:port/chroot` from the parsed servers: whatever else the caller's string
/// held is not in it, and a `user:password@` before a host is cut off.
#[cfg(feature = "tracing")]
fn connect_string(hosts: &[(String, u16)], chroot: &Chroot) -> String {
    let mut s = String::new();
    for (i, (host, port)) in hosts.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let host = host.rsplit('@').next().unwrap_or(host);
        if host.contains(':') {
            s.push_str(&format!("[{host}]:{port}"));
        } else {
            s.push_str(&format!("{host}:{port}"));
        }
    }
    if !chroot.is_root() {
        s.push_str(&chroot.to_server("/"));
    }
    s
}

#[cfg(all(test, feature = "tracing"))]
mod tests {
    use super::*;

    #[test]
    fn the_connect_string_has_servers_and_chroot_and_no_credentials() {
        let hosts = vec![
            ("zk1".to_owned(), 2181),
            ("::1".to_owned(), 2182),
            ("bob:secret@zk3".to_owned(), 2183),
        ];
        let chroot = Chroot::new("/app").unwrap();
        assert_eq!(
            connect_string(&hosts, &chroot),
            "zk1:2181,[::1]:2182,zk3:2183/app"
        );
        assert_eq!(connect_string(&hosts[..1], &Chroot::none()), "zk1:2181");
    }
}
