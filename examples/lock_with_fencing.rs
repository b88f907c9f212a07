//! A lock with fencing: take the lock, write only while it is still ours (the server checks
//! in the same multi), then let it go.
//!
//! `cargo run -p zk-examples --bin lock_with_fencing -- HOSTS`

use zk_recipes::InterProcessMutex;
use zk_session::{Client, CreateOptions, Op, Version};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::builder(&zk_examples::servers()).connect().await?;
    let ledger = "/examples/ledger";
    client
        .create_with_parents(ledger, b"0", CreateOptions::persistent())
        .await
        .or_else(|e| match e {
            zk_session::Error::Code(zk_session::ErrorCode::NodeExists) => Ok(String::new()),
            e => Err(e),
        })?;

    let mutex = InterProcessMutex::new(client.clone(), "/examples/locks/ledger");
    let guard = mutex.acquire().await?;
    // Larger for every new holder: a store that remembers the largest token it has seen can
    // refuse a late write from a holder that lost the lock meanwhile.
    let token = guard.fencing_token();
    println!("holding {} with fencing token {token}", guard.path());

    // Applied only if our lock node still exists, in one atomic multi.
    let value = token.to_string();
    guard
        .fenced_multi([Op::set_data(ledger, value.as_bytes(), Version::Any)])
        .await?;
    let (data, _) = client.get_data(ledger).await?;
    println!("wrote {} under the lock", String::from_utf8_lossy(&data));

    guard.release().await?;
    println!("released");
    client.close().await?;
    Ok(())
}
