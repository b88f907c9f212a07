//! The trees the benchmark loads: built once on the server by an admin client.

use tokio::task::JoinSet;
use zk_session::{Client, CreateOptions, Op};

/// Bytes of data in every znode.
pub(crate) const DATA_LEN: usize = 100;
/// Children per parent in the bushy trees.
const FANOUT: usize = 100;

/// One tree of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `n` znodes in all (the root included), 100 children per parent, filled level by level.
    Bushy(usize),
    /// A root with `n` children.
    Flat(usize),
}

impl Shape {
    /// The trees a run may pick; the default is all but the last.
    pub(crate) const ALL: [Shape; 5] = [
        Shape::Bushy(1_000),
        Shape::Bushy(10_000),
        Shape::Bushy(50_000),
        Shape::Flat(100_000),
        Shape::Bushy(1_000_000),
    ];

    /// The default trees: the million-znode tree only when asked for (it takes minutes).
    pub(crate) fn defaults() -> Vec<Shape> {
        Shape::ALL[..4].to_vec()
    }

    /// Znodes in the tree, the root included.
    pub(crate) fn len(self) -> usize {
        match self {
            Shape::Bushy(n) => n,
            Shape::Flat(n) => n + 1,
        }
    }

    /// Whether Curator 5.4 gets one cache per child of the root: a single CuratorCache
    /// has more than 65,535 reads in flight on this tree, past its Phaser's limit
    /// (CURATOR-690). Not the flat tree: its children are each a leaf.
    pub(crate) fn split_for_curator(self) -> bool {
        matches!(self, Shape::Bushy(n) if n > 65_535)
    }

    fn size(n: usize) -> String {
        if n % 1_000_000 == 0 {
            format!("{}m", n / 1_000_000)
        } else {
            format!("{}k", n / 1000)
        }
    }

    pub(crate) fn name(self) -> String {
        match self {
            Shape::Bushy(n) => format!("tree {}", Shape::size(n)),
            Shape::Flat(n) => format!("flat {}", Shape::size(n)),
        }
    }

    /// The name on the command line (`1k`, `flat100k`, `1m`).
    pub(crate) fn flag(self) -> String {
        match self {
            Shape::Bushy(n) => Shape::size(n),
            Shape::Flat(n) => format!("flat{}", Shape::size(n)),
        }
    }

    /// Every path of the tree under `root`, by level: parents come before their children.
    fn levels(self, root: &str) -> Vec<Vec<String>> {
        match self {
            Shape::Flat(n) => {
                // Short names: the listing of 100,000 must fit a 1 MiB reply frame.
                let kids = (0..n).map(|i| format!("{root}/{i}")).collect();
                vec![vec![root.to_owned()], kids]
            }
            Shape::Bushy(n) => {
                let mut paths = vec![root.to_owned()];
                let mut depth = vec![0usize];
                for i in 1..n {
                    let parent = (i - 1) / FANOUT;
                    paths.push(format!("{}/n{}", paths[parent], (i - 1) % FANOUT));
                    depth.push(depth[parent] + 1);
                }
                let mut levels = vec![Vec::new(); depth.iter().max().map_or(0, |d| d + 1)];
                for (p, d) in paths.into_iter().zip(depth) {
                    levels[d].push(p);
                }
                levels
            }
        }
    }
}

/// Creates the tree of `shape` at `root` (100 bytes of data each); returns its paths.
pub(crate) async fn build(admin: &Client, shape: Shape, root: &str) -> Vec<String> {
    let data = [b'x'; DATA_LEN];
    let mut all = Vec::new();
    for level in shape.levels(root) {
        let mut writes = JoinSet::new();
        for chunk in level.chunks(1000) {
            let ops: Vec<Op> = chunk
                .iter()
                .map(|p| Op::create(p.clone(), &data, CreateOptions::persistent()))
                .collect();
            let admin = admin.clone();
            writes.spawn(async move { admin.multi(ops).await.map(drop) });
        }
        while let Some(r) = writes.join_next().await {
            r.expect("create task")
                .unwrap_or_else(|e| panic!("building {}: {e}", shape.name()));
        }
        all.extend(level);
    }
    all
}
