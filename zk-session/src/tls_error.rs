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
/// assert!(!TlsFailure::Interrupted(std::io::ErrorKind::ConnectionReset).is_permanent());
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
    /// The server's certificate is unusable for another reason.
    BadServerCert(CertProblem),
    /// The server requires a client certificate and the client has none
    /// (`ssl.clientAuth=need`, ZooKeeper's default).
    NoClientCert,
    /// The server refused the client's certificate (its CA is not in the server's trust
    /// store, it has expired, or it does not allow client authentication); the alert the
    /// server sent.
    ClientCertRefused(TlsAlert),
    /// The port does not speak TLS: the server hung up on the TLS greeting (a plain
    /// `clientPort`?).
    NotTlsPort,
    /// The port speaks TLS and the client does not (a `secureClientPort` given to a client
    /// without `ClientBuilder::tls`, feature `tls`).
    ServerExpectsTls,
    /// No TLS version or cipher suite in common (ZooKeeper 3.8 speaks TLS 1.2 unless told
    /// otherwise), or another protocol disagreement.
    ProtocolMismatch(Mismatch),
    /// The handshake was cut short by the network (reset, timeout): worth another try.
    Interrupted(std::io::ErrorKind),
}

/// Why a server certificate is unusable, beside the cases [`TlsFailure`] names itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CertProblem {
    /// Its signature does not verify.
    BadSignature,
    /// Its issuer revoked it.
    Revoked,
    /// It does not parse.
    BadEncoding,
    /// It is not meant for a TLS server (key usage, extended key usage).
    NotValidForPurpose,
    /// Another reason the TLS library gave.
    Other,
}

/// A TLS alert, by its code (RFC 8446 section 6): what a server said when it gave up.
///
/// ```
/// use zk_session::TlsAlert;
/// assert_eq!(TlsAlert::new(42).to_string(), "bad_certificate (42)");
/// assert_eq!(TlsAlert::new(42).code(), 42);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TlsAlert(u8);

impl TlsAlert {
    /// The alert with this code.
    pub fn new(code: u8) -> Self {
        TlsAlert(code)
    }

    /// Its code.
    pub fn code(self) -> u8 {
        self.0
    }

    /// Its name in the RFC, for the alerts a handshake ends with.
    fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            40 => "handshake_failure",
            42 => "bad_certificate",
            43 => "unsupported_certificate",
            44 => "certificate_revoked",
            45 => "certificate_expired",
            46 => "certificate_unknown",
            47 => "illegal_parameter",
            48 => "unknown_ca",
            49 => "access_denied",
            70 => "protocol_version",
            71 => "insufficient_security",
            80 => "internal_error",
            116 => "certificate_required",
            _ => return None,
        })
    }
}

impl fmt::Display for TlsAlert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "alert {}", self.0),
        }
    }
}

/// How client and server disagree on the TLS protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mismatch {
    /// The server ended the handshake with this alert.
    Alert(TlsAlert),
    /// No TLS version in common.
    NoCommonVersion,
    /// No cipher suite in common.
    NoCommonCipherSuite,
    /// Another disagreement the TLS library found.
    Other,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Alert(a) => write!(f, "the server sent {a}"),
            Mismatch::NoCommonVersion => f.write_str("no TLS version in common"),
            Mismatch::NoCommonCipherSuite => f.write_str("no cipher suite in common"),
            Mismatch::Other => f.write_str("the handshake's messages disagree"),
        }
    }
}

