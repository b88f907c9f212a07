//! The read commands: ls, get, stat, getAcl, sync, config, whoami, getEphemerals.

use std::collections::VecDeque;

use serde_json::{json, Map, Value};
use zk_session::{Client, Error, ErrorCode};

use crate::{acl, dispatch::Ctx, exit, output, session_failure, stat_format, watching, Failure};

type Done = Result<i32, Failure>;

fn failed<'a>(what: &'a str, path: &'a str) -> impl Fn(Error) -> Failure + 'a {
    move |e| session_failure(&format!("{what} {path}"), &e)
}

/// `ls [-R] [-s] [-w] PATH`.
pub async fn ls(ctx: &Ctx, path: &str, recursive: bool, stat: bool, watch: bool) -> Done {
    let c = &ctx.client;
    let (mut children, st, w) = if watch {
        let (ch, st, w) = c
            .get_children_watch(path)
            .await
            .map_err(failed("ls", path))?;
        (ch, st, Some(w))
    } else {
        let (ch, st) = c
            .get_children_with_stat(path)
            .await
            .map_err(failed("ls", path))?;
        (ch, st, None)
    };
    children.sort();
    let listed = if recursive {
        descendants(c, path, children).await?
    } else {
        children
    };
    if ctx.json {
        let key = if recursive { "nodes" } else { "children" };
        let mut doc = json!({"path": path, key: listed});
        if stat {
            doc["stat"] = stat_format::json(&st);
        }
        output::json(&doc)?;
    } else {
        let mut text: String = listed.iter().map(|c| format!("{c}\n")).collect();
        if stat {
            text.push_str(&stat_format::text(&st));
        }
        output::raw(text.as_bytes())?;
    }
    match w {
        Some(w) => watching::one_event(ctx, w).await,
        None => Ok(exit::OK),
    }
}

/// PATH and every znode below it as full paths, breadth first, each level sorted. Znodes
/// deleted while the walk runs are left out.
async fn descendants(
    c: &Client,
    root: &str,
    children: Vec<String>,
) -> Result<Vec<String>, Failure> {
    let join = |parent: &str, child: &str| format!("{}/{child}", parent.trim_end_matches('/'));
    let mut all = vec![root.to_owned()];
    let mut queue: VecDeque<String> = children.iter().map(|ch| join(root, ch)).collect();
    while let Some(node) = queue.pop_front() {
        match c.get_children(&node).await {
            Ok(mut ch) => {
                ch.sort();
                queue.extend(ch.iter().map(|x| join(&node, x)));
                all.push(node);
            }
            Err(Error::Code(ErrorCode::NoNode)) => {}
            Err(e) => return Err(session_failure(&format!("ls -R {node}"), &e)),
        }
    }
    Ok(all)
}

/// `get [-s] [-w] PATH`.
pub async fn get(ctx: &Ctx, path: &str, stat: bool, watch: bool) -> Done {
    let c = &ctx.client;
    let (data, st, w) = if watch {
        let (d, st, w) = c.get_data_watch(path).await.map_err(failed("get", path))?;
        (d, st, Some(w))
    } else {
        let (d, st) = c.get_data(path).await.map_err(failed("get", path))?;
        (d, st, None)
    };
    if ctx.json {
        let mut doc = Map::new();
        doc.insert("path".into(), Value::String(path.into()));
        output::data_fields(&data, &mut doc);
        doc.insert("stat".into(), stat_format::json(&st));
        output::json(&Value::Object(doc))?;
    } else {
        // With -s the Stat's lines follow, so the data ends its own line.
        output::data(&data, stat)?;
        if stat {
            output::raw(stat_format::text(&st).as_bytes())?;
        }
    }
    match w {
        Some(w) => watching::one_event(ctx, w).await,
        None => Ok(exit::OK),
    }
}

/// `stat PATH`.
pub async fn stat(ctx: &Ctx, path: &str) -> Done {
    let st = ctx
        .client
        .exists(path)
        .await
        .map_err(failed("stat", path))?
        .ok_or_else(|| session_failure(&format!("stat {path}"), &Error::Code(ErrorCode::NoNode)))?;
    if ctx.json {
        let mut doc = stat_format::json(&st);
        doc["path"] = Value::String(path.into());
        output::json(&doc)?;
    } else {
        output::raw(stat_format::text(&st).as_bytes())?;
    }
    Ok(exit::OK)
}

/// `getAcl PATH`.
pub async fn get_acl(ctx: &Ctx, path: &str) -> Done {
    let (list, st) = ctx
        .client
        .get_acl(path)
        .await
        .map_err(failed("getAcl", path))?;
    if ctx.json {
        let entries: Vec<Value> = list.iter().map(acl::json).collect();
        output::json(&json!({"path": path, "acl": entries, "stat": stat_format::json(&st)}))?;
    } else {
        let text: String = list.iter().map(|a| acl::text(a) + "\n").collect();
        output::raw(text.as_bytes())?;
    }
    Ok(exit::OK)
}

/// `sync PATH`.
pub async fn sync(ctx: &Ctx, path: &str) -> Done {
    ctx.client.sync(path).await.map_err(failed("sync", path))?;
    if ctx.json {
        output::json(&json!({"path": path, "synced": true}))?;
    }
    Ok(exit::OK)
}

/// `config`.
pub async fn config(ctx: &Ctx) -> Done {
    let (data, st) = ctx
        .client
        .get_config()
        .await
        .map_err(|e| session_failure("config", &e))?;
    if ctx.json {
        let mut doc = Map::new();
        output::data_fields(&data, &mut doc);
        doc.insert("stat".into(), stat_format::json(&st));
        output::json(&Value::Object(doc))?;
    } else {
        output::data(&data, true)?;
    }
    Ok(exit::OK)
}

/// `whoami`.
pub async fn whoami(ctx: &Ctx) -> Done {
    let ids = ctx
        .client
        .who_am_i()
        .await
        .map_err(|e| session_failure("whoami", &e))?;
    if ctx.json {
        let list: Vec<Value> = ids
            .iter()
            .map(|i| json!({"scheme": i.auth_scheme, "user": i.user}))
            .collect();
        output::json(&json!({"identities": list}))?;
    } else {
        let text: String = ids
            .iter()
            .map(|i| format!("{}: {}\n", i.auth_scheme, i.user))
            .collect();
        output::raw(text.as_bytes())?;
    }
    Ok(exit::OK)
}

/// `getEphemerals [PATH]`.
pub async fn get_ephemerals(ctx: &Ctx, prefix: &str) -> Done {
    let mut list = ctx
        .client
        .get_ephemerals(prefix)
        .await
        .map_err(failed("getEphemerals", prefix))?;
    list.sort();
    if ctx.json {
        output::json(&json!({"prefix": prefix, "ephemerals": list}))?;
    } else {
        output::raw(
            list.iter()
                .map(|p| format!("{p}\n"))
                .collect::<String>()
                .as_bytes(),
        )?;
    }
    Ok(exit::OK)
}
