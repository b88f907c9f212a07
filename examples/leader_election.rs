//! Leader election: two participants, one leads at a time; when the leader's task ends it
//! gives up leadership and the other takes over.
//!
//! `cargo run -p zk-examples --bin leader_election -- HOSTS`

use std::time::Duration;

use tokio::sync::mpsc;
use zk_recipes::LeaderSelector;
use zk_session::Client;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let servers = zk_examples::servers();
    let (terms, mut ended) = mpsc::unbounded_channel();
    let mut selectors = Vec::new();
    for id in ["alpha", "beta"] {
        let client = Client::builder(&servers).connect().await?;
        let terms = terms.clone();
        let selector = LeaderSelector::builder(client, "/examples/election")
            .task(move |lead| {
                let terms = terms.clone();
                async move {
                    println!(
                        "{} leads (term {}, fencing token {})",
                        lead.id(),
                        lead.term(),
                        lead.fencing_token()
                    );
                    // The leader's work; returning gives leadership up.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    let _ = terms.send(lead.id().to_owned());
                }
            })
            .id(id)
            .start()
            .await?;
        selectors.push(selector);
    }
    // Each participant leads once (no auto_requeue): two terms in all.
    let mut leaders = Vec::new();
    while leaders.len() < 2 {
        leaders.push(ended.recv().await.ok_or("the selectors stopped")?);
    }
    println!("leaders in order: {}", leaders.join(" -> "));
    for selector in selectors {
        selector.close().await?;
    }
    Ok(())
}
