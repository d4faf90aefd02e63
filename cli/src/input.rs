//! Reading a plan from disk: the CLI's side of the sans-IO boundary.

use planvault_core::vault::{Unread, NOTE_MAX_BYTES};
use planvault_core::{generated, Code, Diagnostic, PlanSource};
use planvault_runner::native::read_bounded;
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

/// A plan as read, with what could not be read of it: files of a vault that
/// are unreadable or skipped, each a diagnostic on that file (the rest of
/// the vault is still read and checked).
pub struct ReadPlan {
    pub source: PlanSource,
    pub problems: Vec<Diagnostic>,
    /// A vault's notes whose text is not their bytes, and why (not UTF-8,
    /// too large to read).
    pub unread: Vec<(String, Unread)>,
    /// For a folder inside a larger vault: that folder, vault-relative; the
    /// source then holds the whole vault, against which links resolve.
    pub plan_folder: Option<String>,
    /// The vault's root: PATH itself, or the larger vault a plan folder
    /// lies in. `None` for a PLAN.md or generated plan.
    pub vault_root: Option<PathBuf>,
}

impl ReadPlan {
    /// The plan checked as `planvault validate` checks it: a plan folder's
    /// notes among the whole vault's, any other source as it is.
    pub fn check(&self) -> planvault_core::Checked {
        match &self.source {
            PlanSource::Vault(files) => {
                planvault_core::vault::check_in_folder_read(files, self.folder(), &self.unread)
            }
            source => planvault_core::check(source),
        }
    }

    /// The plan's folder in its vault (empty: the whole vault).
    pub fn folder(&self) -> &str {
        self.plan_folder.as_deref().unwrap_or("")
    }
}

/// Which vault a folder's links resolve in.
#[derive(Debug, Clone, Copy)]
pub enum Enclosing<'a> {
    /// The nearest folder above PATH with an `.obsidian/` folder or
    /// SilverBullet's configuration page, if any ([`is_vault_root`]).
    Detect,
    /// This folder (`--vault-root`), which must contain PATH.
    Given(&'a Path),
    /// PATH itself is the vault (a run writes into it).
    Itself,
}

/// A vault file's text, read only when it is a regular file (after
/// symlinks): a pipe would hold the read until something writes it, and a
/// device (a symlink to `/dev/zero`) would never end it. `None` otherwise,
/// or when it cannot be read as UTF-8.
pub(crate) fn regular_file_text(path: &Path) -> Option<String> {
    if !fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let bytes = read_bounded(path, NOTE_MAX_BYTES).ok()?.ok()?;
    String::from_utf8(bytes).ok()
}

/// Whether `dir` is a vault's root: Obsidian keeps its settings there
/// (`.obsidian/`), SilverBullet its configuration page (`CONFIG.md` with a
/// `space-lua` block).
fn is_vault_root(dir: &Path) -> bool {
    use planvault_core::vault::silverbullet::{is_space_config, CONFIG_PAGE};
    dir.join(".obsidian").is_dir()
        || regular_file_text(&dir.join(CONFIG_PAGE)).is_some_and(|text| is_space_config(&text))
}

/// Whether the vault at `dir`, found above a plan folder, is the user's
/// own: its `.obsidian/`, `CONFIG.md` and `.planvault/` (whose config
/// starts servers) belong to whoever runs planvault, as git trusts only a
/// repository its user owns. A `/tmp/.obsidian` another user of the
/// machine made would otherwise take over a run of `/tmp/plan`.
fn vault_is_mine(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        owned_by(dir, rustix::process::geteuid().as_raw())
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        true
    }
}

/// Whether `dir`'s vault markers that are there all belong to user `uid`.
#[cfg(unix)]
fn owned_by(dir: &Path, uid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let markers = [
        ".obsidian",
        planvault_core::vault::silverbullet::CONFIG_PAGE,
        ".planvault",
    ];
    markers
        .iter()
        .filter_map(|m| fs::symlink_metadata(dir.join(m)).ok())
        .all(|meta| meta.uid() == uid)
}

