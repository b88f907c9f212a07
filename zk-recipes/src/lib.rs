//! zk-recipes
