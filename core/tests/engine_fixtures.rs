//! Data-driven engine runs: each folder under `tests/fixtures/engine/` holds a
//! plan (`vault/`, `PLAN.md` or `plan.json`), the scripted answers
//! (`script.json`) and, beside them, the expected run (`expected.snap`, an
//! insta snapshot: the trace as `trace.md` would hold it, the requests made,
//! how it finished). `INSTA_UPDATE=always cargo test -p planvault-core --test
//! integration engine_fixtures::` rewrites the snapshots; review the diff.

use planvault_core::engine::trace::trace_header;
use planvault_core::engine::{
    drive, Answer, Autonomy, Effect, Engine, Event, FailureMode, Journal, RequestBody, RunConfig,
};
use planvault_core::{check, generated, PlanSource};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    query: String,
    #[serde(default)]
    autonomy: Option<Autonomy>,
    #[serde(default)]
    failure_mode: Option<FailureMode>,
    #[serde(default)]
    max_steps: Option<u32>,
    /// Request id → answer. A work request without one gets
    /// `output of <id>` and `STATUS: done`.
    answers: BTreeMap<String, Answer>,
}

fn read_dir_md(root: &Path, dir: &Path, files: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            read_dir_md(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "md") {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            files.insert(rel, std::fs::read_to_string(&path).unwrap());
        }
    }
}

fn source(case: &Path) -> PlanSource {
    if case.join("vault").is_dir() {
        let mut files = BTreeMap::new();
        read_dir_md(&case.join("vault"), &case.join("vault"), &mut files);
        PlanSource::Vault(files)
    } else if case.join("PLAN.md").exists() {
        PlanSource::PlanMd {
            file: "PLAN.md".into(),
            text: std::fs::read_to_string(case.join("PLAN.md")).unwrap(),
        }
    } else {
        PlanSource::Generated {
            file: "plan.json".into(),
            text: std::fs::read_to_string(case.join("plan.json")).unwrap(),
            options: generated::Options::default(),
        }
    }
}

fn run_case(case: &Path) -> String {
    let script: Script =
        serde_json::from_str(&std::fs::read_to_string(case.join("script.json")).unwrap()).unwrap();
    let source = source(case);
    let checked = check(&source);
    assert!(
        !checked.has_errors(),
        "{}: {:?}",
        case.display(),
        checked.diagnostics
    );
    let defaults = RunConfig::default();
    let config = RunConfig {
        query: script.query.clone(),
        autonomy: script.autonomy.unwrap_or(defaults.autonomy),
        failure_mode: script.failure_mode.unwrap_or(defaults.failure_mode),
        max_steps: script.max_steps.unwrap_or(defaults.max_steps),
        ..defaults
    };
    let mut engine = Engine::new(checked.plan, config, &Journal::new()).unwrap();
    if let PlanSource::PlanMd { text, .. } = &source {
        engine.set_plan_text(text.clone());
    }
    let mut asked = Vec::new();
    let effects = drive(&mut engine, |r| {
        asked.push(r.id.clone());
        let answer = match (script.answers.get(&r.id), &r.body) {
            (Some(a), _) => a.clone(),
            (None, RequestBody::Work { .. }) => Answer::Work {
                output: format!("output of {}\nSTATUS: done", r.id),
            },
            (None, RequestBody::Human { .. }) => return Event::Deferred { id: r.id.clone() },
            (None, other) => panic!(
                "{}: no answer scripted for {} ({other:?})",
                case.display(),
                r.id
            ),
        };
        Event::Answered {
            id: r.id.clone(),
            answer,
        }
    });
    let mut out = trace_header(&script.query);
    let mut finish = String::new();
    for effect in &effects {
        match effect {
            Effect::Trace(entry) => out.push_str(&entry.to_markdown()),
            Effect::Finish(f) => {
                finish = format!(
                    "finish: {}\nanswer: {}\n",
                    f.reason.describe(),
                    f.answer.as_deref().unwrap_or("(none)").replace('\n', "\\n")
                );
            }
            _ => {}
        }
    }
    out.push_str("\n---\n\nrequests:\n");
    for id in asked {
        out.push_str(&format!("- {id}\n"));
    }
    out.push_str(&finish);
    out
}

#[test]
fn every_fixture_runs_as_expected() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engine");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(!cases.is_empty());
    for case in &cases {
        let actual = run_case(case);
        insta::with_settings!({
            snapshot_path => case.clone(),
            prepend_module_to_snapshot => false,
            description => case.file_name().unwrap().to_string_lossy().to_string(),
            omit_expression => true,
        }, {
            insta::assert_snapshot!("expected", actual);
        });
    }
}
