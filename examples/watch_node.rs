//! Watching a node: read it with a one-shot watch, change it, and receive the event.
//!
//! `cargo run -p zk-examples --bin watch_node -- HOSTS`

use zk_session::{Client, CreateOptions, Version};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::builder(&zk_examples::servers()).connect().await?;
    let path = "/examples/watched";
    client
        .create_with_parents(path, b"v1", CreateOptions::ephemeral())
        .await?;

    // The watch fires once, on the next change of the node's data (or its deletion).
    let (data, stat, watch) = client.get_data_watch(path).await?;
    println!(
        "{path} = {} (version {})",
        String::from_utf8_lossy(&data),
        stat.version
    );
    client
        .set_data(path, b"v2", Version::Exact(stat.version))
        .await?;
    let event = watch.await?;
    println!("event: {:?} on {}", event.event_type(), event.path());

    client.close().await?;
    Ok(())
}
