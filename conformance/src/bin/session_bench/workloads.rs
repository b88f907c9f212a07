//! The workloads (getData, create+delete at a window), the clients measured and a measurement.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// getData of the 100-byte znode.
    Get,
    /// create + delete of a node; one op is the pair.
    CreateDelete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Workload {
    pub(crate) kind: Kind,
    pub(crate) window: usize,
}

impl Workload {
    /// The spec the Java and Python programs take.
    pub(crate) fn spec(self) -> String {
        match self.kind {
            Kind::Get => format!("get:{}", self.window),
            Kind::CreateDelete => format!("cd:{}", self.window),
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self.kind {
            Kind::Get => "getData 100 B",
            Kind::CreateDelete => "create+delete pair",
        }
    }
}

pub(crate) const WORKLOADS: [Workload; 4] = [
    Workload {
        kind: Kind::Get,
        window: 1,
    },
    Workload {
        kind: Kind::Get,
        window: 64,
    },
    Workload {
        kind: Kind::Get,
        window: 512,
    },
    Workload {
        kind: Kind::CreateDelete,
        window: 64,
    },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Peer {
    Raw,
    Ours,
    Java,
    Kazoo,
}

impl Peer {
    pub(crate) const ALL: [Peer; 4] = [Peer::Raw, Peer::Ours, Peer::Java, Peer::Kazoo];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Peer::Raw => "raw",
            Peer::Ours => "ours",
            Peer::Java => "java",
            Peer::Kazoo => "kazoo",
        }
    }
}

/// One timed repetition.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measure {
    pub(crate) ops: u64,
    pub(crate) elapsed: Duration,
    /// Client process CPU time over the same interval.
    pub(crate) cpu: Duration,
    pub(crate) errors: u64,
}

impl Measure {
    pub(crate) fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64()
    }

    pub(crate) fn cpu_us_per_op(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.ops.max(1) as f64
    }
}

/// The best repetition, or why there is none.
pub(crate) type Outcome = Result<Measure, String>;

pub(crate) fn best(reps: &[Measure]) -> Outcome {
    reps.iter()
        .copied()
        .max_by(|a, b| a.ops_per_sec().total_cmp(&b.ops_per_sec()))
        .ok_or_else(|| "no repetition finished".to_owned())
}
