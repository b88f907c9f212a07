//! [`TlsError`]: why a TLS connection to a server failed, as a value a caller can match on,
//! and which of those failures retrying cannot fix.
//!
//! The types exist without the `tls` feature too: a plain client that reaches a TLS port gets
//! [`TlsFailure::ServerExpectsTls`]. The classification of rustls' errors is in
//! [`classify`], a pure function.

use std::fmt;

/// What went wrong in a TLS handshake (or in the plain handshake with a TLS port), and whose
/// certificate it was about.
///
/// ```
/// use zk_session::TlsFailure;
///
/// // A certificate problem does not fix itself: connect() reports it at once.
/// assert!(TlsFailure::UnknownCa.is_permanent());
/// assert!(!TlsFailure::Interrupted("connection reset".into()).is_permanent());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsFailure {
    /// The server's certificate chain does not lead to one of the trusted CAs.
    UnknownCa,
    /// The server's certificate is not valid for `name`, the name the client checked (the
    /// connect-string host or `ServerNameCheck::Name`).
    NameMismatch {
        /// The name the certificate was checked against.
        name: String,
    },
    /// The server's certificate has expired, or is not valid yet.
    ServerCertExpired,
    /// The server's certificate is unusable for another reason (bad signature, revoked,
    /// wrong key usage, unparsable): rustls' words.
    BadServerCert(String),
    /// The server requires a client certificate and the client has none
    /// (`ssl.clientAuth=need`, ZooKeeper's default).
    NoClientCert,
    /// The server refused the client's certificate (its CA is not in the server's trust
    /// store, it has expired, or it does not allow client authentication); the alert the
    /// server sent.
    ClientCertRefused(String),
    /// The port does not speak TLS: the server hung up on the TLS greeting (a plain
    /// `clientPort`?).
    NotTlsPort,
    /// The port speaks TLS and the client does not (a `secureClientPort` given to a client
    /// without `ClientBuilder::tls`, feature `tls`).
    ServerExpectsTls,
    /// No TLS version or cipher suite in common (ZooKeeper 3.8 speaks TLS 1.2 unless told
    /// otherwise), or another protocol disagreement: rustls' words.
    ProtocolMismatch(String),
    /// The handshake was cut short by the network (reset, timeout): worth another try.
    Interrupted(String),
}

impl TlsFailure {
    /// True when another attempt with the same settings would fail the same way: everything
    /// but [`Interrupted`](Self::Interrupted).
    pub fn is_permanent(&self) -> bool {
        !matches!(self, TlsFailure::Interrupted(_))
    }
}

impl fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsFailure::UnknownCa => {
                f.write_str("the server's certificate is not signed by a trusted CA")
            }
            TlsFailure::NameMismatch { name } => {
                write!(f, "the server's certificate is not valid for {name:?}")
            }
            TlsFailure::ServerCertExpired => {
                f.write_str("the server's certificate has expired or is not valid yet")
            }
            TlsFailure::BadServerCert(e) => write!(f, "the server's certificate is unusable: {e}"),
            TlsFailure::NoClientCert => {
                f.write_str("the server requires a client certificate and none is configured")
            }
            TlsFailure::ClientCertRefused(e) => {
                write!(f, "the server refused the client certificate ({e})")
            }
            TlsFailure::NotTlsPort => f.write_str(
                "the server hung up on the TLS handshake: not a TLS port (a plain clientPort?)",
            ),
            TlsFailure::ServerExpectsTls => {
                f.write_str("the server answered with TLS: this is a TLS port, connect with TLS")
            }
            TlsFailure::ProtocolMismatch(e) => {
                write!(f, "no TLS version or cipher suite in common: {e}")
            }
            TlsFailure::Interrupted(e) => write!(f, "the TLS handshake was interrupted: {e}"),
        }
    }
}

/// A TLS failure at one server (`host:port` as in the connect string).
///
/// [`ClientBuilder::connect`](crate::ClientBuilder::connect) returns it, as
/// [`Error::Tls`](crate::Error::Tls), as soon as every server has failed with a
/// [permanent](TlsFailure::is_permanent) TLS failure, instead of waiting out its timeout.
///
/// ```no_run
/// # async fn example() {
/// use zk_session::{Client, Error, TlsFailure};
///
/// // A plain client given a secureClientPort.
/// match Client::builder("zk1:2281").connect().await {
///     Err(Error::Tls(e)) if e.failure == TlsFailure::ServerExpectsTls => {
///         eprintln!("{}: this port needs TLS", e.server)
///     }
///     Err(e) => eprintln!("{e}"),
///     Ok(_client) => {}
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("TLS with {server} failed: {failure}")]
#[non_exhaustive]
pub struct TlsError {
    /// The server, `host:port`.
    pub server: String,
    /// What went wrong.
    pub failure: TlsFailure,
}

impl TlsError {
    pub(crate) fn new(server: String, failure: TlsFailure) -> Self {
        TlsError { server, failure }
    }
}

/// Classifies a failed handshake: rustls' error when there is one, otherwise the I/O error
/// that ended it. `had_client_cert` tells a missing certificate from a refused one, as the
/// server sends the same alerts for both.
#[cfg(feature = "tls")]
pub(crate) fn classify(e: &std::io::Error, had_client_cert: bool, name: &str) -> TlsFailure {
    use std::io::ErrorKind;
    if let Some(tls) = e
        .get_ref()
        .and_then(|i| i.downcast_ref::<tokio_rustls::rustls::Error>())
    {
        return classify_rustls(tls, had_client_cert, name);
    }
    match e.kind() {
        // A plain ZooKeeper port reads the ClientHello as a frame length far above its limit
        // and hangs up, with the rest of the greeting unread (hence often a reset).
        ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset => TlsFailure::NotTlsPort,
        _ => TlsFailure::Interrupted(e.to_string()),
    }
}

