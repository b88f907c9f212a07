//! SASL DIGEST-MD5: every connection authenticates before anything else is sent.
//!
//! With `zk-local --sasl`, which prints the user and password:
//! `ZK_SASL_USER=zk-local ZK_SASL_PASSWORD=... cargo run -p zk-examples --bin sasl -- HOSTS`

use zk_examples::required_env;
use zk_session::{Acl, Client, CreateOptions, Id, Perms, SaslConfig};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let user = required_env("ZK_SASL_USER")?;
    let password = required_env("ZK_SASL_PASSWORD")?;
    let client = Client::builder(&zk_examples::servers())
        .sasl(SaslConfig::digest_md5(&user, &password))
        .connect()
        .await?;
    for id in client.who_am_i().await? {
        println!("the server knows us as {}:{}", id.auth_scheme, id.user);
    }
    // A node only this SASL user may touch.
    let path = "/sasl-private";
    let acl = vec![Acl::new(Perms::ALL, Id::new("sasl", &user))];
    client
        .create(path, b"secret", CreateOptions::ephemeral().with_acl(acl))
        .await?;
    println!("created {path}, readable by sasl:{user} only");
    client.close().await?;
    Ok(())
}
