//! `zk cp SRC DST`: a subtree from an ensemble or a backup file to an ensemble or a backup
//! file, with data, ACLs and kinds (container, TTL); ephemeral znodes are skipped and
//! counted. Writes go in multi transactions of many creates each.

use std::ffi::OsStr;

use regex::Regex;
use serde_json::json;
use zk_session::{Client, Error, ErrorCode, Op, Version};

use crate::{
    backup,
    cli::Global,
    exit, output,
    progress::Progress,
    session_failure,
    side::Side,
    tree::{join, relative, Kind, Node, Tree},
    Failure,
};

/// Creates per multi at most.
const OPS_PER_MULTI: usize = 1000;
/// Bytes of data per multi at most, well under the server's 1 MiB request limit.
const BYTES_PER_MULTI: usize = 512 << 10;

/// What to do with a znode that already exists on the destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Stop there, naming it.
    Stop,
    /// Replace its data and ACL.
    Overwrite,
}

/// `--kind REGEX=container|REGEX=ttl:MS`: the kind of the znodes whose path relative to
/// the source's root matches.
#[derive(Debug, Clone)]
pub struct KindRule {
    paths: Regex,
    kind: Kind,
}

impl KindRule {
    pub fn parse(text: &str) -> Result<KindRule, Failure> {
        let bad = |why: String| Failure::usage(format!("--kind {text:?}: {why}"));
        let (re, kind) = text
            .rsplit_once('=')
            .ok_or_else(|| bad("expected REGEX=container or REGEX=ttl:MS".into()))?;
        let kind = match kind.strip_prefix("ttl:") {
            Some(ms) => Kind::Ttl(
                ms.parse()
                    .map_err(|_| bad(format!("{ms:?} is not a TTL in ms")))?,
            ),
            None if kind == "container" => Kind::Container,
            None => return Err(bad(format!("{kind:?} is neither container nor ttl:MS"))),
        };
        let paths = Regex::new(re).map_err(|e| bad(e.to_string()))?;
        Ok(KindRule { paths, kind })
    }
}

/// How to copy.
#[derive(Debug, Clone)]
pub struct How {
    pub existing: Existing,
    pub kinds: Vec<KindRule>,
}

/// Gives the persistent znodes a `--kind` rule matches that rule's kind.
fn apply_kinds(tree: &mut Tree, rules: &[KindRule]) {
    let root = tree.root.clone();
    for node in &mut tree.nodes {
        if node.kind != Kind::Persistent {
            continue;
        }
        let rel = relative(&root, &node.path);
        if let Some(rule) = rules.iter().find(|r| r.paths.is_match(rel)) {
            node.kind = rule.kind;
        }
    }
}

/// What a copy did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    pub created: usize,
    pub overwritten: usize,
}

/// `zk cp [--overwrite] SRC DST`.
pub async fn cp(g: &Global, src: &OsStr, dst: &OsStr, how: How) -> Result<i32, Failure> {
    let existing = how.existing;
    let (src, dst) = (Side::parse(src)?, Side::parse(dst)?);
    if let Side::File(f) = &dst {
        if f.exists() && existing == Existing::Stop {
            return Err(Failure::new(
                exit::FAILED,
                format!("cp: {} exists (--overwrite replaces it)", f.display()),
            ));
        }
    }
    let from = src.connect(g).await?;
    let read = src.read(from.as_ref()).await;
    close(from).await;
    let mut tree = read?;
    apply_kinds(&mut tree, &how.kinds);
    let ephemeral = tree
        .nodes
        .iter()
        .filter(|n| n.kind == Kind::Ephemeral)
        .count();
    let copied = match &dst {
        Side::File(f) => Copied {
            created: backup::write(f, &tree)?,
            overwritten: 0,
        },
        Side::Here(path) | Side::Remote { path, .. } => {
            let to = dst.connect(g).await?;
            let written = match &to {
                Some(client) => write(client, &tree, path, existing).await,
                None => Err(Failure::usage(format!("cp: {dst}: not connected"))),
            };
            close(to).await;
            written?
        }
    };
    if g.json {
        output::json(&json!({
            "source": src.to_string(),
            "destination": dst.to_string(),
            "copied": copied.created + copied.overwritten,
            "overwritten": copied.overwritten,
            "ephemeralSkipped": ephemeral,
        }))?;
    } else {
        output::raw(
            format!(
                "copied {} znodes ({} overwritten) from {src} to {dst}; {ephemeral} ephemeral skipped\n",
                copied.created + copied.overwritten,
                copied.overwritten
            )
            .as_bytes(),
        )?;
    }
    Ok(exit::OK)
}

async fn close(client: Option<Client>) {
    if let Some(c) = client {
        let _ = c.close().await;
    }
}