/// See [`classify`].
#[cfg(feature = "tls")]
pub(crate) fn classify_rustls(
    e: &tokio_rustls::rustls::Error,
    had_client_cert: bool,
    name: &str,
) -> TlsFailure {
    use tokio_rustls::rustls::{AlertDescription as A, CertificateError as C, Error as E};
    match e {
        E::InvalidCertificate(c) => match c {
            C::UnknownIssuer => TlsFailure::UnknownCa,
            C::NotValidForName | C::NotValidForNameContext { .. } => TlsFailure::NameMismatch {
                name: name.to_owned(),
            },
            C::Expired
            | C::ExpiredContext { .. }
            | C::NotValidYet
            | C::NotValidYetContext { .. } => TlsFailure::ServerCertExpired,
            other => TlsFailure::BadServerCert(format!("{other:?}")),
        },
        E::AlertReceived(alert) => match alert {
            A::CertificateRequired => TlsFailure::NoClientCert,
            // The alerts a server sends about the client's certificate.
            A::BadCertificate
            | A::UnsupportedCertificate
            | A::CertificateRevoked
            | A::CertificateExpired
            | A::CertificateUnknown
            | A::UnknownCA
            | A::AccessDenied => match had_client_cert {
                false => TlsFailure::NoClientCert,
                true => TlsFailure::ClientCertRefused(format!("alert {alert:?}")),
            },
            other => TlsFailure::ProtocolMismatch(format!("alert {other:?}")),
        },
        // Bytes that are no TLS record: something else listens there.
        E::InvalidMessage(_) => TlsFailure::NotTlsPort,
        other => TlsFailure::ProtocolMismatch(other.to_string()),
    }
}

#[cfg(all(test, feature = "tls"))]
mod tests {
    use std::io;

    use tokio_rustls::rustls::{
        AlertDescription as A, CertificateError as C, Error as E, InvalidMessage, PeerIncompatible,
    };

    use super::*;

    fn io_of(e: E) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }

    #[test]
    fn server_certificate_problems_name_the_check() {
        let cert = |c| classify(&io_of(E::InvalidCertificate(c)), true, "zk1");
        assert_eq!(cert(C::UnknownIssuer), TlsFailure::UnknownCa);
        assert_eq!(
            cert(C::NotValidForName),
            TlsFailure::NameMismatch { name: "zk1".into() }
        );
        assert_eq!(cert(C::Expired), TlsFailure::ServerCertExpired);
        assert_eq!(cert(C::NotValidYet), TlsFailure::ServerCertExpired);
        assert!(
            matches!(cert(C::BadSignature), TlsFailure::BadServerCert(e) if e.contains("BadSignature"))
        );
    }

    #[test]
    fn the_servers_alerts_tell_a_missing_client_certificate_from_a_refused_one() {
        let alert = |a, had| classify(&io_of(E::AlertReceived(a)), had, "zk1");
        // TLS 1.2 (ZooKeeper's default) says bad_certificate for both; TLS 1.3 has its own.
        assert_eq!(alert(A::BadCertificate, false), TlsFailure::NoClientCert);
        assert_eq!(
            alert(A::CertificateRequired, false),
            TlsFailure::NoClientCert
        );
        assert!(matches!(
            alert(A::BadCertificate, true),
            TlsFailure::ClientCertRefused(e) if e.contains("BadCertificate")
        ));
        assert!(matches!(
            alert(A::UnknownCA, true),
            TlsFailure::ClientCertRefused(_)
        ));
        assert!(matches!(
            alert(A::ProtocolVersion, true),
            TlsFailure::ProtocolMismatch(e) if e.contains("ProtocolVersion")
        ));
        assert!(matches!(
            alert(A::HandshakeFailure, false),
            TlsFailure::ProtocolMismatch(_)
        ));
    }

    #[test]
    fn protocol_mismatches_are_told_apart() {
        let peer = classify(
            &io_of(E::PeerIncompatible(
                PeerIncompatible::ServerDoesNotSupportTls12Or13,
            )),
            true,
            "zk1",
        );
        assert!(matches!(peer, TlsFailure::ProtocolMismatch(_)), "{peer:?}");
        let garbage = classify(
            &io_of(E::InvalidMessage(InvalidMessage::InvalidContentType)),
            true,
            "zk1",
        );
        assert_eq!(garbage, TlsFailure::NotTlsPort);
        let eof = io::Error::from(io::ErrorKind::UnexpectedEof);
        assert_eq!(classify(&eof, true, "zk1"), TlsFailure::NotTlsPort);
    }

    #[test]
    fn only_an_interrupted_handshake_is_worth_retrying() {
        let timeout = classify(&io::Error::from(io::ErrorKind::TimedOut), true, "zk1");
        assert!(matches!(timeout, TlsFailure::Interrupted(_)));
        assert!(!timeout.is_permanent());
        for f in [
            TlsFailure::UnknownCa,
            TlsFailure::NoClientCert,
            TlsFailure::NotTlsPort,
            TlsFailure::ServerExpectsTls,
            TlsFailure::ServerCertExpired,
        ] {
            assert!(f.is_permanent(), "{f:?}");
        }
    }

    #[test]
    fn the_message_is_one_line_and_names_the_server() {
        let e = TlsError::new("zk1:2281".into(), TlsFailure::NoClientCert);
        let shown = e.to_string();
        assert!(shown.starts_with("TLS with zk1:2281 failed: "), "{shown}");
        assert!(shown.contains("client certificate"), "{shown}");
        assert!(!shown.contains('\n'));
    }
}
