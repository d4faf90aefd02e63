//! Embeds the bundled example vault (`static/example-vault/`) into the app so
//! the first visit shows a plan with no picker and no fetch.
//!
//! Writes `$OUT_DIR/example_vault.rs`: a sorted `&[(path, text)]` of every
//! `.md` and `.canvas` file, paths vault-relative and `/`-separated.

use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    // wasm-split reads the linker's relocations to move code into chunks.
    if std::env::var_os("CARGO_FEATURE_SPLIT").is_some()
        && std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32")
    {
        println!("cargo:rustc-link-arg-bin=planvault-web=--emit-relocs");
    }
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let vault = manifest_dir.join("../static/example-vault");
    println!("cargo:rerun-if-changed={}", vault.display());

    let mut files = Vec::new();
    if vault.is_dir() {
        collect(&vault, &vault, &mut files);
    }
    files.sort();

    let mut out = String::from("pub static FILES: &[(&str, &str)] = &[\n");
    for (relative, absolute) in &files {
        out.push_str(&format!(
            "    ({relative:?}, include_str!({absolute:?})),\n"
        ));
    }
    out.push_str("];\n");

    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    fs::write(out_dir.join("example_vault.rs"), out).unwrap();
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(root, &path, files);
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("md" | "canvas")
        ) {
            let relative = path.strip_prefix(root).unwrap();
            let relative: Vec<_> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect();
            let absolute = fs::canonicalize(&path).unwrap();
            files.push((relative.join("/"), absolute.to_string_lossy().into_owned()));
        }
    }
}
