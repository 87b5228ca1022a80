//! Compile-fail suite: authority rules the type system enforces. Each case in `tests/ui/` must fail
//! to compile with the snapshot next to it (`TRYBUILD=overwrite` regenerates the snapshots; the
//! toolchain is pinned in `rust-toolchain.toml` so they stay stable). A dependency change can alter
//! rustc's "other types implement this trait" hints; re-bless only after checking that each case
//! still fails for its own reason (the first error line names it).

#[test]
fn authority_rules_are_compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
