//! Looking at a subtree: `du` (bytes and znodes below each znode), `tree` (a drawing),
//! `find` (paths matching a regular expression) and `grep` (data lines matching one).

use std::collections::HashMap;

use regex::{bytes::Regex as BytesRegex, Regex};
use serde_json::{json, Value};

use crate::{
    dispatch::Ctx,
    exit, output,
    tree::{relative, Tree},
    tree_read::{self, Scope},
    Failure,
};

type Done = Result<i32, Failure>;

async fn read(ctx: &Ctx, path: &str, depth: Option<usize>) -> Result<Tree, Failure> {
    let scope = Scope { acls: false, depth };
    tree_read::read(&ctx.client, path, scope).await
}

/// How deep `path` is below `root` (0 for the root).
fn depth_below(root: &str, path: &str) -> usize {
    match relative(root, path) {
        "/" => 0,
        rel => rel.matches('/').count(),
    }
}

/// One znode's totals: its subtree's data bytes and znode count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    pub path: String,
    pub bytes: u64,
    pub znodes: u64,
}

/// The totals of every znode at most `depth` levels below the root, depth first.
pub fn usage(tree: &Tree, depth: usize) -> Vec<Usage> {
    // Depth first, so a znode's subtree is the run of paths after it that start with it.
    let mut out: Vec<Usage> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for node in &tree.nodes {
        while let Some(&top) = open.last() {
            let prefix = format!("{}/", out[top].path.trim_end_matches('/'));
            if node.path.starts_with(&prefix) {
                break;
            }
            open.pop();
        }
        for &i in &open {
            out[i].bytes += node.data.len() as u64;
            out[i].znodes += 1;
        }
        if depth_below(&tree.root, &node.path) <= depth {
            open.push(out.len());
            out.push(Usage {
                path: node.path.clone(),
                bytes: node.data.len() as u64,
                znodes: 1,
            });
        }
    }
    out
}

/// `zk du [--depth N] PATH`: bytes and znodes of each subtree down to N levels (default 1).
pub async fn du(ctx: &Ctx, path: &str, depth: Option<usize>) -> Done {
    let tree = read(ctx, path, None).await?;
    let rows = usage(&tree, depth.unwrap_or(1));
    if ctx.json {
        let list: Vec<Value> = rows
            .iter()
            .map(|u| json!({"path": u.path, "bytes": u.bytes, "znodes": u.znodes}))
            .collect();
        output::json(&json!({"path": path, "usage": list}))?;
    } else {
        let text: String = rows
            .iter()
            .map(|u| format!("{}\t{}\t{}\n", u.bytes, u.znodes, u.path))
            .collect();
        output::raw(format!("bytes\tznodes\tpath\n{text}").as_bytes())?;
    }
    Ok(exit::OK)
}

/// `zk tree [--depth N] PATH`: the subtree drawn with one znode a line.
pub async fn tree(ctx: &Ctx, path: &str, depth: Option<usize>) -> Done {
    let tree = read(ctx, path, depth).await?;
    if ctx.json {
        let paths: Vec<&str> = tree.nodes.iter().map(|n| n.path.as_str()).collect();
        output::json(&json!({"path": path, "nodes": paths}))?;
    } else {
        output::raw(draw(&tree).as_bytes())?;
    }
    Ok(exit::OK)
}

/// The root's path, then each znode's name indented under its parent with `├──`/`└──`.
pub fn draw(tree: &Tree) -> String {
    // The last child of each parent: in depth-first order, the last one listed.
    let mut last: HashMap<&str, &str> = HashMap::new();
    for node in &tree.nodes {
        if let Some((parent, _)) = node.path.rsplit_once('/') {
            last.insert(parent, &node.path);
        }
    }
    let is_last = |path: &str| {
        let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
        last.get(parent) == Some(&path)
    };
    let mut text = String::new();
    for node in &tree.nodes {
        let path = node.path.as_str();
        let d = depth_below(&tree.root, path);
        if d == 0 {
            text.push_str(path);
            text.push('\n');
            continue;
        }
        for level in 1..=d {
            let more = !is_last(ancestor_at(&tree.root, path, level));
            text.push_str(match (level == d, more) {
                (true, true) => "├── ",
                (true, false) => "└── ",
                (false, true) => "│   ",
                (false, false) => "    ",
            });
        }
        text.push_str(path.rsplit('/').next().unwrap_or(path));
        text.push('\n');
    }
    text
}

