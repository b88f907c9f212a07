//! mutex (being written)
