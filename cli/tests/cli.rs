//! The `planvault` binary end to end: exit codes, compiler-style and JSON
//! output, `--quiet`, and the graph drawings, on the bundled example vault
//! and the core's fixture vaults.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn example() -> PathBuf {
    repo().join("static/example-vault")
}

fn fixture(case: &str) -> PathBuf {
    repo().join("core/tests/fixtures/vault").join(case)
}

fn run(args: &[&str], path: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(args)
        .arg(path)
        .output()
        .expect("run planvault")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

#[test]
fn the_example_vault_is_sound() {
    let out = run(&["validate"], &example());
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(stdout(&out), "");
    let out = run(&["validate", "--json"], &example());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&out)).unwrap(),
        serde_json::json!({"diagnostics": []})
    );
}

#[test]
fn errors_print_compiler_style_and_exit_1() {
    let out = run(&["validate"], &fixture("dangling-edge"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "a.md:8:11: error[dangling-edge]: edge from `a` points at [[c-missing]], which is no note in the vault\n\
         a.md:9:13: error[dangling-edge]: edge from `a` points at [[Nope ]], which is no note in the vault\n\
         a.md:10:14: error[dangling-edge]: edge from `a` points at [[Gone#Part|the part]], which is no note in the vault\n"
    );
}

#[test]
fn warnings_alone_exit_0() {
    let out = run(&["validate"], &fixture("unreachable"));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("orphan.md:1:1: warning[unreachable]: `orphan` cannot be reached"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn json_gives_utf16_columns_beside_the_human_ones() {
    // `- 🚀 ship it, 計画 done -> [[missing 🎯 target]]`: the rocket is one
    // character but two UTF-16 units; the CJK characters one of each.
    let out = run(&["validate", "--json"], &fixture("emoji-before-link"));
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let v: Value = serde_json::from_str(&text).unwrap();
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "dangling-edge");
    assert_eq!(d["file"], "start.md");
    let line = "- 🚀 ship it, 計画 done -> [[missing 🎯 target]]";
    let at = line.find("[[").unwrap();
    let chars = line[..at].chars().count() as u64;
    let units = line[..at].encode_utf16().count() as u64;
    assert_eq!((chars, units), (24, 25));
    assert_eq!(d["line"].as_u64(), Some(7));
    assert_eq!(d["column"].as_u64(), Some(chars + 1), "human column");
    assert_eq!(d["column_utf16"].as_u64(), Some(units + 1), "UTF-16 column");
    let link_units = "[[missing 🎯 target]]".encode_utf16().count() as u64;
    assert_eq!(d["end_column_utf16"].as_u64(), Some(units + 1 + link_units));
    // The human output keeps counting characters.
    let human = stdout(&run(&["validate"], &fixture("emoji-before-link")));
    assert!(
        human.starts_with("start.md:7:25: error[dangling-edge]"),
        "{human}"
    );
    // Field order: the UTF-16 columns follow the human one.
    let order: Vec<usize> = [
        "\"column\"",
        "\"column_utf16\"",
        "\"end_column_utf16\"",
        "\"nodes\"",
    ]
    .iter()
    .map(|k| text.find(k).unwrap())
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn json_lists_every_field() {
    let out = run(&["validate", "--json"], &fixture("ambiguous-link"));
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let ambiguous = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "ambiguous-link")
        .unwrap();
    assert_eq!(ambiguous["severity"], "error");
    assert_eq!(ambiguous["file"], "start.md");
    assert_eq!(
        (ambiguous["line"].as_u64(), ambiguous["column"].as_u64()),
        (Some(5), Some(3))
    );
    assert_eq!(
        ambiguous["nodes"],
        serde_json::json!(["start", "a/send", "b/send"])
    );
    assert!(ambiguous["message"]
        .as_str()
        .unwrap()
        .contains("`a/send` and `b/send`"));
}

#[test]
fn output_is_byte_identical_across_runs() {
    let a = run(
        &["validate", "--json"],
        &fixture("broken-note-does-not-stop-the-rest"),
    );
    let b = run(
        &["validate", "--json"],
        &fixture("broken-note-does-not-stop-the-rest"),
    );
    assert_eq!(a.stdout, b.stdout);
    assert!(stdout(&a).matches("\"code\"").count() >= 4);
}

#[test]
fn quiet_prints_nothing_and_keeps_the_exit_code() {
    for (case, code) in [("cycle-without-exit", 1), ("seed-loop-with-exit", 0)] {
        for command in ["validate", "graph"] {
            let out = run(&[command, "--quiet"], &fixture(case));
            assert_eq!(out.status.code(), Some(code), "{command} {case}");
            assert!(
                out.stdout.is_empty() && out.stderr.is_empty(),
                "{command} {case} printed"
            );
        }
    }
}

#[test]
fn an_unreadable_path_exits_2() {
    let missing = repo().join("no/such/vault");
    for command in ["validate", "graph"] {
        let out = run(&[command], &missing);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).starts_with("error: cannot read"),
            "{}",
            stderr(&out)
        );
        assert_eq!(run(&[command, "--quiet"], &missing).stderr, b"");
    }
    let file = repo().join("README.md");
    let out = run(&["validate", "--format", "vault"], &file);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn graph_draws_ascii_by_default_with_diagnostics_on_stderr() {
    let out = run(&["graph"], &example());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "draft — Draft the email  [start]\n└─▶ review — Review the draft\n    ├─ approved ─▶ send — Send the email  [end]\n    └─ needs revision ─▶ ↺ draft (see above)\n"
    );
    assert_eq!(
        stdout(&out),
        stdout(&run(&["graph", "--ascii"], &example()))
    );
    let out = run(&["graph"], &fixture("dangling-edge"));
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("✗ [[c-missing]]"));
    assert!(stderr(&out).contains("a.md:8:11: error[dangling-edge]"));
}

