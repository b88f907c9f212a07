//! Queues sharing znodes with Curator: [`DistributedQueue`] (Curator's `DistributedQueue`,
//! `DistributedPriorityQueue`, `DistributedDelayQueue` and `DistributedIdQueue`, plain or
//! lock-safe), and
//! [`SimpleDistributedQueue`] (ZooKeeper's own `qn-` recipe, Curator's `SimpleDistributedQueue`);
//! and queues sharing znodes with kazoo: [`KazooQueue`] (kazoo's `Queue`) and
//! [`KazooLockingQueue`] (kazoo's `LockingQueue`).

mod batch;
mod consumer;
mod distributed_queue;
mod envelope;
mod handle;
mod held_lock;
mod kazoo_locking_queue;
mod kazoo_names;
mod kazoo_queue;
mod lock_watch;
mod order;
mod outcome;
mod raw_item;
mod simple_queue;
mod taken;

pub use self::{
    distributed_queue::{DistributedQueue, DistributedQueueBuilder, QueueStatus},
    kazoo_locking_queue::{KazooLockedEntry, KazooLockingQueue, KazooLockingQueueBuilder},
    kazoo_queue::{KazooQueue, KazooQueueBuilder},
    order::QueueOrder,
    simple_queue::{SimpleDistributedQueue, SimpleDistributedQueueBuilder},
    taken::QueueItem,
};
