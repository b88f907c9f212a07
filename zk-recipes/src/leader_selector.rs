//! leader_selector (being written)
