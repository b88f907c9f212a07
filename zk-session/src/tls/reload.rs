//! Certificates and keys read again from their files before each connection, so that a
//! rotation on disk reaches new connections without a restart.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex, MutexGuard},
};

use rustls::ClientConfig;

use super::{client_config, ServerNameCheck};
use crate::{trace, ConfigError};

/// PEM bytes, and the file they came from if they came from one.
#[derive(Clone, Default)]
pub(super) struct Pem {
    pub bytes: Vec<u8>,
    path: Option<PathBuf>,
}

impl Pem {
    pub fn given(bytes: &[u8]) -> Pem {
        Pem {
            bytes: bytes.to_vec(),
            path: None,
        }
    }

    pub fn file(path: &Path) -> Result<Pem, ConfigError> {
        let bytes = std::fs::read(path).map_err(|e| ConfigError::read_file(path, e))?;
        Ok(Pem {
            bytes,
            path: Some(path.to_owned()),
        })
    }

    /// The file's bytes now, when they differ from the ones held (`None`: unchanged, given
    /// as bytes, or unreadable for now).
    fn changed(&self) -> Option<Pem> {
        let path = self.path.as_ref()?;
        let bytes = std::fs::read(path).ok()?;
        (bytes != self.bytes).then(|| Pem {
            bytes,
            path: Some(path.clone()),
        })
    }
}

/// Everything a [`ClientConfig`] is made of: the trusted CAs, the client's chain and key.
#[derive(Clone, Default)]
pub(super) struct Material {
    pub ca: Vec<Pem>,
    pub client_cert: Option<(Pem, Pem)>,
}

impl Material {
    /// The material with every changed file read again, if any changed.
    fn refreshed(&self) -> Option<Material> {
        let ca: Vec<Option<Pem>> = self.ca.iter().map(Pem::changed).collect();
        let client = self
            .client_cert
            .as_ref()
            .map(|(c, k)| (c.changed(), k.changed()));
        let changed =
            ca.iter().any(Option::is_some) || matches!(client, Some((Some(_), _) | (_, Some(_))));
        if !changed {
            return None;
        }
        let pick = |new: Option<Pem>, old: &Pem| new.unwrap_or_else(|| old.clone());
        Some(Material {
            ca: ca
                .into_iter()
                .zip(&self.ca)
                .map(|(n, o)| pick(n, o))
                .collect(),
            client_cert: client
                .zip(self.client_cert.as_ref())
                .map(|((c, k), (oc, ok))| (pick(c, oc), pick(k, ok))),
        })
    }
}

/// The configuration in use and what it was made of.
pub(super) struct Loaded {
    client: Arc<ClientConfig>,
    material: Material,
}

impl Loaded {
    pub fn new(client: Arc<ClientConfig>, material: Material) -> Self {
        Loaded { client, material }
    }
}

/// The configuration for a new connection: made again first if a file changed and the new
/// contents parse; the previous one otherwise.
pub(super) fn current(loaded: &Mutex<Loaded>, check: &ServerNameCheck) -> Arc<ClientConfig> {
    let mut l = lock(loaded);
    if let Some(material) = l.material.refreshed() {
        match client_config(&material, check) {
            Ok(client) => {
                trace::info!("TLS certificates changed on disk: the next connections use them");
                l.client = Arc::new(client);
                l.material = material;
            }
            // Perhaps caught half written: tried again on the next connection.
            Err(e) => {
                trace::warn!(error = %e, "TLS certificates changed on disk but are unusable");
                let _ = e;
            }
        }
    }
    l.client.clone()
}

/// The configuration in use, without looking at the files.
pub(super) fn peek(loaded: &Mutex<Loaded>) -> Arc<ClientConfig> {
    lock(loaded).client.clone()
}

fn lock(m: &Mutex<Loaded>) -> MutexGuard<'_, Loaded> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_changed_file_makes_new_material() {
        let dir = std::env::temp_dir().join(format!("zk-tls-reload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (ca, cert) = (dir.join("ca.pem"), dir.join("client.pem"));
        std::fs::write(&ca, "CA one").unwrap();
        std::fs::write(&cert, "CERT one").unwrap();
        let m = Material {
            ca: vec![Pem::file(&ca).unwrap(), Pem::given(b"inline CA")],
            client_cert: Some((Pem::file(&cert).unwrap(), Pem::file(&cert).unwrap())),
        };
        assert!(m.refreshed().is_none());
        std::fs::write(&cert, "CERT two").unwrap();
        let r = m.refreshed().expect("the client file changed");
        let (c, k) = r.client_cert.as_ref().unwrap();
        assert_eq!(
            (&c.bytes[..], &k.bytes[..]),
            (&b"CERT two"[..], &b"CERT two"[..])
        );
        assert_eq!(r.ca[0].bytes, b"CA one");
        assert_eq!(r.ca[1].bytes, b"inline CA");
        assert!(r.refreshed().is_none());
        // A file gone for a moment (replaced by rename) keeps what was read before.
        std::fs::remove_file(&ca).unwrap();
        assert!(r.refreshed().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
