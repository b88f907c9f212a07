//! More client certificates for [`TestCerts`]: one with another subject from the same CA (a
//! rotation), or one from the CA the server does not trust (a refusal).

use std::path::PathBuf;

use crate::{certs::issue_by, HarnessError, Result, TestCerts};

/// Which CA signs a new client certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Issuer {
    /// The test CA, which the server trusts.
    TestCa,
    /// [`TestCerts::other_ca`], which the server does not trust.
    OtherCa,
}

/// Issues a client certificate for `subject` (e.g. `CN=zk-client-2`) in `certs`' directory
/// and returns the file holding the certificate and its key, like
/// [`TestCerts::client_pem`]. `name` names the file; an existing file of that name is
/// replaced in one rename, so a client that reads it never sees half a file.
pub fn issue_client_cert(
    certs: &TestCerts,
    name: &str,
    subject: &str,
    issuer: Issuer,
) -> Result<PathBuf> {
    let d = certs.dir();
    let ca = match issuer {
        Issuer::TestCa => "ca",
        Issuer::OtherCa => "other-ca",
    };
    let next = format!("{name}.next");
    issue_by(
        d,
        ca,
        &next,
        &format!("/{subject}"),
        "extendedKeyUsage=clientAuth\n",
    )?;
    let pem = d.join(format!("{name}.pem"));
    std::fs::rename(d.join(format!("{next}.pem")), &pem)
        .map_err(|e| HarnessError::io(format!("renaming {next}.pem"), e))?;
    Ok(pem)
}
