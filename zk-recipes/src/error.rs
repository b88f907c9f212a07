//! error (being written)
