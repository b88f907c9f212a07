//! The checks, a module per area.

/// `None`, or `Some` of the expression given.
macro_rules! opt {
    () => {
        None
    };
    ($x:expr) => {
        Some($x)
    };
}

/// A `&[Check]` for one area: `"id", "title", rule, function` per check, with an optional
/// `bug = "..."` naming a known server bug the check catches and `danger = "..."` saying
/// how it can harm a server that has that bug.
macro_rules! checks {
    ($area:expr, $prefix:literal; $( $id:literal, $title:literal, $rule:expr, $run:path $(, bug = $bug:expr)? $(, danger = $danger:expr)? ;)*) => {
        &[$(
            $crate::check::Check {
                id: concat!($prefix, ".", $id),
                area: $area,
                title: $title,
                rule: $rule,
                known_bug: opt!($($bug)?),
                danger: opt!($($danger)?),
                malformed: matches!($area, $crate::check::Area::Malformed),
                run: $run,
            },
        )*]
    };
}

pub mod acl;
pub mod four_letter;
pub mod handshake;
mod identity;
pub mod limits;
pub mod malformed;
pub mod malformed_records;
pub mod multi;
pub mod multi_errors;
pub mod nodes;
pub mod ops;
pub mod ops_errors;
pub mod ordering;
pub mod ordering_ops;
pub mod read_only;
pub mod reconfig;
pub mod sasl;
pub mod sessions;
pub mod watch_triggers;
pub mod watches;
pub mod x509;
