//! `watch_leadership()` of LeaderLatch and LeaderSelector against a real ZooKeeper 3.8: the
//! watch agrees with `has_leadership()` at every step (a term whose end was told is over in
//! the watch too), it can be made and read off the runtime, and its waits end with the
//! recipe.

mod recipes_support;

use recipes_support::{client, soon, unique_under};
use tokio::sync::mpsc;
use zk_recipes::{LeaderLatch, LeaderSelector, Leadership, LeadershipWatch, RecipeError};

/// Whether a watch made and read on a thread outside any runtime says it leads.
fn off_the_runtime(make: impl Fn() -> LeadershipWatch + Sync) -> bool {
    std::thread::scope(|s| s.spawn(|| make().is_leading()).join().unwrap())
}

#[tokio::test]
async fn a_selectors_watch_follows_its_terms_and_its_end() {
    let c = client(&conformance::shared_standalone().connect_string()).await;
    let path = unique_under("leadership-watch", "selector");
    let (tx, mut terms) = mpsc::unbounded_channel();
    let selector = LeaderSelector::builder(c.clone(), path.as_str())
        .task(move |lead: Leadership| {
            let _ = tx.send(lead);
            std::future::pending()
        })
        .start()
        .await
        .expect("the selector starts");
    // Made before the first term.
    let mut w = selector.watch_leadership();
    soon("leading", w.wait_for(true)).await.unwrap();
    let term = soon("term 1", terms.recv()).await.unwrap();
    assert!(selector.has_leadership() && w.is_leading());
    assert!(off_the_runtime(|| selector.watch_leadership()));

    selector.interrupt_leadership();
    term.lost().await;
    // Told the term is over: the watch says so at once, as has_leadership does.
    assert!(!selector.has_leadership());
    assert!(
        !w.is_leading(),
        "the watch still leads after the term's end"
    );
    assert!(!off_the_runtime(|| selector.watch_leadership()));
    assert!(!soon("the change", w.changed()).await.unwrap());

    selector.close().await;
    let ended = soon("the watch ends", w.wait_for(true)).await;
    assert!(matches!(ended, Err(RecipeError::Closed)), "{ended:?}");
    let _ = c.delete(&path, zk_session::Version::Any).await;
}

#[tokio::test]
async fn a_latchs_watch_follows_its_leadership_and_its_end() {
    let c = client(&conformance::shared_standalone().connect_string()).await;
    let path = unique_under("leadership-watch", "latch");
    let latch = LeaderLatch::builder(c.clone(), path.as_str())
        .start()
        .await
        .expect("the latch starts");
    let mut w = latch.watch_leadership();
    soon("leading", w.wait_for(true)).await.unwrap();
    assert!(latch.has_leadership() && w.is_leading());
    assert!(off_the_runtime(|| latch.watch_leadership()));

    latch.close().await;
    assert!(!latch.has_leadership());
    assert!(!w.is_leading(), "the watch still leads after the close");
    let ended = soon("the watch ends", w.changed()).await;
    // The change to not leading is told first, then the end.
    assert!(matches!(ended, Ok(false)), "{ended:?}");
    let ended = soon("the watch ends", w.wait_for(true)).await;
    assert!(matches!(ended, Err(RecipeError::Closed)), "{ended:?}");
    let _ = c.delete(&path, zk_session::Version::Any).await;
}
