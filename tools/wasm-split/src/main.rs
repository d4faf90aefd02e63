//! Splits the app's wasm (cargo's output, linked with `--emit-relocs`) at
//! its `#[lazy]` parts, the way cargo-leptos does, for
//! `scripts/build-web.mjs`:
//!
//!   planvault-wasm-split INPUT.wasm OUT_DIR NAME
//!
//! writes into OUT_DIR the main module `NAME.wasm` (for wasm-bindgen, with
//! `--keep-lld-exports`), one `split_*.wasm` per lazy part and `chunk_*.wasm`
//! for code two parts share, and the loader `split.js` the main module
//! imports; it fetches the parts relative to itself and imports `initSync`
//! from wasm-bindgen's `./NAME.js` beside it. So all of them go in one
//! folder.

use anyhow::{bail, Context, Result};
use std::path::PathBuf;

/// The loader's file name: the main module imports it as `./split.js`.
const LINK_MODULE: &str = "./split.js";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, out_dir, name] = args.as_slice() else {
        bail!("usage: planvault-wasm-split INPUT.wasm OUT_DIR NAME");
    };
    let input_wasm = std::fs::read(input).with_context(|| format!("reading {input}"))?;
    let out_dir = PathBuf::from(out_dir);
    let main_out_path = out_dir.join(format!("{name}.wasm"));
    let main_module = format!("./{name}.js");
    wasm_split_cli_support::transform({
        let mut options = wasm_split_cli_support::Options::new(&input_wasm);
        options.output_dir = &out_dir;
        options.main_out_path = &main_out_path;
        options.link_name = LINK_MODULE;
        options.main_module = &main_module;
        options
    })
    .map_err(|e| anyhow::anyhow!("{e:#}"))
    .with_context(|| format!("splitting {input}"))?;
    Ok(())
}
