//! Queues sharing znodes with Curator: [`DistributedQueue`] (Curator's `DistributedQueue`,
//! `DistributedPriorityQueue` and `DistributedDelayQueue`, plain or lock-safe).

mod batch;
mod distributed_queue;
mod envelope;
mod order;
mod outcome;
mod taken;

pub use self::{
    distributed_queue::{DistributedQueue, DistributedQueueBuilder, QueueStatus},
    order::QueueOrder,
    taken::QueueItem,
};
