//! Backup files: a subtree written by `zk cp ... FILE` and read back by `zk cp FILE ...` or
//! `zk diff`. The format is documented in zk-cli/BACKUP_FORMAT.md: JSON lines, a header
//! with the format's name, its version, the root and the number of znodes, then one line per
//! znode. zk-shell's JSON backups (`cp zk://... json://...`) are read too.

use std::{
    io::{BufWriter, Write},
    path::Path,
};

use base64::Engine;
use serde_json::{json, Map, Value};
use zk_session::{Acl, Id, Perms};

use crate::{
    acl, exit, output,
    tree::{Kind, Node, Tree},
    Failure,
};

/// The header's `format`.
pub const FORMAT: &str = "zk-backup";
/// The newest version this zk writes and reads.
pub const VERSION: u64 = 1;

fn failure(file: &Path, why: impl std::fmt::Display) -> Failure {
    Failure::new(exit::FAILED, format!("backup {}: {why}", file.display()))
}

/// Writes the tree's znodes (ephemeral ones left out) to `file`, through a temporary file
/// renamed at the end: an interrupted backup leaves no half-written file. The znodes written.
pub fn write(file: &Path, tree: &Tree) -> Result<usize, Failure> {
    let nodes: Vec<&Node> = tree
        .nodes
        .iter()
        .filter(|n| n.kind != Kind::Ephemeral)
        .collect();
    let partial = file.with_extension(format!("partial-{}", std::process::id()));
    let header =
        json!({"format": FORMAT, "version": VERSION, "root": tree.root, "nodes": nodes.len()});
    let written = (|| {
        let mut out = BufWriter::new(std::fs::File::create(&partial)?);
        writeln!(out, "{header}")?;
        for node in &nodes {
            writeln!(out, "{}", record(node))?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&partial, file)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        failure(file, e)
    })?;
    Ok(nodes.len())
}

/// One znode's line.
fn record(node: &Node) -> Value {
    let mut doc = Map::new();
    doc.insert("path".into(), Value::String(node.path.clone()));
    output::data_fields(&node.data, &mut doc);
    doc.insert("acl".into(), node.acl.iter().map(acl::json).collect());
    doc.insert("kind".into(), node.kind.name().into());
    if let Kind::Ttl(ms) = node.kind {
        doc.insert("ttlMs".into(), ms.into());
    }
    Value::Object(doc)
}

/// Reads a whole backup, ours or zk-shell's, checking it fully before anything is written.
pub fn read(file: &Path) -> Result<Tree, Failure> {
    let bytes = std::fs::read(file).map_err(|e| failure(file, e))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| failure(file, "not UTF-8 text"))?;
    let first = text.lines().next().unwrap_or_default();
    match serde_json::from_str::<Value>(first) {
        Ok(Value::Object(header)) if header.contains_key("format") => {
            read_ours(text, &header).map_err(|why| failure(file, why))
        }
        _ => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => read_zk_shell(&map).map_err(|why| failure(file, why)),
            _ => Err(failure(
                file,
                "neither a zk backup (a zk-backup header line) nor a zk-shell JSON backup",
            )),
        },
    }
}

fn read_ours(text: &str, header: &Map<String, Value>) -> Result<Tree, String> {
    if header.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(format!("format {} is not {FORMAT:?}", header["format"]));
    }
    let version = header.get("version").and_then(Value::as_u64).unwrap_or(0);
    if version > VERSION {
        return Err(format!(
            "format version {version} is newer than this zk reads ({VERSION}); use a newer zk"
        ));
    }
    if version == 0 {
        return Err("the header has no valid version".into());
    }
    let (Some(root), Some(count)) = (
        header.get("root").and_then(Value::as_str),
        header.get("nodes").and_then(Value::as_u64),
    ) else {
        return Err("the header lacks root or nodes".into());
    };
    let mut nodes = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let node = serde_json::from_str::<Value>(line)
            .map_err(|e| e.to_string())
            .and_then(|v| node(&v))
            .map_err(|why| format!("line {}: {why} (truncated or corrupt)", i + 1))?;
        nodes.push(node);
    }
    if nodes.len() as u64 != count || !text.ends_with('\n') {
        return Err(format!(
            "truncated: the header promises {count} znodes, the file holds {}{}",
            nodes.len(),
            if text.ends_with('\n') {
                ""
            } else {
                " and its last line is cut"
            }
        ));
    }
    let mut tree = Tree {
        root: root.to_owned(),
        nodes,
    };
    under_root(&tree)?;
    tree.sort();
    Ok(tree)
}

/// One record of our format.
fn node(v: &Value) -> Result<Node, String> {
    let text = |k: &str| v.get(k).and_then(Value::as_str);
    let path = text("path").ok_or("no path")?.to_owned();
    let data = match (text("data"), text("encoding")) {
        (Some(d), Some("utf8")) => d.as_bytes().to_vec(),
        (Some(d), Some("base64")) => base64::engine::general_purpose::STANDARD
            .decode(d)
            .map_err(|e| format!("{path}: data: {e}"))?,
        _ => return Err(format!("{path}: no data and encoding")),
    };
    let mut acl = Vec::new();
    for entry in v.get("acl").and_then(Value::as_array).ok_or("no acl")? {
        let part = |k: &str| entry.get(k).and_then(Value::as_str);
        let (Some(scheme), Some(id), Some(perms)) = (part("scheme"), part("id"), part("perms"))
        else {
            return Err(format!("{path}: an ACL entry lacks scheme, id or perms"));
        };
        let perms =
            acl::perms_from_letters(perms).ok_or_else(|| format!("{path}: perms {perms:?}"))?;
        acl.push(Acl::new(perms, Id::new(scheme, id)));
    }
    let kind = match text("kind") {
        Some("persistent") => Kind::Persistent,
        Some("container") => Kind::Container,
        Some("ttl") => Kind::Ttl(
            v.get("ttlMs")
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("{path}: ttl without ttlMs"))?,
        ),
        other => return Err(format!("{path}: kind {other:?}")),
    };
    Ok(Node {
        path,
        data,
        acl,
        kind,
        stat: None,
    })
}

