//! Secrets in records (auth data, session passwords) print as `<redacted>` in `Debug`, so a
//! `{:?}` of a request or a log line that shows one leaks nothing.

use std::fmt;

/// Prints `<redacted>` whatever it holds: put it in a manual `Debug` in place of a secret.
pub(crate) struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// An optional secret: `None`, or `Some(<redacted>)` (whether there is one is not a secret).
pub(crate) fn optional<T>(secret: &Option<T>) -> Option<Redacted> {
    secret.as_ref().map(|_| Redacted)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use crate::{AuthPacket, ConnectRequest, ConnectResponse};

    const SECRET: &[u8] = b"hunter2-s3cret!!";

    /// `{:?}` and `{:#?}` show `visible` and the redaction mark, never the secret in any form
    /// a derived `Debug` of `Bytes` would print it.
    fn assert_redacted(value: &impl std::fmt::Debug, visible: &[&str]) {
        let as_bytes = format!("{:?}", Bytes::from_static(SECRET));
        for text in [format!("{value:?}"), format!("{value:#?}")] {
            assert!(!text.contains("hunter2"), "secret printed: {text}");
            assert!(!text.contains(&as_bytes), "secret printed: {text}");
            assert!(text.contains("<redacted>"), "{text}");
            for v in visible {
                assert!(text.contains(v), "{v} missing from {text}");
            }
        }
    }

    #[test]
    fn an_auth_packet_hides_its_auth_data() {
        let p = AuthPacket {
            auth_type: 0,
            scheme: "digest".into(),
            auth: Some(Bytes::from_static(SECRET)),
        };
        assert_redacted(&p, &["digest", "auth_type"]);
        let none = AuthPacket::default();
        assert!(format!("{none:?}").contains("auth: None"), "{none:?}");
    }

    #[test]
    fn a_connect_request_hides_the_session_password() {
        let r = ConnectRequest {
            session_id: 0x1234,
            passwd: Bytes::from_static(SECRET),
            timeout: 30_000,
            ..Default::default()
        };
        assert_redacted(&r, &["4660", "30000", "read_only"]);
    }

    #[test]
    fn a_connect_response_hides_the_session_password() {
        let r = ConnectResponse {
            session_id: 0x1234,
            passwd: Bytes::from_static(SECRET),
            timeout: 4000,
            ..Default::default()
        };
        assert_redacted(&r, &["4660", "4000", "read_only"]);
    }
}
