//! The workloads (getData, create+delete at a window), the clients measured and the best of
//! their repetitions.

pub(crate) use conformance::outcome::{best, Outcome};
pub(crate) use conformance::workload::{Kind, Workload};

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
    /// The raw loop on a tokio socket.
    Tokio,
    /// The smallest multiplexed client on tokio.
    Mux,
    /// The smallest multiplexed client whose callers write their own requests.
    Direct,
    Ours,
    /// Ours, its requests in flight polled by one task instead of a task each.
    OursOneTask,
    Java,
    Kazoo,
}

impl Peer {
    pub(crate) const ALL: [Peer; 8] = [
        Peer::Raw,
        Peer::Tokio,
        Peer::Mux,
        Peer::Direct,
        Peer::Ours,
        Peer::OursOneTask,
        Peer::Java,
        Peer::Kazoo,
    ];

    /// Measured in this process (the JVM and Python peers run in their own).
    pub(crate) fn in_process(self) -> bool {
        !matches!(self, Peer::Java | Peer::Kazoo)
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Peer::Raw => "raw",
            Peer::Tokio => "tokio",
            Peer::Mux => "mux",
            Peer::Direct => "direct",
            Peer::Ours => "ours",
            Peer::OursOneTask => "ours1",
            Peer::Java => "java",
            Peer::Kazoo => "kazoo",
        }
    }
}
