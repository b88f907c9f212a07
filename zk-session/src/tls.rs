//! TLS settings (feature `tls`): trusted CAs, a client certificate, and which server name to
//! verify. rustls with the `ring` provider; TLS 1.2 and 1.3 (ZooKeeper 3.8 speaks only 1.2
//! unless configured otherwise).

use std::{fmt, path::Path, sync::Arc};

use tokio::net::TcpStream;
use tokio_rustls::{
    client::TlsStream,
    rustls::{
        self,
        client::{
            danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
            WebPkiServerVerifier,
        },
        pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer, ServerName, UnixTime},
        CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
    },
    TlsConnector,
};

use crate::{connection::ConnectFailure, tls_error, ConfigError, Error, TlsFailure};

mod reload;

/// Which name a server's certificate must be valid for.
///
/// See the example on [`TlsConfig`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ServerNameCheck {
    /// The host of each connect-string entry as written, a DNS name or an IP address (the
    /// default). The certificate must name it in its subject alternative names (rustls
    /// ignores the common name).
    #[default]
    ConnectHost,
    /// This DNS name or IP address, for every server: for servers that share one certificate,
    /// or a connect string of addresses whose certificates name hosts.
    Name(String),
    /// Any name. The chain is still verified against the trusted CAs, but then anyone holding
    /// a certificate from those CAs can pose as the server. Like the Java client's
    /// `zookeeper.ssl.hostnameVerification=false`.
    DangerousAnyName,
}

/// How to secure connections with TLS; give it to
/// [`ClientBuilder::tls`](crate::ClientBuilder::tls). It applies to every server of the
/// connect string and to every reconnect. Needs the `tls` feature.
///
/// The server's certificate chain must lead to one of the trusted CAs, and the certificate
/// must be valid for the server's name (see [`ServerNameCheck`]). A client certificate is
/// needed by servers with `ssl.clientAuth=need`, ZooKeeper's default; the server then knows
/// the client as `x509` with the certificate's subject.
///
/// ```no_run
/// # async fn example() -> zk_session::Result<()> {
/// use zk_session::{Client, ServerNameCheck, TlsConfig};
///
/// let tls = TlsConfig::builder()
///     .ca_file("/etc/zookeeper/ca.pem")
///     // ZooKeeper's PEM key store holds both: the same file may be given twice.
///     .client_cert_files("/etc/zookeeper/client.pem", "/etc/zookeeper/client.pem")
///     .server_name(ServerNameCheck::Name("zk.example.com".into()))
///     .build()?;
/// let client = Client::builder("10.0.0.1:2281,10.0.0.2:2281")
///     .tls(tls)
///     .connect()
///     .await?;
/// let me = client.who_am_i().await?;
/// assert!(me.iter().any(|id| id.auth_scheme == "x509"));
/// # Ok(()) }
/// ```
///
/// Certificates and keys given as files are read again before each new connection, and a
/// change is taken up from then on: a rotated client certificate (or CA bundle) needs no
/// restart. A file that no longer parses (half written?) leaves the previous material in use.
#[derive(Clone)]
pub struct TlsConfig {
    current: Arc<std::sync::Mutex<reload::Loaded>>,
    server_name: ServerNameCheck,
}

/// Builds a [`TlsConfig`]; see [`TlsConfig::builder`].
#[derive(Clone, Default)]
pub struct TlsConfigBuilder {
    material: reload::Material,
    server_name: ServerNameCheck,
    /// Files that could not be read, reported by `build`.
    problems: Vec<ConfigError>,
}

impl TlsConfig {
    /// Starts a configuration with no trusted CA, no client certificate and
    /// [`ServerNameCheck::ConnectHost`].
    ///
    /// See the example on [`TlsConfig`].
    pub fn builder() -> TlsConfigBuilder {
        TlsConfigBuilder::default()
    }

    /// Opens TLS over `tcp` to the server written `host` in the connect string.
    pub(crate) async fn handshake(
        &self,
        host: &str,
        tcp: TcpStream,
    ) -> Result<TlsStream<TcpStream>, ConnectFailure> {
        let c = self.client_for(host)?;
        TlsConnector::from(c.config)
            .connect(c.server_name, tcp)
            .await
            .map_err(|e| ConnectFailure::Tls(tls_error::classify(&e, c.had_client_cert, &c.name)))
    }

