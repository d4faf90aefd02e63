//! Reading a plan from disk: the CLI's side of the sans-IO boundary.

use planvault_core::{generated, PlanSource};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// `--format`: which grammar PATH is written in, when detection should not guess.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    Vault,
    PlanMd,
    Json,
}

/// Why a plan could not be read at all (exit code 2).
#[derive(Debug)]
pub struct Unreadable(pub String);

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Read PATH as a plan: a folder is a vault, a `.json` file a generated plan,
/// any other file a PLAN.md.
pub fn read_plan(path: &Path, format: Option<FormatArg>) -> Result<PlanSource, Unreadable> {
    let meta = fs::metadata(path)
        .map_err(|e| Unreadable(format!("cannot read {}: {e}", path.display())))?;
    let format = format.unwrap_or(if meta.is_dir() {
        FormatArg::Vault
    } else if path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("json"))
    {
        FormatArg::Json
    } else {
        FormatArg::PlanMd
    });
    let file_name = || {
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    match format {
        FormatArg::Vault => {
            if !meta.is_dir() {
                return Err(Unreadable(format!(
                    "{} is not a folder; a vault is a folder of notes",
                    path.display()
                )));
            }
            Ok(PlanSource::Vault(read_vault(path)?))
        }
        FormatArg::PlanMd => Ok(PlanSource::PlanMd {
            file: file_name(),
            text: read_text(path)?,
        }),
        FormatArg::Json => Ok(PlanSource::Generated {
            file: file_name(),
            text: read_text(path)?,
            options: generated::Options::default(),
        }),
    }
}

fn read_text(path: &Path) -> Result<String, Unreadable> {
    let bytes =
        fs::read(path).map_err(|e| Unreadable(format!("cannot read {}: {e}", path.display())))?;
    String::from_utf8(bytes)
        .map_err(|_| Unreadable(format!("{} is not UTF-8 text", path.display())))
}

/// Every markdown note under `root`, keyed by its `/`-separated relative path.
/// Dot-folders (`.obsidian`, `.git`) are never entered; the core loader
/// decides what else to skip.
pub fn read_vault(root: &Path) -> Result<BTreeMap<String, String>, Unreadable> {
    let mut files = BTreeMap::new();
    // A symlink is followed only to a file inside the vault (as the runner's
    // file tools do): one leading out is not part of the vault.
    let real_root = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut pending: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = fs::read_dir(&dir)
            .map_err(|e| Unreadable(format!("cannot read {}: {e}", dir.display())))?;
        for entry in entries {
            let entry =
                entry.map_err(|e| Unreadable(format!("cannot read {}: {e}", dir.display())))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|e| Unreadable(format!("cannot read {}: {e}", path.display())))?;
            if kind.is_symlink()
                && !fs::canonicalize(&path)
                    .is_ok_and(|real| real.starts_with(&real_root) && real.is_file())
            {
                continue;
            }
            if kind.is_dir() {
                pending.push(path);
            } else if name.to_ascii_lowercase().ends_with(".md") {
                let rel = path.strip_prefix(root).expect("walk stays under root");
                let key = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                files.insert(key, read_text(&path)?);
            }
        }
    }
    Ok(files)
}