/// The vault root PATH lies in and PATH's folder inside it (`None`: PATH is
/// the vault itself).
fn enclosing_vault(
    path: &Path,
    enclosing: Enclosing<'_>,
) -> Result<Option<(PathBuf, String)>, Unreadable> {
    let canonical = fs::canonicalize(path)
        .map_err(|e| Unreadable(format!("cannot read {}: {e}", path.display())))?;
    let root = match enclosing {
        Enclosing::Itself => return Ok(None),
        Enclosing::Given(root) => {
            let root = fs::canonicalize(root)
                .map_err(|e| Unreadable(format!("cannot read {}: {e}", root.display())))?;
            if !canonical.starts_with(&root) {
                return Err(Unreadable(format!(
                    "{} is not inside the vault root {}",
                    path.display(),
                    root.display()
                )));
            }
            root
        }
        Enclosing::Detect => {
            if is_vault_root(&canonical) {
                return Ok(None);
            }
            match canonical.ancestors().skip(1).find(|dir| is_vault_root(dir)) {
                Some(root) if vault_is_mine(root) => root.to_path_buf(),
                Some(root) => {
                    static TOLD: std::sync::Once = std::sync::Once::new();
                    TOLD.call_once(|| {
                        eprintln!(
                            "note: {} looks like a vault but belongs to another user, so {} runs as a vault of its own (its config would start servers as you); pass --vault-root to take it",
                            root.display(),
                            path.display()
                        )
                    });
                    return Ok(None);
                }
                None => return Ok(None),
            }
        }
    };
    let folder = canonical
        .strip_prefix(&root)
        .expect("checked above")
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    Ok((!folder.is_empty()).then_some((root, folder)))
}

/// Where the vault's `.planvault/` is for PATH: the larger vault's root
/// for a plan folder in one, else PATH (a vault, or a plan file's path).
pub fn vault_home(path: &Path, enclosing: Enclosing<'_>) -> PathBuf {
    match path.is_dir().then(|| enclosing_vault(path, enclosing)) {
        Some(Ok(Some((root, _)))) => root,
        _ => path.to_path_buf(),
    }
}

/// Read PATH as a plan: a folder is a vault, a `.json` file a generated plan,
/// any other file a PLAN.md.
pub fn read_plan(
    path: &Path,
    format: Option<FormatArg>,
    enclosing: Enclosing<'_>,
) -> Result<ReadPlan, Unreadable> {
    let forced = format.is_some();
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
            let (root, plan_folder) = match enclosing_vault(path, enclosing)? {
                Some((root, folder)) => (root, Some(folder)),
                None => (path.to_path_buf(), None),
            };
            let VaultRead {
                files,
                mut problems,
                unread,
            } = read_vault_with(&root, plan_folder.as_deref().unwrap_or(""))?;
            if let Some(folder) = &plan_folder {
                // The rest of the vault is not the plan's to answer for.
                problems.retain(|d| {
                    d.file
                        .as_deref()
                        .is_some_and(|f| planvault_core::vault::in_folder(f, folder))
                });
            }
            Ok(ReadPlan {
                source: PlanSource::Vault(files),
                problems,
                unread,
                plan_folder,
                vault_root: Some(root),
            })
        }
        FormatArg::PlanMd => {
            let text = read_text(path)?;
            if !forced {
                if let Some(why) = vault_note_signs(&text) {
                    let folder = path
                        .parent()
                        .filter(|p| !p.as_os_str().is_empty())
                        .unwrap_or(Path::new("."));
                    return Err(Unreadable(format!(
                        "{} is one note of a vault ({why}), not a PLAN.md; validate the vault's folder: planvault validate {}",
                        path.display(),
                        folder.display()
                    )));
                }
            }
            Ok(ReadPlan {
                source: PlanSource::PlanMd {
                    file: file_name(),
                    text,
                },
                problems: Vec::new(),
                unread: Vec::new(),
                plan_folder: None,
                vault_root: None,
            })
        }
        FormatArg::Json => Ok(ReadPlan {
            source: PlanSource::Generated {
                file: file_name(),
                text: read_text(path)?,
                options: generated::Options::default(),
            },
            problems: Vec::new(),
            unread: Vec::new(),
            plan_folder: None,
            vault_root: None,
        }),
    }
}

/// Why a file read as a PLAN.md is rather a vault note: a `## Next` list of
/// `[[links]]`, or frontmatter setting a node's `type`/`status`, and no
/// checkbox item a PLAN.md is made of. `None` when it may be a PLAN.md.
fn vault_note_signs(text: &str) -> Option<&'static str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = || text.lines().map(str::trim);
    let checkbox = lines().any(|l| {
        let l = l.trim_start_matches(['-', '*', '+']).trim_start();
        l.starts_with("[ ]") || l.starts_with("[x]") || l.starts_with("[X]")
    });
    if checkbox {
        return None;
    }
    let mut in_next = false;
    for line in lines() {
        if line.starts_with('#') {
            in_next = line
                .trim_start_matches('#')
                .trim()
                .eq_ignore_ascii_case("next")
                && line.starts_with("## ");
        } else if in_next && line.starts_with(['-', '*', '+']) && line.contains("[[") {
            return Some("it has a `## Next` list of [[links]]");
        }
    }
    let frontmatter = text
        .strip_prefix("---")
        .and_then(|rest| rest.split_once("\n---"))
        .map(|(block, _)| block)?;
    let knob = frontmatter.lines().any(|l| {
        let (key, value) = l.split_once(':').unwrap_or((l, ""));
        let value = value.trim();
        (key.trim() == "type" && ["start", "step"].contains(&value))
            || (key.trim() == "status" && ["pending", "active", "done"].contains(&value))
    });
    knob.then_some("its frontmatter sets a node's `type` or `status`")
}