    /// What a handshake with the server written `host` in the connect string starts from
    /// (for both drivers): the configuration now (files read again) and the name checked.
    pub(crate) fn client_for(&self, host: &str) -> Result<TlsClient, ConnectFailure> {
        let name = match &self.server_name {
            ServerNameCheck::Name(n) => n.as_str(),
            ServerNameCheck::ConnectHost | ServerNameCheck::DangerousAnyName => host,
        };
        let server_name = server_name(name).map_err(|e| {
            ConnectFailure::Tls(TlsFailure::NameMismatch {
                name: e.to_string(),
            })
        })?;
        let config = reload::current(&self.current, &self.server_name);
        Ok(TlsClient {
            had_client_cert: config.client_auth_cert_resolver.has_certs(),
            config,
            server_name,
            name: name.to_owned(),
        })
    }
}

/// See [`TlsConfig::client_for`].
pub(crate) struct TlsClient {
    pub config: Arc<ClientConfig>,
    pub server_name: ServerName<'static>,
    /// A client certificate was offered (for telling why a handshake failed).
    pub had_client_cert: bool,
    /// The name the server's certificate must be valid for.
    pub name: String,
}

impl TlsConfigBuilder {
    /// Trusts the CA certificates in `pem` (one or more `CERTIFICATE` sections; other
    /// sections are skipped). May be called more than once.
    pub fn ca_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.material.ca.push(reload::Pem::given(pem.as_ref()));
        self
    }

    /// Trusts the CA certificates in the PEM file at `path` (ZooKeeper's PEM trust store).
    pub fn ca_file(mut self, path: impl AsRef<Path>) -> Self {
        match reload::Pem::file(path.as_ref()) {
            Ok(pem) => self.material.ca.push(pem),
            Err(e) => self.problems.push(e),
        }
        self
    }

    /// Presents this certificate chain (PEM, the client's certificate first) and private key
    /// (PEM: PKCS#8, PKCS#1 or SEC1, unencrypted) to servers that ask for one.
    pub fn client_cert_pem(mut self, cert_chain: impl AsRef<[u8]>, key: impl AsRef<[u8]>) -> Self {
        self.material.client_cert = Some((
            reload::Pem::given(cert_chain.as_ref()),
            reload::Pem::given(key.as_ref()),
        ));
        self
    }

    /// Like [`client_cert_pem`](Self::client_cert_pem), from files; ZooKeeper's PEM key
    /// store holds both, so the same path may be given twice.
    pub fn client_cert_files(
        mut self,
        cert_chain: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Self {
        match (
            reload::Pem::file(cert_chain.as_ref()),
            reload::Pem::file(key.as_ref()),
        ) {
            (Ok(c), Ok(k)) => self.material.client_cert = Some((c, k)),
            (Err(e), _) | (_, Err(e)) => self.problems.push(e),
        }
        self
    }

    /// Which name server certificates must be valid for (default
    /// [`ServerNameCheck::ConnectHost`]).
    pub fn server_name(mut self, check: ServerNameCheck) -> Self {
        self.server_name = check;
        self
    }

    /// Checks and parses everything. Fails with [`Error::Config`] (a [`ConfigError`]) when a file cannot be read,
    /// when no CA certificate was given or one does not parse, when the client key or
    /// certificate is missing or unusable, or when [`ServerNameCheck::Name`] is no DNS name
    /// or IP address.
    ///
    /// ```
    /// use std::path::Path;
    /// use zk_session::{ConfigError, Error, TlsConfig};
    ///
    /// let none = TlsConfig::builder().build();
    /// assert!(matches!(none, Err(Error::Config(ConfigError::NoTrustedCa))));
    /// let missing = TlsConfig::builder().ca_file("/no/such/ca.pem").build();
    /// assert!(matches!(
    ///     missing,
    ///     Err(Error::Config(ConfigError::ReadFile { path, .. })) if path == Path::new("/no/such/ca.pem")
    /// ));
    /// ```
    pub fn build(self) -> Result<TlsConfig, Error> {
        if let Some(p) = self.problems.into_iter().next() {
            return Err(p.into());
        }
        if let ServerNameCheck::Name(n) = &self.server_name {
            server_name(n)?;
        }
        let client = client_config(&self.material, &self.server_name)?;
        Ok(TlsConfig {
            current: Arc::new(std::sync::Mutex::new(reload::Loaded::new(
                Arc::new(client),
                self.material,
            ))),
            server_name: self.server_name,
        })
    }
}