/// Writes the tree's znodes (not its ephemerals) under `dest`, parents first; the parents of
/// `dest` are created if missing. Re-running after an interruption with
/// [`Existing::Overwrite`] ends with the same tree.
pub async fn write(
    c: &Client,
    tree: &Tree,
    dest: &str,
    existing: Existing,
) -> Result<Copied, Failure> {
    let plan: Vec<(String, &Node)> = tree
        .nodes
        .iter()
        .filter(|n| n.kind != Kind::Ephemeral)
        .map(|n| (join(dest, tree.relative(&n.path)), n))
        .filter(|(p, _)| p != "/")
        .collect();
    make_parents(c, dest).await?;
    let mut progress = Progress::new("cp", plan.len());
    let mut copied = Copied::default();
    let mut i = 0;
    while i < plan.len() {
        let end = batch_end(&plan, i);
        let failed_at = match c.multi(creates(&plan[i..end])).await {
            Ok(_) => None,
            Err(Error::Multi { index, code, .. }) => Some((index, code)),
            Err(e) => return Err(session_failure(&format!("cp: create {}", plan[i].0), &e)),
        };
        let Some((index, code)) = failed_at else {
            copied.created += end - i;
            progress.advance(end - i);
            i = end;
            continue;
        };
        let (path, node) = &plan[i + index];
        if code != ErrorCode::NodeExists {
            return Err(session_failure(
                &format!("cp: create {path}"),
                &Error::Code(code),
            ));
        }
        // The creates before the one that exists, then that one as asked.
        commit(c, &plan[i..i + index]).await?;
        copied.created += index;
        if existing == Existing::Stop {
            return Err(Failure::new(
                exit::FAILED,
                format!(
                    "cp: {path} exists (stopped there after {} znodes; --overwrite replaces \
                     existing znodes)",
                    copied.created
                ),
            ));
        }
        overwrite(c, path, node).await?;
        copied.overwritten += 1;
        progress.advance(index + 1);
        i += index + 1;
    }
    Ok(copied)
}

/// The end of the batch that starts at `start`: within the op and byte limits, at least one.
fn batch_end(plan: &[(String, &Node)], start: usize) -> usize {
    let mut bytes = 0;
    let mut end = start;
    for (path, node) in &plan[start..] {
        bytes += path.len() + node.data.len() + node.acl.len() * 64;
        if end > start && (end - start >= OPS_PER_MULTI || bytes > BYTES_PER_MULTI) {
            break;
        }
        end += 1;
    }
    end
}

fn creates(plan: &[(String, &Node)]) -> Vec<Op> {
    plan.iter()
        .map(|(path, n)| Op::create(path.clone(), &n.data, n.kind.create_options(n.acl.clone())))
        .collect()
}

/// Creates these znodes (none of which is expected to exist) in one multi.
async fn commit(c: &Client, plan: &[(String, &Node)]) -> Result<(), Failure> {
    match c.multi(creates(plan)).await {
        Ok(_) => Ok(()),
        Err(Error::Multi { index, code, .. }) => Err(session_failure(
            &format!("cp: create {}", plan[index].0),
            &Error::Code(code),
        )),
        Err(e) => Err(session_failure("cp: create", &e)),
    }
}

/// Gives an existing znode the data and ACL of `node` (its kind stays as it is).
async fn overwrite(c: &Client, path: &str, node: &Node) -> Result<(), Failure> {
    let fail = |e| session_failure(&format!("cp: overwrite {path}"), &e);
    c.set_data(path, &node.data, Version::Any)
        .await
        .map_err(fail)?;
    c.set_acl(path, &node.acl, Version::Any)
        .await
        .map_err(fail)?;
    Ok(())
}

/// Creates the missing ancestors of `dest` as empty persistent znodes.
async fn make_parents(c: &Client, dest: &str) -> Result<(), Failure> {
    let mut at = String::new();
    let parts: Vec<&str> = dest.split('/').filter(|s| !s.is_empty()).collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        at.push('/');
        at.push_str(part);
        match c
            .create(&at, b"", zk_session::CreateOptions::persistent())
            .await
        {
            Ok(_) | Err(Error::Code(ErrorCode::NodeExists)) => {}
            Err(e) => return Err(session_failure(&format!("cp: create {at}"), &e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_rules() {
        let mut tree = Tree {
            root: "/app".into(),
            nodes: ["/app", "/app/locks", "/app/locks/l1", "/app/cache"]
                .map(|p| Node {
                    path: p.into(),
                    data: vec![],
                    acl: vec![],
                    kind: Kind::Persistent,
                    stat: None,
                })
                .to_vec(),
        };
        let rules = [
            KindRule::parse("^/locks$=container").unwrap(),
            KindRule::parse("^/cache=ttl:60000").unwrap(),
        ];
        apply_kinds(&mut tree, &rules);
        let kinds: Vec<Kind> = tree.nodes.iter().map(|n| n.kind).collect();
        use Kind::*;
        assert_eq!(kinds, [Persistent, Container, Persistent, Ttl(60000)]);
        for bad in ["x", "a=box", "a=ttl:soon", "(=container"] {
            assert!(KindRule::parse(bad).is_err(), "{bad}");
        }
    }
}
