//! [`TestCerts`]: a throw-away CA, server and client certificates for TLS tests, made with
//! the machine's `openssl` in a scratch directory at test time (no key is ever checked in).

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use crate::{scratch::ScratchDir, HarnessError, Result};

/// Certificates and keys (PEM) in a scratch directory, removed on drop.
///
/// - `ca.pem`: the test CA (`CN=zk-test-ca`), the servers' trust store;
/// - `server.pem`: the server's certificate (`CN=zk-server`, names `127.0.0.1` and
///   [`SERVER_DNS_NAME`], deliberately not `localhost`, so that tests can connect by a name the
///   certificate lacks) and PKCS#8 key in one file, ZooKeeper's PEM key store;
/// - `client.crt`, `client.key`, `client.pem` (both): a client certificate
///   (`CN=zk-client`) from the test CA;
/// - `other-ca.pem`: a second CA that signed nothing the servers use, for "unknown CA" tests.
///
/// ```no_run
/// let certs = zk_testkit::TestCerts::generate().unwrap();
/// assert!(certs.ca().is_file());
/// ```
#[derive(Debug)]
pub struct TestCerts {
    dir: ScratchDir,
}

/// The DNS name (besides `127.0.0.1`) in the server certificate; it resolves nowhere.
pub const SERVER_DNS_NAME: &str = "zk-server.test";

/// The subject the client certificate carries, as ZooKeeper shows it in whoAmI (`x509`).
pub const CLIENT_SUBJECT: &str = "CN=zk-client";

impl TestCerts {
    /// Makes every certificate: a few RSA-2048 keys, well under a second.
    pub fn generate() -> Result<TestCerts> {
        let dir = ScratchDir::new("certs")?;
        let d = dir.path();
        make_ca(d, "ca", "/CN=zk-test-ca")?;
        make_ca(d, "other-ca", "/CN=zk-other-ca")?;
        issue(
            d,
            "server",
            "/CN=zk-server",
            &format!(
                "subjectAltName=DNS:{SERVER_DNS_NAME},IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
            ),
        )?;
        issue(
            d,
            "client",
            &format!("/{CLIENT_SUBJECT}"),
            "extendedKeyUsage=clientAuth\n",
        )?;
        Ok(TestCerts { dir })
    }

    /// The directory that holds the files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The test CA's certificate.
    pub fn ca(&self) -> PathBuf {
        self.dir().join("ca.pem")
    }

    /// A CA certificate that signed none of the others.
    pub fn other_ca(&self) -> PathBuf {
        self.dir().join("other-ca.pem")
    }

    /// The server's certificate and key in one file.
    pub fn server_pem(&self) -> PathBuf {
        self.dir().join("server.pem")
    }

    /// The client certificate.
    pub fn client_cert(&self) -> PathBuf {
        self.dir().join("client.crt")
    }

    /// The client certificate's private key (PKCS#8).
    pub fn client_key(&self) -> PathBuf {
        self.dir().join("client.key")
    }

    /// The client certificate and key in one file, like ZooKeeper's PEM key store.
    pub fn client_pem(&self) -> PathBuf {
        self.dir().join("client.pem")
    }
}

fn make_ca(dir: &Path, name: &str, subject: &str) -> Result<()> {
    openssl(
        dir,
        &[
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", subject,
            "-keyout",
        ],
        &[&format!("{name}.key"), "-out", &format!("{name}.pem")],
    )
}

/// A key and a certificate signed by the test CA, then `NAME.pem` = certificate + key.
fn issue(dir: &Path, name: &str, subject: &str, extensions: &str) -> Result<()> {
    issue_by(dir, "ca", name, subject, extensions)
}

/// Like [`issue`], signed by the CA whose files are `CA.pem` and `CA.key`.
pub(crate) fn issue_by(
    dir: &Path,
    ca: &str,
    name: &str,
    subject: &str,
    extensions: &str,
) -> Result<()> {
    let ext = format!("{name}.ext");
    std::fs::write(dir.join(&ext), extensions)
        .map_err(|e| HarnessError::io(format!("writing {ext}"), e))?;
    let (key, csr, crt) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.crt"),
    );
    openssl(
        dir,
        &["req", "-newkey", "rsa:2048", "-nodes", "-subj", subject],
        &["-keyout", &key, "-out", &csr],
    )?;
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-days",
            "30",
            "-CA",
            &format!("{ca}.pem"),
            "-CAkey",
            &format!("{ca}.key"),
        ],
        &[
            "-CAcreateserial",
            "-in",
            &csr,
            "-out",
            &crt,
            "-extfile",
            &ext,
        ],
    )?;
    let mut both = read(dir, &crt)?;
    both.extend(read(dir, &key)?);
    std::fs::write(dir.join(format!("{name}.pem")), both)
        .map_err(|e| HarnessError::io(format!("writing {name}.pem"), e))
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>> {
    std::fs::read(dir.join(name)).map_err(|e| HarnessError::io(format!("reading {name}"), e))
}

fn openssl(dir: &Path, args: &[&str], more: &[&str]) -> Result<()> {
    let out = Command::new("openssl")
        .args(args)
        .args(more)
        .current_dir(dir)
        .output()
        .map_err(|e| HarnessError::io("running openssl (is it installed?)", e))?;
    if out.status.success() {
        return Ok(());
    }
    Err(HarnessError::io(
        format!(
            "openssl {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ),
        std::io::Error::other("openssl failed"),
    ))
}
