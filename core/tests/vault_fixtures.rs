//! Data-driven vault tests: each folder under `tests/fixtures/vault/` is a
//! vault (notes, plus whatever else a real vault holds), and `expected.snap`
//! beside the notes is what loading and validating it must produce: the
//! diagnostics compiler-style with the nodes they name, then the plan model.
//! `INSTA_UPDATE=always cargo test -p planvault-core --test integration vault_fixtures::`
//! rewrites the snapshots; review the diff before committing.

use planvault_core::vault::{check_in_folder_read, Unread};
use planvault_core::{check, NodeExt, PlanSource};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::fs;
use std::path::Path;

/// Every file under `root` except the snapshot, `/`-separated, dot-folders
/// included: skipping them is the loader's job and is under test here.
pub(crate) fn read_folder(root: &Path) -> BTreeMap<String, String> {
    read_folder_bytes(root).0
}

/// [`read_folder`] and, as a reader that saw the bytes tells the core,
/// where each note that is not UTF-8 holds its first bad byte.
fn read_folder_bytes(root: &Path) -> (BTreeMap<String, String>, Vec<(String, Unread)>) {
    let mut files = BTreeMap::new();
    let mut not_utf8 = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let rel = path.strip_prefix(root).unwrap();
            let key = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            if key.starts_with("expected.snap") {
                continue;
            }
            // Bytes that are not UTF-8 become U+FFFD, as the CLI and
            // Node's `readFileSync(path, "utf8")` decode them.
            let bytes = fs::read(&path).unwrap();
            if let Err(e) = std::str::from_utf8(&bytes) {
                not_utf8.push((key.clone(), Unread::NotUtf8(e.valid_up_to())));
            }
            files.insert(key, String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    (files, not_utf8)
}

/// The whole outcome of checking a vault, in a stable text form: as
/// [`check`] gives it, or, where a note is not UTF-8, as a reader of its
/// bytes has the core check it.
fn render(files: &BTreeMap<String, String>, not_utf8: &[(String, Unread)]) -> String {
    let checked = match not_utf8.is_empty() {
        true => check(&PlanSource::Vault(files.clone())),
        false => check_in_folder_read(files, "", not_utf8),
    };
    let plan = &checked.plan;
    let mut out = String::from("diagnostics:\n");
    for d in &checked.diagnostics {
        let _ = writeln!(out, "  {}", d.render_human());
        let _ = writeln!(out, "    nodes: {:?}", d.nodes);
    }
    let _ = writeln!(out, "start: {:?}", plan.start.map(|s| &plan.nodes[s].id));
    out.push_str("nodes:\n");
    for n in &plan.nodes {
        let _ = writeln!(
            out,
            "  {:?} title={:?} kind={} status={}",
            n.id,
            n.title,
            n.kind.as_str(),
            n.status.as_str()
        );
        let _ = writeln!(
            out,
            "    tools={:?} role={:?} max_visits={}",
            n.tools, n.role, n.max_visits
        );
        if let NodeExt::Vault(v) = &n.ext {
            let _ = writeln!(out, "    file={:?} next_line={:?}", v.file, v.next_line);
            for (key, raw) in &v.extra_frontmatter {
                let _ = writeln!(out, "    extra {key:?}: {raw:?}");
            }
        }
        let _ = writeln!(out, "    body={:?}", n.body);
    }
    out.push_str("edges:\n");
    for e in &plan.edges {
        let to = e.to.map_or("<none>", |t| plan.nodes[t].id.as_str());
        let pos = e
            .pos
            .as_ref()
            .map(|p| format!("{}:{}:{}", p.file, p.line, p.column))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} -> {} target={:?} label={:?} {} at {pos}",
            plan.nodes[e.from].id,
            to,
            e.target,
            e.label,
            if e.is_conditional() {
                "conditional"
            } else {
                "unconditional"
            },
        );
    }
    out
}

#[test]
fn vault_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vault");
    let mut cases: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 20,
        "fixture folders went missing: {}",
        cases.len()
    );
    for case in &cases {
        let (files, not_utf8) = read_folder_bytes(case);
        let output = render(&files, &not_utf8);
        // Same input, same bytes.
        assert_eq!(
            output,
            render(&files, &not_utf8),
            "{} is not deterministic",
            case.display()
        );
        insta::with_settings!({
            snapshot_path => case.clone(),
            prepend_module_to_snapshot => false,
            description => case.file_name().unwrap().to_string_lossy().to_string(),
            omit_expression => true,
        }, {
            insta::assert_snapshot!("expected", output);
        });
    }
}

/// A load for checks only (the npm package's) is a full load with every
/// body and unknown frontmatter key dropped: the same diagnostics, the same
/// plan otherwise, and the same exports, which read neither.
#[test]
fn a_load_for_checks_drops_only_bodies_and_unknown_keys() {
    use planvault_core::{export, vault};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vault");
    let (mut with_bodies, mut with_unknown_keys) = (0, 0);
    for case in fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
    {
        let files = read_folder(&case);
        let pairs = || files.iter().map(|(p, t)| (p.as_str(), t.as_str()));
        let (full, full_diagnostics) = vault::load_from(pairs());
        let (skipped, skipped_diagnostics) = vault::load_from_as(pairs(), vault::Detail::Checks);
        assert_eq!(skipped_diagnostics, full_diagnostics, "{}", case.display());
        let extra = |n: &planvault_core::Node| match &n.ext {
            NodeExt::Vault(v) => v.extra_frontmatter.len(),
            _ => 0,
        };
        assert!(
            skipped
                .nodes
                .iter()
                .all(|n| n.body.is_empty() && extra(n) == 0),
            "{}",
            case.display()
        );
        if full.nodes.iter().any(|n| !n.body.is_empty()) {
            with_bodies += 1;
        }
        if full.nodes.iter().any(|n| extra(n) > 0) {
            with_unknown_keys += 1;
        }
        use export::GraphFormat::*;
        for format in [Json, Mermaid, Ascii, Canvas] {
            let same = export::export(&skipped, format) == export::export(&full, format);
            assert!(
                same,
                "{} {format:?}: the export differs without bodies",
                case.display()
            );
        }
        let mut emptied = full;
        for node in &mut emptied.nodes {
            node.body.clear();
            if let NodeExt::Vault(v) = &mut node.ext {
                v.extra_frontmatter.clear();
            }
        }
        assert_eq!(skipped, emptied, "{}", case.display());
    }
    assert!(with_bodies >= 5, "only {with_bodies} fixtures have bodies");
    assert!(
        with_unknown_keys >= 2,
        "only {with_unknown_keys} fixtures have unknown frontmatter keys"
    );
}
