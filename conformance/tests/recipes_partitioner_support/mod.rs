//! What the partitioner tests share: kazoo's partition function written out again, as the
//! expected slices.

/// kazoo's default partition function: the sorted items, the sorted ids, `items[i::n]` for
/// `me` at index `i` of `n` ids.
pub fn kazoo_slice(items: &[String], ids: &[&str], me: &str) -> Vec<String> {
    let mut ids = ids.to_vec();
    ids.sort();
    let i = ids.iter().position(|x| *x == me).unwrap();
    let mut items = items.to_vec();
    items.sort();
    items.into_iter().skip(i).step_by(ids.len()).collect()
}
