//! A plan that is one folder of a larger vault: each folder under
//! `tests/fixtures/vault-scoped/` is a whole vault, `folder.txt` names the
//! plan's folder in it, and `expected.snap` is what checking that folder
//! gives (`vault::check_in_folder`, as `planvault validate VAULT/FOLDER`).
//! `INSTA_UPDATE=always cargo test -p planvault-core --test integration vault_scoped::`
//! rewrites the snapshots.

use planvault_core::vault::check_in_folder;
use planvault_core::{check, PlanSource};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::fs;
use std::path::Path;

fn read_folder(root: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let key = path
                .strip_prefix(root)
                .unwrap()
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            if key.starts_with("expected") || key == "folder.txt" {
                continue;
            }
            let bytes = fs::read(&path).unwrap();
            files.insert(key, String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    files
}

#[test]
fn vault_scoped() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vault-scoped");
    let mut cases: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    assert!(!cases.is_empty());
    for dir in cases {
        let files = read_folder(&dir);
        let folder = fs::read_to_string(dir.join("folder.txt")).unwrap();
        let checked = check_in_folder(&files, folder.trim());
        let plan = &checked.plan;
        let mut out = String::from("diagnostics:\n");
        for d in &checked.diagnostics {
            let _ = writeln!(out, "  {}", d.render_human());
            let _ = writeln!(out, "    nodes: {:?}", d.nodes);
        }
        let _ = writeln!(out, "start: {:?}", plan.start.map(|s| &plan.nodes[s].id));
        let _ = writeln!(
            out,
            "nodes: {:?}",
            plan.nodes.iter().map(|n| n.id.as_str()).collect::<Vec<_>>()
        );
        out.push_str("edges:\n");
        for e in &plan.edges {
            let to = e.to.map_or("<none>", |t| plan.nodes[t].id.as_str());
            let _ = writeln!(
                out,
                "  {} -> {to} target={:?} label={:?}",
                plan.nodes[e.from].id, e.target, e.label
            );
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        insta::with_settings!({
            snapshot_path => dir.clone(),
            prepend_module_to_snapshot => false,
            description => name,
            omit_expression => true,
        }, {
            insta::assert_snapshot!("expected", out);
        });
    }
}

/// With no folder and nothing skipped, a scoped check is the plain one.
#[test]
fn the_whole_vault_as_the_folder_is_the_plain_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vault");
    for entry in fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let files = read_folder(&dir);
        let plain = check(&PlanSource::Vault(files.clone()));
        let scoped = check_in_folder(&files, "");
        assert_eq!(scoped.diagnostics, plain.diagnostics, "{}", dir.display());
        assert_eq!(scoped.plan, plain.plan, "{}", dir.display());
    }
}

/// A note its reader found too large to read (its text empty) is
/// `unreadable-note` where it is one of the plan's, with its size and the
/// limit; outside the plan's folder, or skipped as a template, only its
/// path counts, as for any note there.
#[test]
fn a_note_too_large_to_read_is_an_error_only_where_it_is_the_plans() {
    use planvault_core::vault::{check_in_folder_read, Unread, NOTE_MAX_BYTES};
    let files = BTreeMap::from([
        (
            "plans/draft.md".to_string(),
            "---\ntype: start\n---\n## Next\n- [[huge]]\n".to_string(),
        ),
        ("plans/huge.md".to_string(), String::new()),
        ("archive/log.md".to_string(), String::new()),
        ("templates/t.md".to_string(), String::new()),
        (
            ".obsidian/templates.json".to_string(),
            r#"{"folder": "templates"}"#.to_string(),
        ),
    ]);
    let unread: Vec<(String, Unread)> = ["plans/huge.md", "archive/log.md", "templates/t.md"]
        .into_iter()
        .map(|p| (p.to_string(), Unread::TooLarge(3 << 30)))
        .collect();
    let errors = |folder: &str| -> Vec<String> {
        check_in_folder_read(&files, folder, &unread)
            .diagnostics
            .iter()
            .filter(|d| d.code == planvault_core::Code::UnreadableNote)
            .map(|d| d.render_human())
            .collect()
    };
    let huge = "plans/huge.md:1:1: error[unreadable-note]: `plans/huge.md` holds 3 GiB, more than the 64 MiB planvault reads of a file: make it smaller, or move it out of the plan";
    assert_eq!(errors("plans"), [huge]);
    assert_eq!(
        errors(""),
        [
            "archive/log.md:1:1: error[unreadable-note]: `archive/log.md` holds 3 GiB, more than the 64 MiB planvault reads of a file: make it smaller, or move it out of the plan",
            huge
        ]
    );
    assert_eq!(NOTE_MAX_BYTES, 64 << 20);
    assert_eq!(
        planvault_core::vault::too_large(
            1_610_612_736,
            planvault_core::vault::read_limit("00_plan-trace/journal.jsonl")
        ),
        "holds 1.5 GiB, more than the 1 GiB planvault reads of a file"
    );
    assert_eq!(
        planvault_core::vault::too_large(70 << 20, NOTE_MAX_BYTES),
        "holds 70 MiB, more than the 64 MiB planvault reads of a file"
    );
    assert_eq!(
        planvault_core::vault::too_large(NOTE_MAX_BYTES + 1, NOTE_MAX_BYTES),
        "holds 64.1 MiB, more than the 64 MiB planvault reads of a file"
    );
}
