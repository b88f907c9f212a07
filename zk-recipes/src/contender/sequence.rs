//! Sequence suffixes: reading and writing what the server appends (`%010d` of a signed 32-bit
//! counter), and putting contenders in creation order across the counter's wrap (see the
//! [parent module](super)).

use std::cmp::Ordering;

use super::Contender;

/// Parses exactly what the server writes for a sequence: `%010d` of an i32. That is ten
/// digits for 0..=2147483647, `-` and nine zero-padded digits for -999999999..=-1, and `-`
/// and ten digits (the first not zero) below that.
///
/// ```
/// use zk_recipes::parse_sequence;
/// assert_eq!(parse_sequence("0000000042"), Some(42));
/// assert_eq!(parse_sequence("-000000001"), Some(-1));
/// assert_eq!(parse_sequence("-2147483648"), Some(i32::MIN));
/// assert_eq!(parse_sequence("9999999999"), None); // above i32::MAX
/// assert_eq!(parse_sequence("42"), None);
/// ```
pub fn parse_sequence(text: &str) -> Option<i32> {
    let b = text.as_bytes();
    let digits = match (b.len(), b.first()) {
        (10, Some(b'-')) => &b[1..],
        (10, _) => b,
        (11, Some(b'-')) if b[1] != b'0' => &b[1..],
        _ => return None,
    };
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let magnitude: i64 = digits
        .iter()
        .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
    let value = if b[0] == b'-' { -magnitude } else { magnitude };
    // "-000000000" is not something the server writes (zero has no sign).
    if value == 0 && b[0] == b'-' {
        return None;
    }
    i32::try_from(value).ok()
}

/// The suffix the server appends for `sequence`: `%010d`.
///
/// ```
/// use zk_recipes::format_sequence;
/// assert_eq!(format_sequence(7), "0000000007");
/// assert_eq!(format_sequence(-7), "-000000007");
/// assert_eq!(format_sequence(i32::MIN), "-2147483648");
/// ```
pub fn format_sequence(sequence: i32) -> String {
    format!("{sequence:010}")
}

/// Serial-number comparison of two sequences: `a` comes before `b` when `b` is less than
/// 2^31 steps after `a`, modulo 2^32.
pub(super) fn serial_cmp(a: i32, b: i32) -> Ordering {
    match b.wrapping_sub(a) {
        0 => Ordering::Equal,
        d if d > 0 => Ordering::Less,
        _ => Ordering::Greater,
    }
}

/// Sorts contenders into creation order. Sorting the sequences as unsigned numbers puts them
/// on the 2^32 circle; the widest gap between neighbours (going round) is where the oldest
/// follows the youngest, so the list is rotated to start after it. Unlike a sort with
/// [`serial_cmp`], this is well defined for any set.
pub(super) fn sort_by_creation(list: &mut [Contender]) {
    list.sort_by(|a, b| {
        (a.sequence as u32)
            .cmp(&(b.sequence as u32))
            .then_with(|| a.name.cmp(&b.name))
    });
    let n = list.len();
    if n < 2 {
        return;
    }
    let gap = |i: usize| {
        let here = list[i].sequence as u32;
        let next = list[(i + 1) % n].sequence as u32;
        next.wrapping_sub(here)
    };
    // The last element's gap wraps round to the first; it wins ties so that an unwrapped
    // list keeps its plain order.
    let mut widest = n - 1;
    for i in 0..n - 1 {
        if gap(i) > gap(widest) {
            widest = i;
        }
    }
    list.rotate_left((widest + 1) % n);
}