/// zk-shell's JSON: one object, each key a znode's path, each value
/// `{"content": base64 or null, "acls": [{"perms": N, "id": {"scheme", "id"}}]}`. It keeps
/// no kinds: every znode is persistent. The root is the key every other key is under.
fn read_zk_shell(map: &Map<String, Value>) -> Result<Tree, String> {
    let mut nodes = Vec::new();
    for (path, v) in map {
        let data = match v.get("content") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(b64)) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|e| format!("{path}: content: {e}"))?,
            Some(_) => return Err(format!("{path}: content is not a string")),
        };
        let mut acl = Vec::new();
        for entry in v
            .get("acls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let perms = entry.get("perms").and_then(Value::as_i64).unwrap_or(31) as i32;
            let id = entry.get("id");
            let part = |k: &str, d: &'static str| {
                id.and_then(|i| i.get(k))
                    .and_then(Value::as_str)
                    .unwrap_or(d)
            };
            acl.push(Acl::new(
                Perms(perms),
                Id::new(part("scheme", "world"), part("id", "anyone")),
            ));
        }
        if acl.is_empty() {
            acl = Acl::open_unsafe();
        }
        nodes.push(Node {
            path: path.clone(),
            data,
            acl,
            kind: Kind::Persistent,
            stat: None,
        });
    }
    let root = nodes
        .iter()
        .map(|n| n.path.clone())
        .min_by_key(|p| (p.matches('/').count(), p.len()))
        .ok_or("an empty zk-shell backup")?;
    let mut tree = Tree { root, nodes };
    under_root(&tree)?;
    tree.sort();
    Ok(tree)
}

/// Every znode is the root or below it.
fn under_root(tree: &Tree) -> Result<(), String> {
    let prefix = format!("{}/", tree.root.trim_end_matches('/'));
    match tree
        .nodes
        .iter()
        .find(|n| n.path != tree.root && !n.path.starts_with(&prefix))
    {
        Some(n) => Err(format!("{} is not under the root {}", n.path, tree.root)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Tree {
        let node = |path: &str, data: &[u8], kind| Node {
            path: path.into(),
            data: data.to_vec(),
            acl: vec![Acl::new(Perms::READ, Id::new("digest", "u:h="))],
            kind,
            stat: None,
        };
        Tree {
            root: "/app".into(),
            nodes: vec![
                node("/app", b"", Kind::Persistent),
                node("/app/bin", b"\x00\xff", Kind::Container),
                node("/app/t", b"text", Kind::Ttl(9000)),
                node("/app/e", b"", Kind::Ephemeral),
            ],
        }
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("zk-backup-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("b.zkb")
    }

    #[test]
    fn round_trips_without_ephemerals() {
        let file = scratch("round");
        assert_eq!(write(&file, &sample()).unwrap(), 3);
        let back = read(&file).unwrap();
        let mut want = sample();
        want.nodes.retain(|n| n.kind != Kind::Ephemeral);
        want.sort();
        assert_eq!(back.root, "/app");
        assert_eq!(back.nodes, want.nodes);
    }

    #[test]
    fn truncated_or_newer_files_are_refused() {
        let file = scratch("bad");
        write(&file, &sample()).unwrap();
        let full = std::fs::read_to_string(&file).unwrap();
        let cut = &full[..full.len() - 10];
        std::fs::write(&file, cut).unwrap();
        let e = read(&file).unwrap_err().message;
        assert!(e.contains("truncated"), "{e}");
        let lines: Vec<&str> = full.lines().collect();
        std::fs::write(&file, lines[..3].join("\n") + "\n").unwrap();
        let e = read(&file).unwrap_err().message;
        assert!(e.contains("promises 3 znodes, the file holds 2"), "{e}");
        let newer = full.replacen("\"version\":1", "\"version\":2", 1);
        std::fs::write(&file, newer).unwrap();
        let e = read(&file).unwrap_err().message;
        assert!(e.contains("version 2 is newer"), "{e}");
    }

    #[test]
    fn reads_zk_shell_json() {
        let file = scratch("zkshell");
        let doc = r#"{
            "/a": {"content": "aGk=", "acls": [{"perms": 1, "id": {"scheme": "world", "id": "anyone"}}]},
            "/a/b": {"content": null, "acls": []}
        }"#;
        std::fs::write(&file, doc).unwrap();
        let t = read(&file).unwrap();
        assert_eq!(t.root, "/a");
        assert_eq!(t.nodes[0].data, b"hi");
        assert_eq!(t.nodes[0].acl, vec![Acl::new(Perms::READ, Id::anyone())]);
        assert_eq!(t.nodes[1].path, "/a/b");
        assert_eq!(t.nodes[1].acl, Acl::open_unsafe());
    }
}