/// The rustls configuration for `material`.
fn client_config(
    material: &reload::Material,
    server_name: &ServerNameCheck,
) -> Result<ClientConfig, ConfigError> {
    let roots = root_store(&material.ca)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls_err = ConfigError::tls;
    // The safe defaults are TLS 1.3 and 1.2; ZooKeeper 3.8 speaks only 1.2 by default.
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_err("TLS versions", e))?;
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| ConfigError::tls("TLS server verifier", e))?;
    let builder = match server_name {
        ServerNameCheck::DangerousAnyName => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyServerName(verifier))),
        _ => builder.with_webpki_verifier(verifier),
    };
    Ok(match &material.client_cert {
        None => builder.with_no_client_auth(),
        Some((chain, key)) => {
            let (chain, key) = client_identity(&chain.bytes, &key.bytes)?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| tls_err("client certificate", e))?
        }
    })
}

fn root_store(pems: &[reload::Pem]) -> Result<RootCertStore, ConfigError> {
    let mut roots = RootCertStore::empty();
    for pem in pems {
        for cert in CertificateDer::pem_slice_iter(&pem.bytes) {
            let cert = cert.map_err(|e| ConfigError::tls("CA certificate PEM", e))?;
            roots
                .add(cert)
                .map_err(|e| ConfigError::tls("CA certificate", e))?;
        }
    }
    if roots.is_empty() {
        return Err(ConfigError::NoTrustedCa);
    }
    Ok(roots)
}

type Identity = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

fn client_identity(chain: &[u8], key: &[u8]) -> Result<Identity, ConfigError> {
    let chain = CertificateDer::pem_slice_iter(chain)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError::tls("client certificate PEM", e))?;
    if chain.is_empty() {
        return Err(ConfigError::NoClientCertificate);
    }
    // The error never quotes the key itself.
    let key = PrivateKeyDer::from_pem_slice(key)
        .map_err(|e| ConfigError::tls("client private key PEM", e))?;
    Ok((chain, key))
}

fn server_name(name: &str) -> Result<ServerName<'static>, ConfigError> {
    ServerName::try_from(name.to_owned()).map_err(|e| ConfigError::ServerName {
        name: name.to_owned(),
        source: Arc::new(e),
    })
}

/// The WebPKI verifier, less the name check (see [`ServerNameCheck::DangerousAnyName`]).
#[derive(Debug)]
struct AnyServerName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyServerName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let checked = self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now);
        match checked {
            // WebPKI checks the name last, once the chain is known good.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

// Hand-written so that keys never reach a log.
impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field(
                "client_cert",
                &reload::peek(&self.current)
                    .client_auth_cert_resolver
                    .has_certs(),
            )
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for TlsConfigBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfigBuilder")
            .field("ca_pems", &self.material.ca.len())
            .field(
                "client_cert",
                &self.material.client_cert.as_ref().map(|_| "<redacted>"),
            )
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_is_a_config_error() {
        let no_ca = TlsConfig::builder().build().unwrap_err();
        assert!(
            matches!(no_ca, Error::Config(ConfigError::NoTrustedCa)),
            "{no_ca}"
        );
        let garbage = "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n";
        let bad = TlsConfig::builder().ca_pem(garbage).build().unwrap_err();
        assert!(
            matches!(bad, Error::Config(ConfigError::Tls { what, .. }) if what == "CA certificate PEM"),
            "{bad}"
        );
        let missing = TlsConfig::builder()
            .client_cert_files("/nonexistent/c.pem", "/nonexistent/k.pem")
            .build()
            .unwrap_err();
        assert!(matches!(
            missing,
            Error::Config(ConfigError::ReadFile { ref path, .. }) if path == Path::new("/nonexistent/c.pem")
        ));
        // The io error is reachable from the top.
        let cause = std::error::Error::source(&missing).and_then(|c| c.source());
        let io = cause.and_then(|e| e.downcast_ref::<std::io::Error>());
        assert_eq!(io.map(|e| e.kind()), Some(std::io::ErrorKind::NotFound));
    }

    #[test]
    fn a_name_to_check_must_be_a_dns_name_or_an_ip_address() {
        assert!(server_name("zk.example.com").is_ok());
        assert!(server_name("127.0.0.1").is_ok());
        assert!(server_name("::1").is_ok());
        assert!(server_name("not a name").is_err());
    }

    #[test]
    fn debug_never_shows_the_key() {
        let b = TlsConfig::builder().client_cert_pem("CERT", "SECRET-KEY-BYTES");
        let shown = format!("{b:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("redacted"), "{shown}");
    }
}
