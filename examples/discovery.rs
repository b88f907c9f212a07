//! Service discovery that Curator and Spring Cloud Zookeeper clients share: register this
//! process as an instance of `api`, find the instances of `api`, pick one.
//!
//! `cargo run -p zk-examples --bin discovery -- HOSTS`

use zk_recipes::{ProviderStrategy, ServiceDiscovery, ServiceInstance, UriSpec};
use zk_session::Client;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::builder(&zk_examples::servers()).connect().await?;
    let base = format!("/examples/services-{}", std::process::id());
    let discovery = ServiceDiscovery::builder(client, &base).start().await?;
    let uri = UriSpec::parse("{scheme}://{address}:{port}")?;
    for (id, port) in [("api-1", 8080), ("api-2", 8081)] {
        let me = ServiceInstance::builder("api")
            .id(id)
            .address("127.0.0.1")
            .port(port)
            .uri_spec(uri.clone())
            .build();
        discovery.register(&me).await?;
    }
    for i in discovery.query_for_instances("api").await? {
        let at = i.uri_spec().map(|s| s.render(&i, &Default::default()));
        println!("{} at {}", i.id(), at.unwrap_or_default());
    }
    let provider = discovery
        .provider("api")
        .strategy(ProviderStrategy::RoundRobin)
        .start()
        .await?;
    let picks: Vec<String> = (0..4)
        .filter_map(|_| provider.get_instance().map(|i| i.id().to_owned()))
        .collect();
    println!("round robin: {}", picks.join(" "));
    provider.close().await?;
    discovery.close().await?;
    Ok(())
}
