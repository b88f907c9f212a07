//! protected (being written)
