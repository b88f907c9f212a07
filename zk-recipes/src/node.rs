//! Service building blocks: [`PersistentNode`] (Curator's PersistentNode: a node kept
//! present across connection loss and session expiry) and [`GroupMember`] (Curator's
//! GroupMember: each member an ephemeral node under a group path, the membership as a cache view).

mod group_member;
mod persistent_node;

pub use self::{
    group_member::{GroupMember, Members},
    persistent_node::{NodeStatus, PersistentNode, PersistentNodeBuilder},
};
