//! How every connection of a session is secured — TLS or not, the SASL mechanism if any — as
//! the core sees it: plain values, whichever driver opens the streams.

/// How connections are secured; the same for every server of the connect string.
#[derive(Debug, Clone, Default)]
pub(crate) enum Security {
    /// Plain TCP (the default).
    #[default]
    Plain,
    /// TLS over TCP.
    #[cfg(any(feature = "tls", feature = "blocking-tls"))]
    Tls(crate::tls::TlsConfig),
}

/// The SASL mechanism every new connection authenticates with, if any; without the `sasl`
/// feature there is none to give.
#[cfg(feature = "sasl")]
pub(crate) type SaslOption = Option<crate::sasl::SaslConfig>;
/// See the `sasl` feature's definition.
#[cfg(not(feature = "sasl"))]
pub(crate) type SaslOption = Option<NoSasl>;

/// No value: without the `sasl` feature a [`SaslOption`] is always `None`.
#[cfg(not(feature = "sasl"))]
#[derive(Debug, Clone)]
pub(crate) enum NoSasl {}

/// Whether `rbuf` starts like a TLS record (an alert or a handshake, version 3.x) rather than
/// a frame: such a length would be over 350 MB, far above any frame limit.
pub(crate) fn speaks_tls(rbuf: &[u8]) -> bool {
    matches!(rbuf, [0x15 | 0x16, 0x03, ..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tls_record_is_told_from_a_frame() {
        // A TLS alert (fatal, decode_error) and a ServerHello record header.
        assert!(speaks_tls(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32]));
        assert!(speaks_tls(&[0x16, 0x03, 0x01]));
        // A connect response frame starts with its length, well under 0x1503_0000.
        assert!(!speaks_tls(&[0x00, 0x00, 0x00, 0x24]));
        assert!(!speaks_tls(&[0x15]));
        assert!(!speaks_tls(&[]));
    }
}
