//! leader_latch (being written)