/// A plan file's text (a `PLAN.md`, a JSON plan, a receipt): a regular
/// file, at most [`NOTE_MAX_BYTES`], UTF-8.
pub(crate) fn read_text(path: &Path) -> Result<String, Unreadable> {
    let cannot = |e| Unreadable(format!("cannot read {}: {e}", path.display()));
    if !fs::metadata(path).map_err(cannot)?.is_file() {
        return Err(Unreadable(format!(
            "cannot read {}: it is no regular file (a pipe, socket or device)",
            path.display()
        )));
    }
    let bytes = read_bounded(path, NOTE_MAX_BYTES)
        .map_err(cannot)?
        .map_err(|size| {
            Unreadable(format!(
                "cannot read {}: it {}",
                path.display(),
                planvault_core::vault::too_large(size, NOTE_MAX_BYTES)
            ))
        })?;
    String::from_utf8(bytes)
        .map_err(|_| Unreadable(format!("{} is not UTF-8 text", path.display())))
}

/// Every markdown note under `root`, keyed by its `/`-separated relative path;
/// what could not be read is left out (see [`read_vault_with`]).
pub fn read_vault(root: &Path) -> Result<BTreeMap<String, String>, Unreadable> {
    let mut files = read_vault_with(root, "")?.files;
    files.retain(|path, _| !path.starts_with('.'));
    Ok(files)
}

/// `root`'s notes and a diagnostic for each file or folder that could not
/// be read. Dot-folders (`.obsidian`, `.git`) are never entered; the core
/// loader decides what else to skip. A note that is not UTF-8 is decoded
/// with U+FFFD for what is not, and noted (the core reports it where the
/// note is one of the plan's). A symlinked note is read when it
/// leads to a file inside the vault; a symlinked folder is never followed
/// (inside the vault its notes would be there twice, as Obsidian also
/// refuses; outside it they are not the vault's) and says so.
///
/// With a plan `folder` (vault-relative; empty: the whole vault), the notes
/// outside it are listed with no text (only their paths decide where a
/// link leads; a person's other notes are not read), but for SilverBullet's
/// `CONFIG.md` at the root; a symlinked note in the folder that leads out
/// of it is no note of the plan (its status would be written there).
pub fn read_vault_with(root: &Path, folder: &str) -> Result<VaultRead, Unreadable> {
    let mut files = BTreeMap::new();
    let mut problems = Vec::new();
    let mut unread = Vec::new();
    let canonical_root = fs::canonicalize(root)
        .map_err(|e| Unreadable(format!("cannot read {}: {e}", root.display())))?;
    let canonical_folder = canonical_root.join(folder);
    let in_plan = |key: &str| planvault_core::vault::in_folder(key, folder);
    let path_only =
        |key: &str| !in_plan(key) && key != planvault_core::vault::silverbullet::CONFIG_PAGE;
    let rel = |path: &Path| {
        path.strip_prefix(root)
            .expect("walk stays under root")
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    };
    let mut pending: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if dir == root => {
                return Err(Unreadable(format!("cannot read {}: {e}", dir.display())))
            }
            Err(e) => {
                problems.push(unreadable(
                    &rel(&dir),
                    format!("is a folder that cannot be read: {e}"),
                ));
                continue;
            }
        };
        for entry in entries {
            let Ok(entry) = entry else {
                problems.push(unreadable(
                    &rel(&dir),
                    "is a folder that cannot be listed".to_string(),
                ));
                continue;
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let key = rel(&path);
            let is_note = name.to_ascii_lowercase().ends_with(".md");
            let Ok(kind) = entry.file_type() else {
                problems.push(unreadable(
                    &key,
                    "cannot be read: its kind is unknown".to_string(),
                ));
                continue;
            };
            if kind.is_symlink() {
                match fs::canonicalize(&path) {
                    Err(e) if is_note => problems.push(unreadable(
                        &key,
                        format!("is a symlink that leads nowhere ({e})"),
                    )),
                    Err(e) => problems.push(
                        Diagnostic::warning(
                            Code::SkippedSymlink,
                            format!("`{key}` is a symlink that leads nowhere ({e})"),
                        )
                        .in_file(key.clone()),
                    ),
                    Ok(target) if target.is_dir() => {
                        let why = if target.starts_with(&canonical_root) {
                            "a folder inside the vault, whose notes would be listed twice"
                        } else {
                            "a folder outside the vault"
                        };
                        problems.push(
                            Diagnostic::warning(
                                Code::SkippedSymlink,
                                format!("`{key}` is a symlink to {why}; its notes are not read"),
                            )
                            .in_file(key.clone()),
                        );
                    }
                    Ok(target) if is_note => {
                        let dotted = target.strip_prefix(&canonical_root).is_ok_and(|r| {
                            r.components()
                                .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
                        });
                        if !target.starts_with(&canonical_root) {
                            problems.push(
                                Diagnostic::warning(
                                    Code::SkippedSymlink,
                                    format!("`{key}` is a symlink to a note outside the vault; it is not read"),
                                )
                                .in_file(key.clone()),
                            );
                        } else if dotted {
                            problems.push(
                                Diagnostic::warning(
                                    Code::SkippedSymlink,
                                    format!("`{key}` is a symlink into a dot-folder of the vault (its settings or history); it is not read"),
                                )
                                .in_file(key.clone()),
                            );
                        } else if in_plan(&key) && !target.starts_with(&canonical_folder) {
                            problems.push(
                                Diagnostic::warning(
                                    Code::SkippedSymlink,
                                    format!("`{key}` is a symlink to a note outside the plan's folder `{folder}/`; it is no note of the plan"),
                                )
                                .in_file(key.clone()),
                            );
                        } else if path_only(&key) {
                            files.insert(key, Some(String::new()));
                        } else {
                            let text = read_note(&path, &mut problems, &mut unread, &rel(&path));
                            files.insert(key, text);
                        }
                    }
                    Ok(_) => {}
                }
            } else if kind.is_dir() {
                pending.push(path);
            } else if is_note && path_only(&key) {
                files.insert(key, Some(String::new()));
            } else if is_note {
                let text = read_note(&path, &mut problems, &mut unread, &key);
                files.insert(key, text);
            }
        }
    }
    // The settings that say which folders hold no plan notes, from the
    // dot-folders the walk does not enter.
    for setting in [
        planvault_core::vault::scope::TEMPLATES_SETTINGS,
        planvault_core::vault::scope::TEMPLATER_SETTINGS,
        planvault_core::vault::scope::IGNORE_FILE,
    ] {
        if let Some(text) = regular_file_text(&root.join(setting)) {
            files.insert(setting.to_string(), Some(text));
        }
    }
    // Unreadable notes stay out of the vault.
    let files = files
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect();
    problems.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(VaultRead {
        files,
        problems,
        unread,
    })
}

