//! `zk diff A B`: two subtrees compared znode by znode (by path relative to each root): the
//! znodes only in A, only in B, and those whose data, ACL or kind differ. Ephemeral znodes
//! are left out (a copy cannot carry them) and counted.

use std::{collections::BTreeMap, ffi::OsStr};

use serde_json::json;
use zk_session::Acl;

use crate::{
    cli::Global,
    exit, output,
    side::Side,
    tree::{Kind, Node, Tree},
    Failure,
};

/// What differs, each list by relative path ("/" the root), sorted.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Differences {
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    pub data: Vec<String>,
    pub acl: Vec<String>,
    pub kind: Vec<String>,
    pub ephemeral_ignored: usize,
}

impl Differences {
    pub fn equal(&self) -> bool {
        self.only_in_a.is_empty()
            && self.only_in_b.is_empty()
            && self.data.is_empty()
            && self.acl.is_empty()
            && self.kind.is_empty()
    }
}

/// Compares two trees.
pub fn compare(a: &Tree, b: &Tree) -> Differences {
    let mut d = Differences::default();
    let index = |t: &Tree, d: &mut Differences| -> BTreeMap<String, Node> {
        let mut m = BTreeMap::new();
        for n in &t.nodes {
            if n.kind == Kind::Ephemeral {
                d.ephemeral_ignored += 1;
            } else {
                m.insert(t.relative(&n.path).to_owned(), n.clone());
            }
        }
        m
    };
    let (a, b) = (index(a, &mut d), index(b, &mut d));
    for (rel, na) in &a {
        let Some(nb) = b.get(rel) else {
            d.only_in_a.push(rel.clone());
            continue;
        };
        if na.data != nb.data {
            d.data.push(rel.clone());
        }
        if sorted(&na.acl) != sorted(&nb.acl) {
            d.acl.push(rel.clone());
        }
        if na.kind != nb.kind {
            d.kind.push(rel.clone());
        }
    }
    d.only_in_b = b.keys().filter(|k| !a.contains_key(*k)).cloned().collect();
    d
}

/// An ACL as a set: the server keeps the order given, which says nothing.
fn sorted(acl: &[Acl]) -> Vec<(String, String, i32)> {
    let mut v: Vec<_> = acl
        .iter()
        .map(|a| (a.id.scheme.clone(), a.id.id.clone(), a.perms.0))
        .collect();
    v.sort();
    v
}

/// `zk diff A B`: exit 0 when equal, 1 when not; trouble (a side unreadable) exits 2 or
/// more, as diff(1) does.
pub async fn diff(g: &Global, a: &OsStr, b: &OsStr) -> Result<i32, Failure> {
    let trouble = |f: Failure| match f.code {
        exit::FAILED => Failure::new(exit::USAGE, f.message),
        _ => f,
    };
    let (a, b) = (Side::parse(a)?, Side::parse(b)?);
    let mut trees = Vec::new();
    for side in [&a, &b] {
        let client = side.connect(g).await.map_err(trouble)?;
        let read = side.read(client.as_ref()).await;
        if let Some(c) = client {
            let _ = c.close().await;
        }
        trees.push(read.map_err(trouble)?);
    }
    let d = compare(&trees[0], &trees[1]);
    if g.json {
        output::json(&json!({
            "a": a.to_string(),
            "b": b.to_string(),
            "equal": d.equal(),
            "onlyInA": d.only_in_a,
            "onlyInB": d.only_in_b,
            "dataDiffers": d.data,
            "aclDiffers": d.acl,
            "kindDiffers": d.kind,
            "ephemeralIgnored": d.ephemeral_ignored,
        }))?;
    } else {
        let mut text = String::new();
        for (label, list) in [
            ("only in A", &d.only_in_a),
            ("only in B", &d.only_in_b),
            ("data differs", &d.data),
            ("ACL differs", &d.acl),
            ("kind differs", &d.kind),
        ] {
            for rel in list {
                text.push_str(&format!("{label}: {rel}\n"));
            }
        }
        if d.equal() {
            text.push_str(&format!("equal: {a} and {b}\n"));
        }
        output::raw(text.as_bytes())?;
    }
    Ok(if d.equal() { exit::OK } else { exit::FAILED })
}

#[cfg(test)]
mod tests {
    use super::*;
    use zk_session::{Id, Perms};

    fn tree(root: &str, nodes: &[(&str, &[u8], Kind)]) -> Tree {
        Tree {
            root: root.into(),
            nodes: nodes
                .iter()
                .map(|(p, d, k)| Node {
                    path: format!("{root}{p}"),
                    data: d.to_vec(),
                    acl: Acl::open_unsafe(),
                    kind: *k,
                    stat: None,
                })
                .collect(),
        }
    }

    #[test]
    fn finds_each_kind_of_difference() {
        use Kind::*;
        let a = tree(
            "/a",
            &[
                ("", b"", Persistent),
                ("/x", b"1", Persistent),
                ("/e", b"", Ephemeral),
                ("/k", b"", Container),
                ("/y", b"", Persistent),
            ],
        );
        let mut b = tree(
            "/b",
            &[
                ("", b"", Persistent),
                ("/x", b"2", Persistent),
                ("/k", b"", Persistent),
                ("/z", b"", Persistent),
                ("/y", b"", Persistent),
            ],
        );
        b.nodes[4].acl = vec![Acl::new(Perms::READ, Id::anyone())];
        let d = compare(&a, &b);
        assert_eq!(d.only_in_a, Vec::<String>::new());
        assert_eq!(d.only_in_b, ["/z"]);
        assert_eq!(d.data, ["/x"]);
        assert_eq!(d.kind, ["/k"]);
        assert_eq!(d.acl, ["/y"]);
        assert_eq!(d.ephemeral_ignored, 1);
        assert!(!d.equal());
        assert!(compare(&a, &a).equal());
    }
}
