//! TLS for the x509 area: a relay on a loopback port that, for the one connection it
//! accepts, opens TLS (with the client certificate) to the secure client port and passes
//! bytes both ways. The check's raw connection goes to the relay, so it sends and logs
//! plain frames as everywhere else.

use std::{io, net::SocketAddr, sync::Arc, thread, time::Duration};

use tokio::{
    io::{copy, split, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};
use tokio_rustls::{
    rustls::{
        self,
        pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer, ServerName},
        ClientConfig, RootCertStore,
    },
    TlsConnector,
};

use crate::setup::TlsTarget;

/// How long the relay waits for its connection.
const ACCEPT_WITHIN: Duration = Duration::from_secs(10);

/// A TLS client for one target: its rustls configuration and the server name to check.
#[derive(Clone)]
pub(crate) struct TlsClient {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    addr: SocketAddr,
}

fn read(path: &std::path::Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

impl TlsClient {
    /// Reads the target's CA, certificate and key.
    pub(crate) fn new(target: &TlsTarget) -> Result<TlsClient, String> {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&read(&target.ca)?) {
            let cert = cert.map_err(|e| format!("{}: {e}", target.ca.display()))?;
            roots.add(cert).map_err(|e| e.to_string())?;
        }
        let chain = CertificateDer::pem_slice_iter(&read(&target.cert)?)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{}: {e}", target.cert.display()))?;
        let key = PrivateKeyDer::from_pem_slice(&read(&target.key)?)
            .map_err(|e| format!("{}: {e}", target.key.display()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .map_err(|e| e.to_string())?;
        let name = ServerName::try_from(target.server_name.clone())
            .map_err(|e| format!("server name {:?}: {e}", target.server_name))?;
        Ok(TlsClient {
            config: Arc::new(config),
            name,
            addr: target.addr,
        })
    }

    /// Starts a relay for one connection; the address to connect to.
    pub(crate) fn relay(&self) -> io::Result<SocketAddr> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let local = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let client = self.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        thread::Builder::new()
            .name("zk-spec tls relay".into())
            .spawn(move || {
                // Any failure closes the check's side, which it sees as the server's close.
                let _ = runtime.block_on(client.serve(listener));
            })?;
        Ok(local)
    }

    async fn serve(self, listener: std::net::TcpListener) -> io::Result<()> {
        let listener = TcpListener::from_std(listener)?;
        let (plain, _) = tokio::time::timeout(ACCEPT_WITHIN, listener.accept()).await??;
        let tcp = TcpStream::connect(self.addr).await?;
        let tls = TlsConnector::from(self.config)
            .connect(self.name, tcp)
            .await?;
        let (mut plain_r, mut plain_w) = split(plain);
        let (mut tls_r, mut tls_w) = split(tls);
        // Either side's end ends both: a check that drops its connection closes the
        // server's, and the server's close reaches the check.
        tokio::select! {
            _ = copy(&mut plain_r, &mut tls_w) => {}
            _ = copy(&mut tls_r, &mut plain_w) => {}
        }
        let _ = tls_w.shutdown().await;
        plain_w.shutdown().await
    }
}
