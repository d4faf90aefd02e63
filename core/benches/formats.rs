//! Parse + validate the single-file formats: a 10,000-item PLAN.md using the
//! whole grammar, a generated DAG at the default ceiling (32 steps), and a
//! 10,000-step generated DAG with raised limits.
//!
//! `cargo bench -p planvault-core --bench formats`

use planvault_core::{check, generated, PlanSource};

fn main() {
    divan::main();
}

/// Items in groups of ten: a tool step routing on `exit`, a verify step
/// emitting a signal a later item needs, scenarios and a gate with a label.
fn plan_md(items: usize) -> String {
    let mut text = String::from("# Plan\n\n");
    for i in 1..=items {
        let after = if i > 1 {
            format!("(after: {}) ", i - 1)
        } else {
            String::new()
        };
        match i % 10 {
            1 => {
                text.push_str(&format!("- [ ] {after}@tool build: `make test SHARD={i}`\n"));
                if i + 2 <= items {
                    text.push_str(&format!("      @on exit=0 -> {}\n      @on exit!=0 -> {}\n", i + 1, i + 2));
                }
            }
            2 => text.push_str(&format!(
                "- [ ] {after}@verify Prove shard {i} holds against the migrated schema\n      @emit checked{i}=true\n      @emit checked{i}=false\n"
            )),
            5 => text.push_str(&format!(
                "- [ ] {after}@gate release Review the staged diff of part {i}\n      @needs checked{}\n",
                i - 3
            )),
            _ => text.push_str(&format!(
                "- [ ] {after}Write part {i} of the feature — done when: its tests pass\n      @scenario a fresh checkout → `make` → part {i} builds\n"
            )),
        }
    }
    text
}

fn dag(steps: usize) -> String {
    let nodes: Vec<serde_json::Value> = (0..steps)
        .map(|i| {
            let deps: Vec<String> = (i.saturating_sub(2)..i).map(|d| format!("s{d}")).collect();
            let args = match deps.first() {
                Some(d) => serde_json::json!({"input": {"$from": format!("{d}.out.rows")}, "limit": 10}),
                None => serde_json::json!({"query": "open issues"}),
            };
            serde_json::json!({"id": format!("s{i}"), "capability": "tool", "args": args, "dependsOn": deps})
        })
        .collect();
    serde_json::json!({"goal": "bench", "nodes": nodes}).to_string()
}

#[divan::bench]
fn plan_md_10000_items(bencher: divan::Bencher<'_, '_>) {
    let text = plan_md(10_000);
    bencher.bench(|| {
        let checked = check(&PlanSource::PlanMd {
            file: "PLAN.md".into(),
            text: text.clone(),
        });
        assert!(checked.diagnostics.is_empty());
        checked
    });
}

#[divan::bench]
fn generated_dag_32_steps(bencher: divan::Bencher<'_, '_>) {
    let text = dag(32);
    bencher.bench(|| {
        let source = PlanSource::Generated {
            file: "plan.json".into(),
            text: text.clone(),
            options: generated::Options::default(),
        };
        let checked = check(&source);
        assert!(checked.diagnostics.is_empty());
        checked
    });
}

#[divan::bench]
fn generated_dag_10000_steps(bencher: divan::Bencher<'_, '_>) {
    let text = dag(10_000);
    let mut options = generated::Options::default();
    options.limits.max_nodes = 10_000;
    bencher.bench(|| {
        let source = PlanSource::Generated {
            file: "plan.json".into(),
            text: text.clone(),
            options: options.clone(),
        };
        let checked = check(&source);
        assert!(checked.diagnostics.is_empty());
        checked
    });
}
