//! TLS: connect to the servers' secure client port with a CA and a client certificate.
//!
//! With `zk-local --tls`, which prints the files and the connect string:
//! `ZK_TLS_CA=ca.pem ZK_TLS_CLIENT_PEM=client.pem cargo run -p zk-examples --bin tls -- HOSTS`

use zk_examples::required_env;
use zk_session::{Client, TlsConfig};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ca = required_env("ZK_TLS_CA")?;
    // ZooKeeper's PEM key store holds certificate and key in one file: it is both here.
    let pem = required_env("ZK_TLS_CLIENT_PEM")?;
    let tls = TlsConfig::builder()
        .ca_file(&ca)
        .client_cert_files(&pem, &pem)
        .build()?;
    let client = Client::builder(&zk_examples::servers())
        .tls(tls)
        .connect()
        .await?;
    for id in client.who_am_i().await? {
        println!("the server knows us as {}:{}", id.auth_scheme, id.user);
    }
    client.close().await?;
    Ok(())
}