impl fmt::Display for CertProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CertProblem::BadSignature => "its signature does not verify",
            CertProblem::Revoked => "it is revoked",
            CertProblem::BadEncoding => "it does not parse",
            CertProblem::NotValidForPurpose => "it is not for a TLS server",
            CertProblem::Other => "the TLS library refused it",
        })
    }
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
            TlsFailure::ClientCertRefused(a) => {
                write!(f, "the server refused the client certificate ({a})")
            }
            TlsFailure::NotTlsPort => f.write_str(
                "the server hung up on the TLS handshake: not a TLS port (a plain clientPort?)",
            ),
            TlsFailure::ServerExpectsTls => {
                f.write_str("the server answered with TLS: this is a TLS port, connect with TLS")
            }
            TlsFailure::ProtocolMismatch(m) => write!(f, "TLS protocol mismatch: {m}"),
            TlsFailure::Interrupted(k) => write!(f, "the TLS handshake was interrupted: {k}"),
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
#[cfg(any(feature = "tls", feature = "blocking-tls"))]
pub(crate) fn classify(e: &std::io::Error, had_client_cert: bool, name: &str) -> TlsFailure {
    use std::io::ErrorKind;
    if let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return classify_rustls(tls, had_client_cert, name);
    }
    match e.kind() {
        // A plain ZooKeeper port reads the ClientHello as a frame length far above its limit
        // and hangs up, with the rest of the greeting unread (hence often a reset).
        ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset => TlsFailure::NotTlsPort,
        kind => TlsFailure::Interrupted(kind),
    }
}

/// See [`classify`].
#[cfg(any(feature = "tls", feature = "blocking-tls"))]
pub(crate) fn classify_rustls(e: &rustls::Error, had_client_cert: bool, name: &str) -> TlsFailure {
    use rustls::{AlertDescription as A, CertificateError as C, Error as E, PeerIncompatible as P};
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
            C::BadSignature | C::UnsupportedSignatureAlgorithmContext { .. } => {
                TlsFailure::BadServerCert(CertProblem::BadSignature)
            }
            C::Revoked => TlsFailure::BadServerCert(CertProblem::Revoked),
            C::BadEncoding => TlsFailure::BadServerCert(CertProblem::BadEncoding),
            C::InvalidPurpose | C::InvalidPurposeContext { .. } => {
                TlsFailure::BadServerCert(CertProblem::NotValidForPurpose)
            }
            _ => TlsFailure::BadServerCert(CertProblem::Other),
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
                true => TlsFailure::ClientCertRefused(TlsAlert(u8::from(*alert))),
            },
            other => TlsFailure::ProtocolMismatch(Mismatch::Alert(TlsAlert(u8::from(*other)))),
        },
        E::PeerIncompatible(P::ServerDoesNotSupportTls12Or13 | P::Tls12NotOffered) => {
            TlsFailure::ProtocolMismatch(Mismatch::NoCommonVersion)
        }
        E::PeerIncompatible(P::NoCipherSuitesInCommon) => {
            TlsFailure::ProtocolMismatch(Mismatch::NoCommonCipherSuite)
        }
        // Bytes that are no TLS record: something else listens there.
        E::InvalidMessage(_) => TlsFailure::NotTlsPort,
        _ => TlsFailure::ProtocolMismatch(Mismatch::Other),
    }
}

#[cfg(all(test, any(feature = "tls", feature = "blocking-tls")))]
mod tests {
    use std::io;

    use rustls::{
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
        assert_eq!(
            cert(C::BadSignature),
            TlsFailure::BadServerCert(CertProblem::BadSignature)
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
        assert_eq!(
            alert(A::BadCertificate, true),
            TlsFailure::ClientCertRefused(TlsAlert::new(42))
        );
        assert!(matches!(
            alert(A::UnknownCA, true),
            TlsFailure::ClientCertRefused(_)
        ));
        assert_eq!(
            alert(A::ProtocolVersion, true),
            TlsFailure::ProtocolMismatch(Mismatch::Alert(TlsAlert::new(70)))
        );
        assert!(alert(A::ProtocolVersion, true)
            .to_string()
            .contains("protocol_version (70)"));
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
        assert_eq!(
            peer,
            TlsFailure::ProtocolMismatch(Mismatch::NoCommonVersion)
        );
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
        assert_eq!(timeout, TlsFailure::Interrupted(io::ErrorKind::TimedOut));
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