/// A vault as [`read_vault_with`] read it.
pub struct VaultRead {
    pub files: BTreeMap<String, String>,
    /// A diagnostic for each file or folder that could not be read.
    pub problems: Vec<Diagnostic>,
    /// The notes whose text is not their bytes, and why: not UTF-8
    /// (decoded with U+FFFD), or too large to read (their text empty).
    pub unread: Vec<(String, Unread)>,
}

/// A note's text (non-UTF-8 bytes as U+FFFD; none, for a note too large to
/// read), where either was noted in `unread`, or `None` and a diagnostic.
fn read_note(
    path: &Path,
    problems: &mut Vec<Diagnostic>,
    unread: &mut Vec<(String, Unread)>,
    key: &str,
) -> Option<String> {
    // A pipe would hold the read until something writes it.
    if fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        problems.push(unreadable(
            key,
            "cannot be read: it is no regular file (a pipe, socket or device)".to_string(),
        ));
        return None;
    }
    match read_bounded(path, planvault_core::vault::read_limit(key)) {
        Ok(Ok(bytes)) => Some(match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                // What comes before the first bad byte decodes as it is.
                unread.push((
                    key.to_string(),
                    Unread::NotUtf8(e.utf8_error().valid_up_to()),
                ));
                String::from_utf8_lossy(e.as_bytes()).into_owned()
            }
        }),
        // Only its path counts where it is not the plan's (the core says).
        Ok(Err(size)) => {
            unread.push((key.to_string(), Unread::TooLarge(size)));
            Some(String::new())
        }
        Err(e) => {
            problems.push(unreadable(key, format!("cannot be read: {e}")));
            None
        }
    }
}

fn unreadable(key: &str, reason: String) -> Diagnostic {
    Diagnostic::error(Code::UnreadableNote, format!("`{key}` {reason}")).in_file(key.to_string())
}

#[cfg(test)]
mod tests {
    /// A vault above a plan folder is taken only where its markers are the
    /// runner's (any user can run this; the root-only CLI test makes a real
    /// foreign folder).
    #[cfg(unix)]
    #[test]
    fn a_vaults_markers_must_all_be_the_runners() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".obsidian")).unwrap();
        std::fs::create_dir(dir.path().join(".planvault")).unwrap();
        let me = std::fs::metadata(dir.path()).unwrap().uid();
        assert!(super::owned_by(dir.path(), me));
        assert!(!super::owned_by(dir.path(), me + 1));
        // No marker there: nothing to distrust.
        let bare = tempfile::tempdir().unwrap();
        assert!(super::owned_by(bare.path(), me + 1));
    }
}
