//! Credentials never show in `Debug` output: auth data, digest passwords and session passwords
//! print as `<redacted>`, so a `{:?}` of a builder, a client or a log line leaks nothing.
//!
//! The `Debug` impls of the session's types that hold credentials live here, next to
//! [`Redacted`], so the session core keeps only its logic (`ClientBuilder`'s is in builder.rs, which
//! alone sees its fields). A field added to one of them is left out of its `Debug` (the
//! output ends in `..`) until it is listed.

use std::fmt;

use bytes::Bytes;

use crate::session::{Config, View};
#[cfg(feature = "tokio")]
use crate::{connection::Connection, shared::Shared};

/// A value whose `Debug` is `<redacted>`: wrap a secret in it before printing, or store it
/// wrapped so a derived `Debug` of its holder is safe.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Redacted<T>(pub T);

impl<T> fmt::Debug for Redacted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Auth entries as their schemes only: `[("digest", <redacted>)]`.
pub(crate) struct Auths<'a>(pub &'a [(String, Bytes)]);

impl fmt::Debug for Auths<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(scheme, auth)| (scheme, Redacted(auth))))
            .finish()
    }
}

/// A session to resume as its id only.
pub(crate) fn resume(resume: &Option<(i64, Bytes)>) -> Option<(i64, Redacted<&Bytes>)> {
    resume.as_ref().map(|(id, passwd)| (*id, Redacted(passwd)))
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("hosts", &self.hosts)
            .field("chroot", &self.chroot)
            .field("session_timeout", &self.session_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_only", &self.read_only)
            .field("max_frame_len", &self.max_frame_len)
            .field("auths", &Auths(&self.auths))
            .field("backoff_base", &self.backoff_base)
            .field("backoff_max", &self.backoff_max)
            .field("resume", &resume(&self.resume))
            .field("new_session_on_expiry", &self.new_session_on_expiry)
            .field("fail_fast_on_refusal", &self.fail_fast_on_refusal)
            .field("sasl", &self.sasl)
            .field("security", &self.security)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "tokio")]
impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("publisher", &self.publisher)
            .field("session_id", &self.session_id)
            .field("negotiated_timeout_ms", &self.negotiated_timeout_ms)
            .field("last_zxid", &self.last_zxid)
            .field("passwd", &Redacted(()))
            .field("last_connect_error", &self.last_connect_error)
            .field("server", &self.server)
            .field("hopeless", &*self.hopeless.borrow())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("View")
            .field("state", &self.state)
            .field("event", &self.event)
            .field("session_id", &self.session_id)
            .field("passwd", &Redacted(()))
            .field("negotiated_timeout", &self.negotiated_timeout)
            .field("server", &self.server)
            .field("ended", &self.ended)
            .finish()
    }
}

#[cfg(feature = "tokio")]
impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The bytes read are the server's replies (znode data), so only their count shows.
        f.debug_struct("Connection")
            .field("rd", &self.rd)
            .field("wr", &self.wr)
            .field("rbuf", &Redacted(()))
            .field("rbuf_len", &self.rbuf.len())
            .finish()
    }
}

#[cfg(all(test, feature = "tokio"))]
mod tests {
    use std::sync::{
        atomic::{AtomicI64, AtomicU64},
        Arc, Mutex,
    };

    use super::*;
    use crate::{
        chroot::Chroot, command::AddAuthCmd, senders::Command, state_watch::StatePublisher, Client,
    };

    const SECRET: &str = "hunter2-s3cret";

    /// `{:?}` and `{:#?}` of `value`, which must show `visible` and never the secret.
    fn assert_redacted(value: &impl fmt::Debug, visible: &[&str]) {
        for text in [format!("{value:?}"), format!("{value:#?}")] {
            assert!(!text.contains(SECRET), "secret printed: {text}");
            assert!(text.contains("<redacted>"), "{text}");
            for v in visible {
                assert!(text.contains(v), "{v} missing from {text}");
            }
        }
    }

