//! Queues sharing znodes with Curator: [`DistributedQueue`] (Curator's `DistributedQueue`,
//! `DistributedPriorityQueue`, `DistributedDelayQueue` and `DistributedIdQueue`, plain or
//! lock-safe), and
//! [`SimpleDistributedQueue`] (ZooKeeper's own `qn-` recipe, Curator's `SimpleDistributedQueue`).

mod batch;
mod consumer;
mod distributed_queue;
mod envelope;
mod handle;
mod order;
mod outcome;
mod simple_queue;
mod taken;

pub use self::{
    distributed_queue::{DistributedQueue, DistributedQueueBuilder, QueueStatus},
    order::QueueOrder,
    simple_queue::{SimpleDistributedQueue, SimpleDistributedQueueBuilder},
    taken::QueueItem,
};
