//! The trace counts a restatement (registry `restates`: the same rule in another document)
//! as covered by the vectors of what it restates, says so, and never hides a requirement
//! whose restated rules have no vector either.

mod common;
use common::catalog;

#[test]
fn a_restatement_is_covered_by_the_vectors_of_what_it_restates() {
    let cat = catalog();
    let rows = swp_conform::catalog::trace::rows(&cat);
    let row = |id: &str| {
        rows.iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("{id}"))
    };
    let std = row("STD-002");
    assert_eq!(std.via, ["CORE-003"]);
    let core = row("CORE-003");
    assert!(!core.vectors.is_empty());
    for v in &core.vectors {
        assert!(std.vectors.contains(v), "{v} tests CORE-003, so STD-002");
    }
    // Every restatement: covered exactly when something it restates (or itself) is.
    for r in rows.iter().filter(|r| !r.via.is_empty()) {
        let any = r.via.iter().any(|t| !row(t).vectors.is_empty());
        if any {
            assert!(!r.vectors.is_empty(), "{}", r.id);
        }
    }
    let text = swp_conform::catalog::trace::render(&cat, false);
    assert!(
        text.lines()
            .any(|l| l.starts_with("STD-002") && l.contains("(restates CORE-003)")),
        "the trace names what a restatement's coverage comes from"
    );
}
