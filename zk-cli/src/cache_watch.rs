//! `watch --cache`: a subtree (or one znode) through zk-recipes' cache, printing what
//! changes as text lines or JSON events: the initial load (each znode as created, then
//! `initialized`), then every change, and `resynced` after each reconnect or new session.

use serde_json::{json, Map, Value};
use zk_recipes::{Cache, CacheEvent, CacheMode, CachedNode, ResyncReason};

use crate::{dispatch::Ctx, exit, output, run::recipe_failure, watching, Failure};

/// How much of the tree `watch --cache` follows.
pub struct Scope {
    pub recursive: bool,
    pub depth: Option<usize>,
}

pub async fn watch(ctx: &Ctx, path: &str, scope: Scope) -> Result<i32, Failure> {
    let mode = if scope.recursive {
        CacheMode::Tree
    } else {
        CacheMode::Node
    };
    let mut builder = Cache::builder(ctx.client.clone(), path).mode(mode);
    if let Some(d) = scope.depth {
        builder = builder.mode(CacheMode::Tree).max_depth(d);
    }
    let mut events = builder.subscribe();
    let cache = builder
        .start()
        .await
        .map_err(|e| recipe_failure(&format!("watch --cache {path}"), e))?;
    let json = ctx.json;
    watching::until_interrupted(ctx, async move {
        while let Some(ev) = events.next().await {
            print(&ev, json)?;
        }
        drop(cache);
        Err(Failure::new(exit::CONNECTION, "the cache stopped".into()))
    })
    .await
}

fn reason(r: ResyncReason) -> &'static str {
    match r {
        ResyncReason::Reconnected => "reconnected",
        ResyncReason::NewSession => "new_session",
        ResyncReason::WatchLagged => "watch_lagged",
        _ => "other",
    }
}

fn node_fields(path: &str, node: &CachedNode, into: &mut Map<String, Value>) {
    into.insert("path".into(), path.into());
    into.insert("version".into(), node.stat().version.into());
    into.insert("mzxid".into(), node.stat().mzxid.into());
    if let Some(d) = node.data() {
        output::data_fields(d, into);
    }
}

fn print(ev: &CacheEvent, as_json: bool) -> Result<(), Failure> {
    let (kind, node) = match ev {
        CacheEvent::Created { path, node } => ("created", Some((path, node))),
        CacheEvent::Changed { path, new, .. } => ("changed", Some((path, new))),
        CacheEvent::Deleted { path, old } => ("deleted", Some((path, old))),
        CacheEvent::Initialized => ("initialized", None),
        CacheEvent::Resynced(_) => ("resynced", None),
        CacheEvent::Lagged { .. } => ("lagged", None),
        _ => ("other", None),
    };
    if !as_json {
        let detail = match (ev, node) {
            (_, Some((path, _))) => path.clone(),
            (CacheEvent::Resynced(r), _) => reason(*r).to_owned(),
            (CacheEvent::Lagged { missed }, _) => format!("{missed} events missed"),
            _ => String::new(),
        };
        let line = if detail.is_empty() {
            format!("{kind}\n")
        } else {
            format!("{kind} {detail}\n")
        };
        return output::raw(line.as_bytes());
    }
    let mut m = Map::new();
    m.insert("event".into(), kind.into());
    if let Some((path, node)) = node {
        node_fields(path, node, &mut m);
    }
    match ev {
        CacheEvent::Resynced(r) => {
            m.insert("reason".into(), reason(*r).into());
        }
        CacheEvent::Lagged { missed } => {
            m.insert("missed".into(), json!(missed));
        }
        _ => {}
    }
    output::json(&Value::Object(m))
}
