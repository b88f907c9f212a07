//! contender (being written)
