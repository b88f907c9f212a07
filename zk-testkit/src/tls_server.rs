//! [`shared_tls_standalone`]: one TLS server per test process, with the certificates it trusts.

use std::sync::OnceLock;

use crate::{ServerTls, Standalone, TestCerts};

/// A standalone server with a secure client port beside the plain one (client certificates
/// required, [`ServerTls::from_certs`]) and the [`TestCerts`] it was made with.
#[derive(Debug)]
pub struct TlsStandalone {
    /// The CA, server and client certificates of this run.
    pub certs: TestCerts,
    /// The server; [`ZkServer::secure_connect_string`](crate::ZkServer::secure_connect_string)
    /// reaches its TLS port.
    pub zk: Standalone,
}

/// A [`TlsStandalone`] shared by every test in this process, started on first use.
///
/// Certificates and a JVM cost about a second, so the TLS tests of one binary share them.
/// Panics (in every caller) when the certificates or the server cannot be made.
///
/// ```no_run
/// let env = zk_testkit::tls_server::shared_tls_standalone();
/// assert!(env.certs.ca().is_file());
/// ```
pub fn shared_tls_standalone() -> &'static TlsStandalone {
    static ENV: OnceLock<TlsStandalone> = OnceLock::new();
    ENV.get_or_init(|| {
        let certs = TestCerts::generate().expect("certificates");
        let zk = Standalone::builder()
            .tls(ServerTls::from_certs(&certs))
            .start()
            .expect("TLS server");
        TlsStandalone { certs, zk }
    })
}
