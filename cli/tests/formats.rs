//! `planvault validate` and `planvault graph` on a PLAN.md file and on
//! generated JSON plans, end to end through the built binary: the same
//! commands, outputs and exit codes (0 sound, 1 unsound, 2 unreadable) as a
//! vault.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../static/examples")
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(args)
        .output()
        .expect("planvault runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Write a plan under a scratch folder of its own: tests run in parallel, and
/// two of them rewriting one shared file let a reader see it half-written.
fn scratch(name: &str, text: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("formats-cli")
        .join(format!("{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

fn example(rel: &str) -> String {
    examples().join(rel).to_string_lossy().into_owned()
}

const BROKEN_PLAN: &str = "- [ ] Build\n- [ ] (after: 1) Retry\n      @on fail -> 1\n- [ ] Step 3\n      @on fail -> 99\n      @on migrated=false -> 1\n";

#[test]
fn the_migration_example_validates_clean() {
    let out = run(&["validate", &example("PLAN.md")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn an_unsound_plan_md_exits_1_with_compiler_style_lines() {
    let path = scratch("PLAN.md", BROKEN_PLAN);
    let out = run(&["validate", &path]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "PLAN.md:1:1: error[cycle]: Cycle: item 1 (\"Build\") -> item 2 (\"Retry\") -> item 1 (\"Build\"). The run could never finish, so nothing was dispatched.\n\
         PLAN.md:5:7: error[dangling-edge]: item 3 (\"Step 3\") routes to item 99, which does not exist (`@on fail`).\n\
         PLAN.md:6:7: warning[unroutable-signal]: item 3 (\"Step 3\") routes to item 1 on signal \"migrated\" (`@on migrated=false`), which no item emits — the route can never be taken.\n"
    );
}

#[test]
fn validate_json_carries_items_target_and_key() {
    let path = scratch("PLAN.md", BROKEN_PLAN);
    let out = run(&["validate", "--json", &path]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let d = report["diagnostics"].as_array().unwrap();
    assert_eq!(d.len(), 3);
    assert_eq!(d[0]["code"], "cycle");
    assert_eq!(d[0]["items"], serde_json::json!([1, 2]));
    assert_eq!(d[0]["nodes"], serde_json::json!(["1", "2"]));
    assert_eq!(d[1]["code"], "dangling-edge");
    assert_eq!(
        (d[1]["line"].as_u64(), d[1]["column"].as_u64()),
        (Some(5), Some(7))
    );
    assert_eq!(d[1]["target"], "99");
    assert_eq!(d[2]["severity"], "warning");
    assert_eq!(d[2]["key"], "migrated");
}

#[test]
fn graph_json_includes_the_diagnostics_validate_prints() {
    let path = scratch("PLAN.md", BROKEN_PLAN);
    let out = run(&["graph", "--json", &path]);
    assert_eq!(out.status.code(), Some(1));
    let graph: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let report: Value =
        serde_json::from_str(&stdout(&run(&["validate", "--json", &path]))).unwrap();
    assert_eq!(graph["diagnostics"], report["diagnostics"]);
    assert_eq!(graph["diagnostics"].as_array().map(Vec::len), Some(3));
    let keys: Vec<&str> = graph
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert!(
        keys.contains(&"nodes") && keys.contains(&"edges"),
        "{keys:?}"
    );
    // A sound plan says so with an empty list.
    let clean: Value =
        serde_json::from_str(&stdout(&run(&["graph", "--json", &example("PLAN.md")]))).unwrap();
    assert_eq!(clean["diagnostics"], serde_json::json!([]));
}

/// A plan whose only diagnostics are warnings passes: exit 0, the warning
/// printed (the `graph --quiet` pre-flight passes it too).
#[test]
fn warnings_alone_pass() {
    let path = scratch(
        "PLAN.md",
        "@needs early\n- [ ] Build\n      @on ready=true -> 2\n- [ ] Ship\n",
    );
    let out = run(&["validate", &path]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "PLAN.md:1:1: warning[orphan-marker]: `@needs early` comes before the first item, so it belongs to no item and is ignored.\n\
         PLAN.md:3:7: warning[unroutable-signal]: item 1 (\"Build\") routes to item 2 on signal \"ready\" (`@on ready=true`), which no item emits — the route can never be taken.\n"
    );
    assert_eq!(run(&["graph", "--quiet", &path]).status.code(), Some(0));
    // `leopold graph` fails on a warning: `--strict` does too.
    for command in ["graph", "validate"] {
        let out = run(&[command, "--quiet", "--strict", &path]);
        assert_eq!(out.status.code(), Some(1), "{command}");
    }
    let sound = scratch(
        "PLAN.md",
        "- [ ] Build
- [ ] (after: 1) Ship
",
    );
    assert_eq!(
        run(&["graph", "--quiet", "--strict", &sound]).status.code(),
        Some(0)
    );
    let empty = scratch("PLAN.md", "# Plan\n\nNothing to do yet.\n");
    let out = run(&["validate", &empty]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "PLAN.md: warning[empty-plan]: the plan has no items: no line is a `- [ ]` or `- [x]` checkbox.\n"
    );
}

#[test]
fn the_ascii_tree_shows_needs_and_emits() {
    let out = run(&["graph", &example("PLAN.md")]);
    let tree = stdout(&out);
    assert!(
        tree.contains("[emits migrated=true, migrated=false]"),
        "{tree}"
    );
    assert!(tree.contains("[needs migrated]"), "{tree}");
}

#[test]
fn quiet_prints_nothing_and_keeps_the_exit_code() {
    let path = scratch("PLAN.md", BROKEN_PLAN);
    for cmd in ["validate", "graph"] {
        let out = run(&[cmd, "--quiet", &path]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{cmd}");
    }
    assert_eq!(
        run(&["graph", "--quiet", &example("PLAN.md")])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn graph_json_for_plan_md_has_the_issue_shape() {
    let out = run(&["graph", "--json", &example("PLAN.md")]);
    assert_eq!(out.status.code(), Some(0));
    let graph: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(graph["format"], "plan-md");
    let node = &graph["nodes"][1];
    let keys: Vec<&str> = node
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = vec![
        "id",
        "title",
        "kind",
        "label",
        "command",
        "status",
        "scenarios",
        "emits",
        "needs",
    ];
    expected.sort();
    let mut keys_sorted = keys.clone();
    keys_sorted.sort();
    assert_eq!(keys_sorted, expected);
    assert_eq!(
        (
            node["id"].as_u64(),
            node["kind"].as_str(),
            node["command"].as_str()
        ),
        (Some(2), Some("tool"), Some("make migrate"))
    );
    assert_eq!(graph["nodes"][3]["label"], "release");
    assert_eq!(graph["nodes"][0]["status"], "pending");
    let routes: Vec<(u64, u64, &str)> = graph["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "route")
        .map(|e| {
            (
                e["from"].as_u64().unwrap(),
                e["to"].as_u64().unwrap(),
                e["condition"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        routes,
        vec![
            (2, 3, "exit=0"),
            (2, 5, "exit!=0"),
            (3, 5, "migrated=false")
        ]
    );
}

#[test]
fn graph_mermaid_ascii_and_canvas_for_plan_md() {
    let path = example("PLAN.md");
    let mermaid = stdout(&run(&["graph", "--mermaid", &path]));
    assert!(mermaid.starts_with("flowchart TD\n"));
    for line in [
        "n2[[\"2 · make migrate\"]]",
        "n2 -. \"exit=0\" .-> n3",
        "n3 --> n4",
        "n7{\"7 · Decide whether this ships today\"}",
    ] {
        assert!(mermaid.contains(line), "{line} in\n{mermaid}");
    }
    let ascii = stdout(&run(&["graph", "--ascii", &path]));
    assert!(
        ascii.contains(
            "2. [ ] tool      make migrate  (after 1)\n   ├─ exit=0 → 3\n   └─ exit!=0 → 5\n"
        ),
        "{ascii}"
    );
    let canvas: Value = serde_json::from_str(&stdout(&run(&["graph", "--canvas", &path]))).unwrap();
    assert_eq!(canvas["nodes"].as_array().unwrap().len(), 7);
    assert_eq!(canvas["edges"].as_array().unwrap().len(), 7);
}

#[test]
fn graph_on_an_unsound_plan_prints_the_drawing_and_diagnostics_on_stderr() {
    let path = scratch("PLAN.md", BROKEN_PLAN);
    let out = run(&["graph", "--mermaid", &path]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("n3 -. \"fail\" .-> missing1[\"99 · does not exist\"]"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("error[dangling-edge]"));
}

#[test]
fn generated_examples_validate_and_draw() {
    for rel in ["generated/flat-plan.json", "generated/dag-plan.json"] {
        let path = example(rel);
        assert_eq!(run(&["validate", &path]).status.code(), Some(0), "{rel}");
        let out = run(&["graph", "--json", &path]);
        assert_eq!(out.status.code(), Some(0));
        let graph: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(graph["format"], "generated");
        assert_eq!(graph["nodes"].as_array().unwrap().len(), 4);
        assert_eq!(graph["waves"].as_array().unwrap().len(), 3, "{rel}");
    }
    let dag = stdout(&run(&[
        "graph",
        "--ascii",
        &example("generated/dag-plan.json"),
    ]));
    assert!(
        dag.starts_with("wave 1\n  fetch (issues.list)\n  owners (team.roster)\nwave 2\n"),
        "{dag}"
    );
    let flat = stdout(&run(&[
        "graph",
        "--json",
        &example("generated/flat-plan.json"),
    ]));
    let graph: Value = serde_json::from_str(&flat).unwrap();
    assert_eq!(
        graph["grant"],
        serde_json::json!(["doc.write", "http.get", "mail.send", "stats.summarize"])
    );
}

#[test]
fn refused_generated_plans_exit_1_naming_the_rule() {
    let bad = scratch("bad.json", "[{\"name\": \"a\", \"tool\": \"t\", \"after\": [\"ghost\"]}, {\"name\": \"a\", \"tool\": \"t\"}]");
    let out = run(&["validate", &bad]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "bad.json:1:38: error[unknown-dependency]: step \"a\" depends on \"ghost\", which is not a step of this plan\n\
         bad.json:1:50: error[duplicate-id]: step id \"a\" is declared more than once\n"
    );
    let broken = scratch("broken.json", "{\"nodes\": [\n  {\"id\": \"a\",}\n]}");
    let out = run(&["validate", "--json", &broken]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let d = &report["diagnostics"][0];
    assert_eq!(
        (d["code"].as_str(), d["line"].as_u64(), d["column"].as_u64()),
        (Some("malformed-plan"), Some(2), Some(14))
    );
}

#[test]
fn format_flag_overrides_detection() {
    let md_as_txt = scratch("plan.txt", "- [ ] One\n- [ ] (after: 1) Two\n");
    assert_eq!(
        run(&["validate", &md_as_txt]).status.code(),
        Some(0),
        "any non-json file reads as PLAN.md"
    );
    let json_as_plan = scratch("steps.plan", "[{\"name\": \"a\", \"tool\": \"t\"}]");
    let out = run(&["graph", "--json", "--format", "json", &json_as_plan]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("\"format\": \"generated\""));
    let out = run(&["graph", "--json", "--format", "plan-md", &md_as_txt]);
    assert!(stdout(&out).contains("\"format\": \"plan-md\""));
}

#[test]
fn unreadable_paths_exit_2() {
    for args in [
        vec!["validate", "/nonexistent/PLAN.md"],
        vec!["graph", "/nonexistent/plan.json"],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    let not_utf8 = Path::new(env!("CARGO_TARGET_TMPDIR")).join("formats-cli/latin1.md");
    std::fs::create_dir_all(not_utf8.parent().unwrap()).unwrap();
    std::fs::write(&not_utf8, b"- [ ] caf\xe9\n").unwrap();
    assert_eq!(
        run(&["validate", not_utf8.to_str().unwrap()]).status.code(),
        Some(2)
    );
}

#[test]
fn allow_tool_narrows_what_a_generated_plan_may_use() {
    let path = example("generated/flat-plan.json");
    let allowed = [
        "--allow-tool",
        "http.get",
        "--allow-tool",
        "stats.summarize",
        "--allow-tool",
        "doc.write",
    ];
    let out = run(&[&["validate"][..], &allowed, &[&path]].concat());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "flat-plan.json:4:3: error[tool-not-permitted]: step \"notify\" uses tool \"mail.send\", which the host does not permit\n"
    );
    let everything = [&allowed[..], &["--allow-tool", "mail.send"]].concat();
    assert_eq!(
        run(&[&["validate"][..], &everything, &[&path]].concat())
            .status
            .code(),
        Some(0)
    );
}
