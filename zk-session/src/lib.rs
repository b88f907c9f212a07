//! zk-session
