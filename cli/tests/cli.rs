//! The `planvault` binary end to end: exit codes, compiler-style and JSON
//! output, `--quiet`, and the graph drawings, on the bundled example vault
//! and the core's fixture vaults.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
        "a.md:8:11: error[dangling-edge]: edge from `a` points at [[c-missing]], which is no note in the vault\n"
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
        "draft — Draft the email  [start]\n└─▶ review — Review the draft\n    ├─ approved ─▶ send — Send the email  [end]\n    └─ needs revision ─▶ ↺ draft\n"
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