    #[test]
    fn redacted_hides_its_value() {
        assert_eq!(format!("{:?}", Redacted(SECRET)), "<redacted>");
    }

    #[test]
    fn builder_hides_auth_data_and_the_session_password() {
        let builder = Client::builder("127.0.0.1:2181/app")
            .digest_auth("alice", SECRET)
            .auth("ip", SECRET.as_bytes())
            .resume_session(
                crate::SessionId::new(0x1234).unwrap(),
                Bytes::from_static(SECRET.as_bytes()),
            );
        assert_redacted(
            &builder,
            &["127.0.0.1:2181/app", "digest", "\"ip\"", "4660"],
        );
    }

    fn config() -> Config {
        Config {
            hosts: vec![("127.0.0.1".into(), 2181)],
            chroot: Chroot::default(),
            session_timeout: std::time::Duration::from_secs(10),
            connect_timeout: None,
            read_only: false,
            max_frame_len: 1024,
            auths: vec![("digest".into(), Bytes::from(format!("alice:{SECRET}")))],
            backoff_base: std::time::Duration::from_millis(50),
            backoff_max: std::time::Duration::from_secs(1),
            resume: Some((7, Bytes::from_static(SECRET.as_bytes()))),
            new_session_on_expiry: true,
            fail_fast_on_refusal: false,
            sasl: None,
            security: crate::security::Security::Plain,
        }
    }

    #[test]
    fn config_hides_auth_data_and_the_session_password() {
        assert_redacted(&config(), &["127.0.0.1", "digest", "max_frame_len"]);
    }

    fn shared() -> Shared {
        Shared {
            publisher: StatePublisher::new(),
            session_id: AtomicI64::new(0x4242),
            negotiated_timeout_ms: AtomicU64::new(0),
            last_zxid: AtomicI64::new(0),
            passwd: Mutex::new(Bytes::from_static(SECRET.as_bytes())),
            last_connect_error: Mutex::new(None),
            server: Mutex::new(Some("127.0.0.1:2181".into())),
            hopeless: tokio::sync::watch::Sender::new(None),
            ended: Default::default(),
            next_watch_id: Default::default(),
        }
    }

    #[test]
    fn shared_state_hides_the_session_password() {
        assert_redacted(&shared(), &["16962", "127.0.0.1:2181"]);
    }

    #[test]
    fn client_hides_the_session_password() {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let client = Client::new(tx, Arc::new(shared()), Chroot::default(), None, 1024);
        assert_eq!(&client.session_password()[..], SECRET.as_bytes());
        assert_redacted(&client, &["16962", "127.0.0.1:2181"]);
    }

    #[test]
    fn a_published_view_hides_the_session_password() {
        let view = View {
            state: crate::SessionState::Connected,
            event: None,
            session_id: 0x4242,
            passwd: Bytes::from_static(SECRET.as_bytes()),
            negotiated_timeout: None,
            server: Some("127.0.0.1:2181".into()),
            ended: false,
        };
        assert_redacted(&view, &["16962", "127.0.0.1:2181"]);
    }

    #[tokio::test]
    async fn a_connection_hides_the_bytes_read() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (stream, _) = tokio::join!(
            tokio::net::TcpStream::connect(listener.local_addr().unwrap()),
            listener.accept()
        );
        let (rd, wr) = stream.unwrap().into_split();
        let mut connection = Connection::new(
            crate::transport::ReadHalf::Tcp(rd),
            crate::transport::WriteHalf::Tcp(wr),
        );
        connection.rbuf = bytes::BytesMut::from(format!("data {SECRET}").as_bytes());
        assert_redacted(&connection, &["rbuf_len"]);
    }

    #[test]
    fn an_add_auth_command_hides_the_auth_data() {
        let (reply, _rx) = tokio::sync::oneshot::channel();
        let command: Command = crate::command::Command::AddAuth(Box::new(AddAuthCmd {
            scheme: "digest".into(),
            auth: Redacted(Bytes::from(format!("alice:{SECRET}"))),
            reply,
        }));
        assert_redacted(&command, &["digest"]);
    }
}