/// The ancestor of `path` at `level` below the root (the path itself at its own depth).
fn ancestor_at<'a>(root: &str, path: &'a str, level: usize) -> &'a str {
    let skip = if root == "/" { 0 } else { root.len() };
    let rest = &path[skip..];
    let end = rest
        .match_indices('/')
        .nth(level)
        .map_or(rest.len(), |(i, _)| i);
    &path[..skip + end]
}

/// `zk find [--depth N] PATTERN PATH`: the paths the regular expression matches.
pub async fn find(ctx: &Ctx, pattern: &str, path: &str, depth: Option<usize>) -> Done {
    let re = Regex::new(pattern).map_err(|e| Failure::usage(format!("find: {e}")))?;
    let tree = read(ctx, path, depth).await?;
    let found: Vec<&str> = tree
        .nodes
        .iter()
        .map(|n| n.path.as_str())
        .filter(|p| re.is_match(p))
        .collect();
    if ctx.json {
        output::json(&json!({"path": path, "pattern": pattern, "matches": found}))?;
    } else {
        let text: String = found.iter().map(|p| format!("{p}\n")).collect();
        output::raw(text.as_bytes())?;
    }
    Ok(if found.is_empty() {
        exit::FAILED
    } else {
        exit::OK
    })
}

/// `zk grep [--depth N] PATTERN PATH`: each line of data the regular expression matches, as
/// `PATH: LINE` (data that is not text is matched as bytes and shown lossily).
pub async fn grep(ctx: &Ctx, pattern: &str, path: &str, depth: Option<usize>) -> Done {
    let re = BytesRegex::new(pattern).map_err(|e| Failure::usage(format!("grep: {e}")))?;
    let tree = read(ctx, path, depth).await?;
    let mut hits: Vec<(&str, String)> = Vec::new();
    for node in &tree.nodes {
        for line in node.data.split(|b| *b == b'\n') {
            if re.is_match(line) {
                hits.push((&node.path, String::from_utf8_lossy(line).into_owned()));
            }
        }
    }
    if ctx.json {
        let list: Vec<Value> = hits
            .iter()
            .map(|(p, l)| json!({"path": p, "line": l}))
            .collect();
        output::json(&json!({"path": path, "pattern": pattern, "matches": list}))?;
    } else {
        let text: String = hits.iter().map(|(p, l)| format!("{p}: {l}\n")).collect();
        output::raw(text.as_bytes())?;
    }
    Ok(if hits.is_empty() {
        exit::FAILED
    } else {
        exit::OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Kind, Node};

    fn tree(paths: &[(&str, usize)]) -> Tree {
        let mut t = Tree {
            root: "/r".into(),
            nodes: paths
                .iter()
                .map(|(p, len)| Node {
                    path: p.to_string(),
                    data: vec![b'x'; *len],
                    acl: vec![],
                    kind: Kind::Persistent,
                    stat: None,
                })
                .collect(),
        };
        t.sort();
        t
    }

    #[test]
    fn usage_sums_subtrees() {
        let t = tree(&[
            ("/r", 1),
            ("/r/a", 10),
            ("/r/a/x", 100),
            ("/r/a/x/y", 1000),
            ("/r/b", 5),
        ]);
        let rows = usage(&t, 1);
        let got: Vec<(&str, u64, u64)> = rows
            .iter()
            .map(|u| (u.path.as_str(), u.bytes, u.znodes))
            .collect();
        assert_eq!(got, [("/r", 1116, 5), ("/r/a", 1110, 3), ("/r/b", 5, 1)]);
        assert_eq!(usage(&t, 0).len(), 1);
    }

    #[test]
    fn draws_the_tree() {
        let t = tree(&[
            ("/r", 0),
            ("/r/a", 0),
            ("/r/a/x", 0),
            ("/r/a/y", 0),
            ("/r/b", 0),
        ]);
        assert_eq!(draw(&t), "/r\n├── a\n│   ├── x\n│   └── y\n└── b\n");
    }
}
