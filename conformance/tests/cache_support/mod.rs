//! Helpers for the cache tests: trees to load, events to wait for, and the comparison of a
//! cache's view with the server's tree.

#![allow(dead_code)]

use conformance::ephemeral_owner;
use std::time::Duration;

use zk_recipes::{Cache, CacheEvent, CacheEvents, CachedNode};
use zk_session::{Client, CreateOptions, Op};

use crate::recipes_support::soon;

/// The client's session id as the server's `wchc` shows it.
pub fn sid(c: &Client) -> i64 {
    ephemeral_owner(c)
}

pub fn persistent() -> CreateOptions {
    CreateOptions::persistent()
}

/// Creates `path` with `data`.
pub async fn mk(c: &Client, path: &str, data: &[u8]) {
    c.create(path, data, persistent()).await.expect(path);
}

/// A tree under `root`: `fanout` children per node, `levels` levels below the root.
pub async fn build_tree(c: &Client, root: &str, fanout: usize, levels: usize) -> Vec<String> {
    mk(c, root, b"root").await;
    let mut all = vec![root.to_owned()];
    let mut level = vec![root.to_owned()];
    for _ in 0..levels {
        let mut next = Vec::new();
        let mut ops = Vec::new();
        for parent in &level {
            for i in 0..fanout {
                let p = format!("{parent}/n{i}");
                ops.push(Op::create(p.clone(), p.as_bytes(), persistent()));
                next.push(p);
            }
        }
        for chunk in ops.chunks(500) {
            c.multi(chunk.to_vec()).await.expect("build the tree");
        }
        all.extend(next.iter().cloned());
        level = next;
    }
    all
}

/// Events until one matches `last` (included), failing after the test's patience.
pub async fn until_event(
    events: &mut CacheEvents,
    what: &str,
    last: impl Fn(&CacheEvent) -> bool,
) -> Vec<CacheEvent> {
    let mut seen = Vec::new();
    soon(what, async {
        while let Some(e) = events.next().await {
            let done = last(&e);
            seen.push(e);
            if done {
                return;
            }
        }
        panic!("the stream ended: {what}; seen {seen:?}");
    })
    .await;
    seen
}

/// A cache of `root` on `c`, loaded, with a subscriber that has read the load's events.
pub async fn loaded(c: Client, root: &str) -> (Cache, CacheEvents) {
    let mut builder = Cache::builder(c, root);
    let mut events = builder.subscribe();
    let cache = builder.start().await.unwrap();
    until_event(&mut events, "initialized", |e| {
        matches!(e, CacheEvent::Initialized)
    })
    .await;
    (cache, events)
}

pub fn described(events: &[CacheEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            CacheEvent::Created { path, .. } => format!("created {path}"),
            CacheEvent::Changed { path, .. } => format!("changed {path}"),
            CacheEvent::Deleted { path, .. } => format!("deleted {path}"),
            other => format!("{other:?}"),
        })
        .collect()
}

/// The server's tree under `root` as (path, mzxid, data), sorted.
pub async fn server_tree(c: &Client, root: &str) -> Vec<(String, i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_owned()];
    while let Some(p) = todo.pop() {
        let Ok((data, stat)) = c.get_data(&p).await else {
            continue;
        };
        out.push((p.clone(), stat.mzxid, data.to_vec()));
        if stat.num_children > 0 {
            for n in c.get_children(&p).await.unwrap_or_default() {
                todo.push(format!("{p}/{n}"));
            }
        }
    }
    out.sort();
    out
}

/// The cache's view in the same form.
pub fn cache_tree(cache: &Cache, root: &str) -> Vec<(String, i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_owned()];
    while let Some(p) = todo.pop() {
        let Some(node) = cache.get(&p) else { continue };
        out.push((p.clone(), node.stat().mzxid, data_of(&node)));
        for n in cache.children(&p).unwrap_or_default() {
            todo.push(format!("{p}/{n}"));
        }
    }
    out.sort();
    out
}

pub fn data_of(node: &CachedNode) -> Vec<u8> {
    node.data().unwrap_or_default().to_vec()
}

pub async fn view_matches_server(admin: &Client, cache: &Cache, root: &str) {
    let mut last = (Vec::new(), Vec::new());
    let ok = soon("the view matches the server", async {
        loop {
            let server = server_tree(admin, root).await;
            let view = cache_tree(cache, root);
            if server == view {
                return true;
            }
            last = (server, view);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    assert!(ok.await, "{last:?}");
}