#[test]
fn graph_json_mermaid_and_canvas() {
    let v: Value = serde_json::from_str(&stdout(&run(&["graph", "--json"], &example()))).unwrap();
    assert_eq!(v["format"], "vault");
    assert_eq!(v["start"], "draft");
    assert_eq!(v["nodes"].as_array().unwrap().len(), 3);
    let revise = v["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["label"] == "needs revision")
        .unwrap();
    assert_eq!(
        (&revise["from"], &revise["to"], &revise["conditional"]),
        (&"review".into(), &"draft".into(), &true.into())
    );

    let mermaid = stdout(&run(&["graph", "--mermaid"], &example()));
    assert!(mermaid.starts_with("flowchart TD\n"));
    assert!(mermaid.contains("-->|\"approved\"|"));

    let canvas: Value =
        serde_json::from_str(&stdout(&run(&["graph", "--canvas"], &example()))).unwrap();
    let files: Vec<&str> = canvas["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["draft.md", "review.md", "send.md"]);
    assert_eq!(canvas["edges"].as_array().unwrap().len(), 3);
}

#[test]
fn graph_formats_are_exclusive() {
    let out = run(&["graph", "--json", "--mermaid"], &example());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot be used with"));
}

#[test]
fn the_cli_skips_dot_folders_and_reads_crlf_and_bom() {
    let dir = std::env::temp_dir().join(format!("planvault-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".obsidian")).unwrap();
    std::fs::create_dir_all(dir.join("00_plan-trace")).unwrap();
    std::fs::write(dir.join(".obsidian/app.md"), "## Next\n- [[nowhere]]\n").unwrap();
    std::fs::write(
        dir.join("00_plan-trace/trace.md"),
        "## Next\n- [[nowhere]]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("start.md"),
        "\u{feff}---\r\ntype: start\r\n---\r\n## Next\r\n- go -> [[End]]\r\n",
    )
    .unwrap();
    std::fs::write(dir.join("end.md"), "# End\r\n").unwrap();
    std::fs::write(dir.join("picture.png"), [0u8, 159, 146, 150]).unwrap();
    let out = run(&["validate"], &dir);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), String::new()),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn scoped_fixture(case: &str) -> PathBuf {
    repo().join("core/tests/fixtures/vault-scoped").join(case)
}

/// A red team's finding: a plan folder took as its vault any folder above
/// it with `.obsidian/`, whoever made it: another user of the machine who
/// made `/tmp/.obsidian` and `/tmp/.planvault/config.toml` had a run of
/// `/tmp/plan` start their servers. A vault above the folder must be the
/// user's own, as git trusts only a repository its user owns. (Giving a
/// folder to another user takes root: only run then.)
#[cfg(unix)]
#[test]
fn a_vault_above_a_plan_folder_that_another_user_made_is_not_taken() {
    if rustix::process::geteuid().as_raw() != 0 {
        #[allow(clippy::print_stderr)] // the notice is the point
        {
            eprintln!("SKIPPED (only root can make a folder another user's)");
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    common::copy_dir(&scoped_fixture("plan-in-a-big-vault"), &vault);
    let nobody = std::os::unix::fs::chown(vault.join(".obsidian"), Some(65534), None);
    nobody.unwrap();
    let out = run(&["validate"], &vault.join("plans/launch"));
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(!text.contains("edge-leaves-plan"), "{text}");
    assert!(text.contains("dangling-edge"), "its own vault now: {text}");
    assert!(
        err.contains("looks like a vault but belongs to another user"),
        "{err}"
    );
    std::os::unix::fs::chown(vault.join(".obsidian"), Some(0), None).unwrap();
    let out = run(&["validate"], &vault.join("plans/launch"));
    assert!(
        stdout(&out).contains("edge-leaves-plan"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_plan_folder_inside_a_vault_resolves_its_links_in_the_vault() {
    // The vault is found by its `.obsidian/` folder.
    let vault = scoped_fixture("plan-in-a-big-vault");
    let out = run(&["validate"], &vault.join("plans/launch"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "plans/launch/Review.md:6:15: error[edge-leaves-plan]: edge from `plans/launch/Review` leads to `Notes/ADR-001`, outside the plan's folder `plans/launch/`; a plan's edges stay in its folder\n"
    );
    // A namesake at the vault root comes first in Obsidian: said so, with
    // the link, in its own form, that means the plan's note.
    let vault = fixture("obsidian-order-01-root-path-beats-same-folder");
    let out = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(["validate", "--vault-root"])
        .arg(&vault)
        .arg(vault.join("plans"))
        .output()
        .unwrap();
    let text = stdout(&out);
    for line in [
        "plans/start.md:7:11: error[edge-leaves-plan]: edge from `plans/start` leads to `Send`, outside the plan's folder `plans/`; a plan's edges stay in its folder (Obsidian opens `Send` for [[Send]] before the plan's `plans/Send`: a note at the link's path from the vault root comes first; write [[plans/Send]])\n",
        "plans/start.md:8:15: error[edge-leaves-plan]: edge from `plans/start` leads to `Send`, outside the plan's folder `plans/`; a plan's edges stay in its folder (Obsidian opens `Send` for [send](Send.md) before the plan's `plans/Send`: a note at the link's path from the vault root comes first; write [Send](plans/Send.md))\n",
    ] {
        assert!(text.contains(line), "{text}");
    }
    // Given explicitly: `../Send` leaves `plans/launch`, `../other/Dup` too.
    let vault = fixture("obsidian-resolution");
    let out = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(["validate", "--vault-root"])
        .arg(&vault)
        .arg(vault.join("plans/launch"))
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("leads to `plans/Send`, outside the plan's folder `plans/launch/`"),
        "{text}"
    );
    assert!(text.contains("leads to `plans/other/Dup`"), "{text}");
    assert!(!text.contains("unreachable"), "{text}");
    // The vault itself, whole: templates and ignored folders are skipped.
    let out = run(&["validate"], &scoped_fixture("plan-in-a-big-vault"));
    let text = stdout(&out);
    assert!(
        !text.contains("Templates/")
            && !text.contains("Meta/")
            && !text.contains("Archive/")
            && !text.contains("Inbox"),
        "{text}"
    );
    assert!(
        text.contains("[[Nowhere]]"),
        "the ADR note is still a note of the whole vault: {text}"
    );
}

/// `validate --json` of each scoped fixture, kept beside it: its plan
/// folder (`folder.txt`, found by `.obsidian/` and given with
/// `--vault-root`) in `expected-cli.json`, the vault whole in
/// `expected-cli-whole.json`. The npm package's tests hold its `Vault` to
/// these same bytes. `PLANVAULT_BLESS=1` rewrites them.
#[test]
fn scoped_fixtures_json_is_kept_beside_them() {
    let root = repo().join("core/tests/fixtures/vault-scoped");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    for vault in cases {
        let folder = std::fs::read_to_string(vault.join("folder.txt")).unwrap();
        let plan = vault.join(folder.trim());
        let found = run(&["validate", "--json"], &plan);
        let given = Command::new(env!("CARGO_BIN_EXE_planvault"))
            .args(["validate", "--json", "--vault-root"])
            .arg(&vault)
            .arg(&plan)
            .output()
            .unwrap();
        assert_eq!(stdout(&found), stdout(&given), "{}", vault.display());
        let whole = run(&["validate", "--json"], &vault);
        for (name, out) in [
            ("expected-cli.json", &found),
            ("expected-cli-whole.json", &whole),
        ] {
            let path = vault.join(name);
            if std::env::var_os("PLANVAULT_BLESS").is_some() {
                std::fs::write(&path, stdout(out)).unwrap();
            }
            let expected = std::fs::read_to_string(&path).unwrap_or_default();
            assert_eq!(stdout(out), expected, "{}", path.display());
        }
    }
}

/// Regression: a note that holds U+FFFD as a character (pasted output of a
/// binary, as in public security vaults) was called "not UTF-8 text", an
/// error that made a sound plan unsound. Only bytes the reader could not
/// decode are.
#[test]
fn a_replacement_character_a_note_holds_is_text() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("start.md"),
        "---\ntype: start\n---\n# Start\n\nThe dump: `\u{fffd}@C\u{fffd}>==`\n\n## Next\n- [[end]]\n",
    )
    .unwrap();
    std::fs::write(root.join("end.md"), "# End \u{fffd}\n").unwrap();
    let out = run(&["validate"], root);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    // The same text with one byte that is not UTF-8 is an error, where it is.
    std::fs::write(root.join("end.md"), b"# End \xef\xbf\xbd \xe9\n").unwrap();
    let out = run(&["validate"], root);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("end.md:1:9: error[unreadable-note]: `end.md` is not UTF-8 text"),
        "{text}"
    );
}

#[test]
fn one_bad_file_never_sinks_the_vault() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
    std::fs::write(dir.path().join("elsewhere/far.md"), "# Far\n").unwrap();
    std::fs::write(
        root.join("start.md"),
        "---\ntype: start\n---\n# Start\n\n## Next\n- [[latin]]\n- [[missing]]\n",
    )
    .unwrap();
    std::fs::write(root.join("latin.md"), b"# Caf\xe9\n\n## Next\n- [[end]]\n").unwrap();
    std::fs::write(root.join("end.md"), "# End\n").unwrap();
    std::fs::write(root.join("sub/inner.md"), "# Inner\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink(root.join("nowhere.md"), root.join("ghost.md")).unwrap();
        symlink(root.join("loop-b.md"), root.join("loop-a.md")).unwrap();
        symlink(root.join("loop-a.md"), root.join("loop-b.md")).unwrap();
        symlink(dir.path().join("elsewhere"), root.join("linked")).unwrap();
        symlink(root.join("sub"), root.join("again")).unwrap();
        symlink(dir.path().join("elsewhere/far.md"), root.join("far.md")).unwrap();
        symlink(root.join("end.md"), root.join("end-alias.md")).unwrap();
        std::fs::create_dir_all(root.join(".obsidian/plugins/p")).unwrap();
        std::fs::write(root.join(".obsidian/plugins/p/data.json"), "{}").unwrap();
        symlink(
            root.join(".obsidian/plugins/p/data.json"),
            root.join("key.md"),
        )
        .unwrap();
        // A pipe named as a note would hold the read for ever.
        let made = Command::new("mkfifo").arg(root.join("pipe.md")).status();
        assert!(made.is_ok_and(|s| s.success()));
        // Nor would settings that are pipes (or devices: a symlink to
        // `/dev/zero` would be read until memory ran out).
        // A config that is a pipe held `validate` (found by a red-team pass).
        std::fs::create_dir_all(root.join(".planvault")).unwrap();
        for setting in [
            "CONFIG.md",
            ".planvaultignore",
            ".obsidian/templates.json",
            ".planvault/config.toml",
        ] {
            let made = Command::new("mkfifo").arg(root.join(setting)).status();
            assert!(made.is_ok_and(|s| s.success()));
        }
    }
    // Under coreutils' `timeout`, so a read held for ever fails the test
    // (exit 124).
    let out = match cfg!(target_os = "linux") {
        true => Command::new("timeout")
            .arg("60")
            .arg(env!("CARGO_BIN_EXE_planvault"))
            .arg("validate")
            .arg(&root)
            .output()
            .unwrap(),
        false => run(&["validate"], &root),
    };
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains("latin.md:1:6: error[unreadable-note]: `latin.md` is not UTF-8 text"),
        "{text}"
    );
    // The rest is still checked.
    assert!(
        text.contains("error[dangling-edge]: edge from `start` points at [[missing]]"),
        "{text}"
    );
    #[cfg(unix)]
    {
        assert!(
            text.contains(
                "ghost.md: error[unreadable-note]: `ghost.md` is a symlink that leads nowhere"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "loop-a.md: error[unreadable-note]: `loop-a.md` is a symlink that leads nowhere"
            ),
            "{text}"
        );
        assert!(text.contains("linked: warning[skipped-symlink]: `linked` is a symlink to a folder outside the vault"), "{text}");
        assert!(text.contains("again: warning[skipped-symlink]: `again` is a symlink to a folder inside the vault"), "{text}");
        assert!(text.contains("far.md: warning[skipped-symlink]: `far.md` is a symlink to a note outside the vault"), "{text}");
        assert!(
            text.contains(
                "pipe.md: error[unreadable-note]: `pipe.md` cannot be read: it is no regular file"
            ),
            "{text}"
        );
        // A symlinked note inside the vault is read.
        assert!(text.contains("`end-alias` cannot be reached"), "{text}");
    }
    let json = run(&["validate", "--json"], &root);
    let v: Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert!(v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["code"] == "unreadable-note" && d["file"] == "latin.md"));
}

/// A file past what planvault reads (a sparse file of 20 GiB here) is
/// refused by its size, unread: an error where it is one of the plan's
/// notes, only its path where it lies outside the plan's folder, and an
/// unreadable PLAN.md (exit 2).
#[test]
fn a_file_too_large_to_read_is_named_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    std::fs::create_dir_all(root.join("plans")).unwrap();
    std::fs::create_dir_all(root.join("archive")).unwrap();
    std::fs::write(
        root.join("plans/start.md"),
        "---\ntype: start\n---\n# Start\n\n## Next\n- [[end]]\n",
    )
    .unwrap();
    std::fs::write(root.join("plans/end.md"), "# End\n").unwrap();
    let sparse = |path: &Path| {
        let file = std::fs::File::create(path).unwrap();
        file.set_len(20 << 30).unwrap();
    };
    sparse(&root.join("archive/log.md"));
    let out = run(&["validate"], &root);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains("archive/log.md:1:1: error[unreadable-note]: `archive/log.md` holds 20 GiB, more than the 64 MiB planvault reads of a file: make it smaller, or move it out of the plan"),
        "{text}"
    );
    // Outside the plan's folder only its path counts.
    let out = run(&["validate"], &root.join("plans"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let plan_md = dir.path().join("PLAN.md");
    sparse(&plan_md);
    let out = run(&["validate"], &plan_md);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("PLAN.md: it holds 20 GiB, more than the 64 MiB planvault reads of a file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_single_vault_note_is_not_read_as_a_plan_md() {
    let note = fixture("link-forms").join("start.md");
    let out = run(&["validate"], &note);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("is one note of a vault (it has a `## Next` list of [[links]]), not a PLAN.md; validate the vault's folder: planvault validate"), "{err}");
    let knobs = fixture("obsidian-resolution").join("plans/launch/start.md");
    let out = run(&["validate"], &knobs);
    assert_eq!(out.status.code(), Some(2));
    // `--format plan-md` still reads it as asked.
    let out = run(&["validate", "--format", "plan-md"], &note);
    assert_ne!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// Titles and links holding terminal escape sequences (clear screen, an
/// OSC 52 clipboard write) print escaped in the human output, exact in the
/// JSON one.
#[test]
fn escape_sequences_in_a_plan_do_not_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = "\u{1b}[2J\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\u{7}";
    std::fs::write(
        dir.path().join("start.md"),
        format!(
            "---\ntype: start\n---\n# Start{hostile}\n\n## Next\n- [[gone{hostile}]]\n- [[end]]\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.path().join("end.md"), "# End\n").unwrap();
    let escaped = "\\u{1b}[2J\\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\\u{7}";
    for args in [&["validate"][..], &["graph", "--ascii"][..]] {
        let out = run(args, dir.path());
        let (printed, errors) = (stdout(&out), stderr(&out));
        for text in [&printed, &errors] {
            assert!(!text.contains(['\u{1b}', '\u{7}']), "{args:?}: {text:?}");
        }
        assert!(
            printed.contains(escaped) || errors.contains(escaped),
            "{args:?}: {printed:?} {errors:?}"
        );
    }
    let out = run(&["validate", "--json"], dir.path());
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(report.to_string().contains("\\u001b[2J"), "{report}");
}

#[test]
fn silverbullet_s_reading_is_checked_when_asked() {
    let vault = repo().join("core/tests/fixtures/silverbullet/plan-in-a-folder/vault");
    let plan = vault.join("plans/launch");
    let root = vault.to_str().unwrap();
    let codes = |out: &Output| -> Vec<String> {
        let v: Value = serde_json::from_str(&stdout(out)).unwrap();
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap().to_string())
            .collect()
    };
    let plain = run(&["validate", "--json", "--vault-root", root], &plan);
    // `[[Draft#Edits]]` opens the root's `Draft` in both (a path from the
    // root comes first in Obsidian): it leaves the plan, whose `Draft` no
    // edge reaches.
    assert_eq!(
        codes(&plain),
        ["unreachable", "edge-leaves-plan", "edge-leaves-plan"]
    );
    let asked = run(
        &["validate", "--silverbullet", "--json", "--vault-root", root],
        &plan,
    );
    let v: Value = serde_json::from_str(&stdout(&asked)).unwrap();
    let warned: Vec<&Value> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "silverbullet-reads-otherwise")
        .collect();
    assert_eq!(warned.len(), 3, "{}", stdout(&asked));
    let send = warned
        .iter()
        .find(|d| d["line"] == 7)
        .expect("the edge to Send");
    assert_eq!(send["severity"], "warning");
    assert_eq!(send["file"], "plans/launch/Review.md");
    assert_eq!(send["column_utf16"], 15);
    assert!(send["message"]
        .as_str()
        .unwrap()
        .contains("write `[[plans/launch/Send|send it]]`"));
    // Warnings alone do not fail a plan: the exit code is the plain one's.
    assert_eq!(asked.status.code(), plain.status.code());
}

/// In a SilverBullet space (its root's `CONFIG.md` has a `space-lua`
/// block) the check is on unasked, and a plan folder finds the space's
/// root as it finds an Obsidian vault's.
#[test]
fn a_silverbullet_space_is_checked_unasked() {
    let space = tempfile::tempdir().unwrap();
    let fixture = repo().join("core/tests/fixtures/silverbullet/plan-in-a-folder/vault");
    common::copy_dir(&fixture, space.path());
    let plan = space.path().join("plans/launch");
    let warned = |out: &Output| -> usize {
        let v: Value = serde_json::from_str(&stdout(out)).unwrap();
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == "silverbullet-reads-otherwise")
            .count()
    };
    // A folder of notes alone: PATH is the vault, no check.
    let plain = run(&["validate", "--json"], &plan);
    assert_eq!(warned(&plain), 0, "{}", stdout(&plain));
    let config = "# Config\n\n```space-lua\n-- mine\n```\n";
    std::fs::write(space.path().join("CONFIG.md"), config).unwrap();
    let out = run(&["validate", "--json"], &plan);
    assert_eq!(warned(&out), 3, "{}", stdout(&out));
    // The links resolve in the whole space, as with `--vault-root`.
    let rooted = run(
        &[
            "validate",
            "--json",
            "--vault-root",
            space.path().to_str().unwrap(),
        ],
        &plan,
    );
    assert_eq!(stdout(&out), stdout(&rooted));
}

/// A reader that stops early (`planvault validate --json | head`) ends the
/// output, not the program with a panic; the exit code still says what
/// was found.
#[test]
fn a_closed_stdout_ends_the_output_without_a_panic() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    // Enough diagnostics to fill a pipe's buffer many times over.
    for i in 0..3000 {
        std::fs::write(
            dir.path().join(format!("note-{i}.md")),
            "# Note\n\n## Next\n- [[nowhere]]\n",
        )
        .unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(["validate", "--json"])
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}
