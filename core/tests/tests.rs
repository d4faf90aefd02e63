//! planvault-core's integration tests as one test binary, one module per
//! file beside this one (as ripgrep does): one link instead of one per file.
//! `cargo test -p planvault-core --test integration MODULE::` runs one file.
//!
//! `Cargo.toml` turns cargo's discovery of test files off
//! (`autotests = false`), so a new file here runs only once it is a module
//! below; `every_test_file_is_a_module` fails until then. `scale.rs` stays a
//! binary of its own: it also runs in the browser (wasm-bindgen-test), where
//! this binary's native-only dev-dependencies (insta, proptest) do not build.

mod engine_support;

mod edit;
mod edit_props;
mod engine_fixtures;
mod engine_generated;
mod engine_planmd;
mod engine_resume;
mod engine_vault;
mod export;
mod fixtures;
mod generated_properties;
mod journal_lines;
mod leopold_conformance;
mod obsidian_metadata;
mod planmd_migration;
mod planmd_properties;
mod proposal_fixtures;
mod rename_commonmark;
mod silverbullet_fixtures;
mod terminal_output;
mod vault_fixtures;
mod vault_props;
mod vault_scoped;

/// Binaries of their own (`[[test]]` in `Cargo.toml`), not modules here.
const OWN_BINARIES: [&str; 2] = ["tests.rs", "scale.rs"];

#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = include_str!("tests.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let module = if path.is_dir() && path.join("mod.rs").is_file() {
            name.clone()
        } else if let Some(stem) = name.strip_suffix(".rs") {
            stem.to_string()
        } else {
            continue;
        };
        if !OWN_BINARIES.contains(&name.as_str())
            && !this.lines().any(|line| line == format!("mod {module};"))
        {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "never compiled, never run: {} under core/tests/; add `mod NAME;` to tests/tests.rs",
        missing.join(", ")
    );
}
