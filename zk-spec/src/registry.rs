//! Every check, grouped by area, and lookups by area and id.

use crate::{
    check::{Area, Check},
    checks,
};

/// Every area's checks, in report order.
const AREAS: &[&[Check]] = &[
    checks::handshake::CHECKS,
    checks::ops::CHECKS,
    checks::ops_errors::CHECKS,
    checks::ordering::CHECKS,
    checks::ordering_ops::CHECKS,
    checks::watches::CHECKS,
    checks::watch_triggers::CHECKS,
    checks::nodes::CHECKS,
    checks::multi::CHECKS,
    checks::multi_errors::CHECKS,
    checks::acl::CHECKS,
    checks::limits::CHECKS,
    checks::malformed::CHECKS,
    checks::malformed_records::CHECKS,
    checks::four_letter::CHECKS,
    // Areas that need a server set up for them (see `Setup`).
    checks::sessions::CHECKS,
    checks::read_only::CHECKS,
    checks::reconfig::CHECKS,
    checks::x509::CHECKS,
    checks::sasl::CHECKS,
];

/// Every check, area by area.
pub fn all() -> Vec<&'static Check> {
    AREAS.iter().flat_map(|a| a.iter()).collect()
}

/// The checks of `area`.
pub fn in_area(area: Area) -> Vec<&'static Check> {
    all().into_iter().filter(|c| c.area == area).collect()
}

/// The check with id `id`.
pub fn by_id(id: &str) -> Option<&'static Check> {
    all().into_iter().find(|c| c.id == id)
}

/// The checks a command line selects: all, one area's, or those whose id is `id` or starts
/// with `id.` (a group such as `ops.create`).
pub fn select(area: Option<Area>, id: Option<&str>) -> Vec<&'static Check> {
    all()
        .into_iter()
        .filter(|c| area.is_none_or(|a| c.area == a))
        .filter(|c| {
            id.is_none_or(|id| {
                c.id == id
                    || c.id
                        .strip_prefix(id)
                        .is_some_and(|rest| rest.starts_with('.'))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn ids_are_unique_and_name_their_area() {
        let mut seen = HashSet::new();
        for c in all() {
            assert!(seen.insert(c.id), "duplicate id {}", c.id);
            assert!(c.id.starts_with(&format!("{}.", c.area.name())), "{}", c.id);
            assert!(!c.rule.is_empty() && !c.title.is_empty(), "{}", c.id);
            assert_eq!(c.malformed, c.area == Area::Malformed, "{}", c.id);
        }
        assert!(seen.len() >= 300, "{} checks", seen.len());
    }

    #[test]
    fn selection_by_area_group_and_id() {
        assert!(select(Some(Area::Watches), None)
            .iter()
            .all(|c| c.area == Area::Watches));
        let group = select(None, Some("ops.create"));
        assert!(group.iter().any(|c| c.id == "ops.create.node-exists"));
        assert!(group.iter().all(|c| c.id.starts_with("ops.create")));
        assert!(!group.iter().any(|c| c.id == "ops.create2"));
        assert_eq!(select(None, Some("handshake.ping")).len(), 1);
        assert!(select(Some(Area::Ops), Some("handshake.ping")).is_empty());
        assert_eq!(
            by_id("malformed.huge-length").map(|c| c.malformed),
            Some(true)
        );
    }
}
