//! What the recipes are built on, apart from the recipes themselves: the protected create
//! and the owner of its cleanup, the line of sequential nodes and its walker, what session
//! states mean (liveness) and the session an operation belongs to, fenced writes, the retry
//! pause, the node of an acquire in progress and the options of a holder's node. New recipes
//! build on these too.

pub(crate) mod cleanup;
pub(crate) mod fence;
pub(crate) mod hold_options;
pub(crate) mod line;
pub mod liveness;
pub(crate) mod pending;
pub mod protected;
pub(crate) mod retry;
pub(crate) mod runtime;
pub(crate) mod session_scope;
pub(crate) mod watches;
