//! Running the areas that need a server set up for them, and asserting they all passed.

use zk_spec::{report, Area, Outcome, Report, Runner};

/// Runs `areas` with `runner`, prints every line, and fails unless every check passed (or
/// failed as the known server bug it names) but those of `skipped`, which must skip (the
/// setup is there for all others).
pub fn all_pass(runner: &Runner, areas: &[Area], skipped: &[&str]) -> Report {
    let checks: Vec<_> = areas
        .iter()
        .flat_map(|a| zk_spec::registry::in_area(*a))
        .collect();
    let report = runner.run(&checks, |_| {}).unwrap();
    for r in &report.results {
        println!("{}", report::check_line(r, true));
    }
    println!("{}", report::summary(&report));
    let not_passed: Vec<_> = report
        .results
        .iter()
        .filter(|r| match r.outcome {
            Outcome::Skipped(_) => !skipped.contains(&r.check.id),
            Outcome::Failed(ref f) => f.known_bug.is_none() || skipped.contains(&r.check.id),
            Outcome::Passed => skipped.contains(&r.check.id),
        })
        .map(|r| (r.check.id, r.outcome.clone()))
        .collect();
    assert!(not_passed.is_empty(), "{not_passed:#?}");
    assert!(!report.results.is_empty());
    report
}
