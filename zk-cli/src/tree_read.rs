//! Reading a subtree from an ensemble: data, Stat and children of many znodes per round trip
//! (multiRead), a level at a time; ACLs pipelined, since multiRead has no getACL.

use std::future::Future;

use tokio::task::JoinSet;
use zk_session::{Client, Error, ErrorCode, ReadOp, ReadResult};

use crate::{
    exit, session_failure,
    tree::{child, is_system, Kind, Node, Tree},
    Failure,
};

/// Znodes per multiRead (two reads each): replies stay well under a frame even with
/// kilobytes of data per znode.
const NODES_PER_READ: usize = 200;
/// multiReads in flight at once.
const READS_IN_FLIGHT: usize = 8;
/// getACLs in flight at once.
const ACLS_IN_FLIGHT: usize = 1000;

/// What to read.
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    /// The ACL of each znode too (one more request each).
    pub acls: bool,
    /// Levels below the root to read at most.
    pub depth: Option<usize>,
}

/// The subtree at `root`, sorted depth first. `/zookeeper` is left out unless `root` is in
/// it; znodes deleted while the walk runs are left out; a missing root or a znode we may not
/// read is a failure naming it.
pub async fn read(client: &Client, root: &str, scope: Scope) -> Result<Tree, Failure> {
    let mut nodes = Vec::new();
    let mut level = vec![root.to_owned()];
    let mut depth = 0;
    let skip_system = !is_system(root);
    while !level.is_empty() {
        let batches: Vec<Vec<String>> = level.chunks(NODES_PER_READ).map(<[_]>::to_vec).collect();
        let read = in_flight(batches, READS_IN_FLIGHT, |batch| {
            let c = client.clone();
            async move { read_batch(&c, batch).await }
        })
        .await?;
        let descend = scope.depth.is_none_or(|d| depth < d);
        let mut next = Vec::new();
        for found in read {
            for (path, got) in found? {
                let Some((node, children)) = got else {
                    if path == root {
                        let e = Error::Code(ErrorCode::NoNode);
                        return Err(session_failure(&format!("read {root}"), &e));
                    }
                    continue;
                };
                if descend {
                    let paths = children.iter().map(|name| child(&path, name));
                    next.extend(paths.filter(|p| !(skip_system && is_system(p))));
                }
                nodes.push(node);
            }
        }
        level = next;
        depth += 1;
    }
    if scope.acls {
        nodes = with_acls(client, nodes).await?;
    }
    let mut tree = Tree {
        root: root.to_owned(),
        nodes,
    };
    tree.sort();
    Ok(tree)
}

type Found = Vec<(String, Option<(Node, Vec<String>)>)>;

/// Data, Stat and children of each path in one multiRead; `None` for a znode gone.
async fn read_batch(c: &Client, paths: Vec<String>) -> Result<Found, Failure> {
    let ops = paths
        .iter()
        .flat_map(|p| [ReadOp::GetData(p.clone()), ReadOp::GetChildren(p.clone())]);
    let first = paths.first().cloned().unwrap_or_default();
    let results = c
        .multi_read(ops)
        .await
        .map_err(|e| session_failure(&format!("read {first}"), &e))?;
    let mut found = Vec::with_capacity(paths.len());
    for (path, pair) in paths.into_iter().zip(results.chunks(2)) {
        let got = match pair {
            [ReadResult::Data(Ok((data, stat))), ReadResult::Children(Ok(children))] => {
                let node = Node {
                    path: path.clone(),
                    data: data.to_vec(),
                    acl: Vec::new(),
                    kind: Kind::from_owner(stat.ephemeral_owner),
                    stat: Some(*stat),
                };
                Some((node, children.clone()))
            }
            [ReadResult::Data(Err(ErrorCode::NoNode)), _]
            | [_, ReadResult::Children(Err(ErrorCode::NoNode))] => None,
            [ReadResult::Data(Err(code)), _] | [_, ReadResult::Children(Err(code))] => {
                return Err(session_failure(
                    &format!("read {path}"),
                    &Error::Code(*code),
                ))
            }
            _ => {
                return Err(Failure::new(
                    exit::FAILED,
                    format!("read {path}: the server's multiRead reply does not match"),
                ))
            }
        };
        found.push((path, got));
    }
    Ok(found)
}

/// The nodes with their ACLs; those deleted meanwhile are left out.
async fn with_acls(client: &Client, nodes: Vec<Node>) -> Result<Vec<Node>, Failure> {
    let read = in_flight(nodes, ACLS_IN_FLIGHT, |mut node| {
        let c = client.clone();
        async move {
            match c.get_acl(&node.path).await {
                Ok((acl, _)) => {
                    node.acl = acl;
                    Ok(Some(node))
                }
                Err(Error::Code(ErrorCode::NoNode)) => Ok(None),
                Err(e) => Err(session_failure(&format!("getAcl {}", node.path), &e)),
            }
        }
    })
    .await?;
    let mut out = Vec::with_capacity(read.len());
    for node in read {
        out.extend(node?);
    }
    Ok(out)
}

/// Runs `f` on every item with at most `window` running at once (requests pipelined on one
/// session); the results in the items' order. Dropping the future aborts what runs.
pub async fn in_flight<I, T, F, Fut>(items: Vec<I>, window: usize, f: F) -> Result<Vec<T>, Failure>
where
    F: Fn(I) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let mut out: Vec<Option<T>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    let mut running = JoinSet::new();
    let lost =
        |e: tokio::task::JoinError| Failure::new(exit::FAILED, format!("a read failed: {e}"));
    for (i, item) in items.into_iter().enumerate() {
        if running.len() >= window {
            if let Some(done) = running.join_next().await {
                let (j, v) = done.map_err(lost)?;
                out[j] = Some(v);
            }
        }
        let fut = f(item);
        running.spawn(async move { (i, fut.await) });
    }
    while let Some(done) = running.join_next().await {
        let (j, v) = done.map_err(lost)?;
        out[j] = Some(v);
    }
    Ok(out.into_iter().flatten().collect())
}
