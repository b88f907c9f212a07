//! lock_guard (being written)
