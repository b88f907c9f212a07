//! How the demo's clients reach the ensemble: plain TCP, or with `--tls` TLS on the secure
//! client ports, with a client certificate (the servers require one), using certificates made
//! for the run. The child processes learn the files from their environment.

use std::path::PathBuf;

use conformance::{Ensemble, TestCerts, ZkServer};
use zk_session::{Client, ClientBuilder, TlsConfig};

/// The trusted CA, for the child processes.
const CA_ENV: &str = "ZK_DEMO_TLS_CA";
/// The client certificate and key in one PEM file, for the child processes.
const CLIENT_PEM_ENV: &str = "ZK_DEMO_TLS_CLIENT_PEM";

#[derive(Debug, Clone)]
pub enum Transport {
    Plain,
    Tls { ca: PathBuf, client_pem: PathBuf },
}

impl Transport {
    /// TLS with the run's certificates (which must outlive every client).
    pub fn tls(certs: &TestCerts) -> Transport {
        Transport::Tls {
            ca: certs.ca(),
            client_pem: certs.client_pem(),
        }
    }

    /// What the parent process chose, read in a child process.
    pub fn from_env() -> Transport {
        match (std::env::var_os(CA_ENV), std::env::var_os(CLIENT_PEM_ENV)) {
            (Some(ca), Some(pem)) => Transport::Tls {
                ca: ca.into(),
                client_pem: pem.into(),
            },
            _ => Transport::Plain,
        }
    }

    /// The environment that makes a child process choose the same.
    pub fn env(&self) -> Vec<(&'static str, PathBuf)> {
        match self {
            Transport::Plain => Vec::new(),
            Transport::Tls { ca, client_pem } => {
                vec![(CA_ENV, ca.clone()), (CLIENT_PEM_ENV, client_pem.clone())]
            }
        }
    }

    /// "TCP" or "TLS", for what the demo prints.
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Plain => "TCP",
            Transport::Tls { .. } => "TLS",
        }
    }

    /// A client builder for `hosts`, with TLS when chosen.
    pub fn builder(&self, hosts: &str) -> Result<ClientBuilder, String> {
        let b = Client::builder(hosts);
        match self {
            Transport::Plain => Ok(b),
            Transport::Tls { ca, client_pem } => {
                let tls = TlsConfig::builder()
                    .ca_file(ca)
                    .client_cert_files(client_pem, client_pem)
                    .build()
                    .map_err(|e| format!("TLS settings: {e}"))?;
                Ok(b.tls(tls))
            }
        }
    }

    /// The connect string of the ports this transport uses.
    pub fn connect_string(&self, ens: &Ensemble) -> String {
        match self {
            Transport::Plain => ens.connect_string(),
            Transport::Tls { .. } => ens.secure_connect_string(),
        }
    }

    /// The port of `server` this transport uses.
    pub fn port(&self, server: &ZkServer) -> Option<u16> {
        match self {
            Transport::Plain => Some(server.client_port()),
            Transport::Tls { .. } => server.secure_client_port(),
        }
    }
}
