//! Load + validate a generated 10,000-note vault (about 1.5 KB a note:
//! realistic frontmatter, prose with wikilinks, a `## Next` list), the
//! issue's target being under 50 ms natively.
//!
//! `cargo bench -p planvault-core --bench vault`

use planvault_core::{check, vault, PlanSource};
use std::collections::BTreeMap;

// Allocation counts per iteration beside the times (divan's `alloc:` rows):
// the loader's malloc/free is a third of its time.
#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    divan::main();
}

const PROSE: [&str; 6] = [
    "Read the latest material carefully and write down what changed since the last visit.",
    "Keep the tone friendly and specific; the audience is busy and reads on a phone.",
    "When something is unclear, say so plainly instead of guessing what was meant.",
    "Cite the source of every number, and prefer the primary document over summaries.",
    "The output of this step is a short list that the next step can act on directly.",
    "If a tool call fails, retry once with a smaller request before reporting the failure.",
];

/// A vault of `n` notes in stages of ten: each note leads on to the next
/// stage, every tenth loops back for revision with an exit.
pub fn generate(n: usize) -> BTreeMap<String, String> {
    let id = |i: usize| format!("stage-{:03}/step-{i:05}", i / 100);
    let mut seed = 0x2545_f491_u64;
    let mut next_random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    (0..n)
        .map(|i| {
            let mut text = String::with_capacity(1700);
            text.push_str("---\n");
            text.push_str(if i == 0 {
                "type: start\n"
            } else {
                "type: step\n"
            });
            text.push_str("status: pending\n");
            text.push_str("tools: [fetch_url, search, write_file]\n");
            text.push_str(["role: writer\n", "role: review\n", "role: research\n"][i % 3]);
            text.push_str("max_visits: 3\n");
            text.push_str("tags: [plan, generated]\ncreated: 2026-11-30\n---\n");
            text.push_str(&format!(
                "# Step {i}: work on part {}\n\n",
                next_random() % 1000
            ));
            for p in 0..4 {
                for s in 0..3 {
                    text.push_str(PROSE[(i + p + s) % PROSE.len()]);
                    text.push(' ');
                }
                if p == 1 {
                    text.push_str(&format!(
                        "See [[{}]] for context. ",
                        id(next_random() as usize % n)
                    ));
                }
                text.push_str("\n\n");
            }
            text.push_str("- check the inputs\n- do the work\n- record the result\n\n");
            if i + 1 < n {
                text.push_str("## Next\n");
                if i % 10 == 9 {
                    text.push_str(&format!("- needs revision -> [[step-{:05}]]\n", i - 5));
                    text.push_str(&format!("- approved -> [[{}|continue]]\n", id(i + 1)));
                } else {
                    text.push_str(&format!("- [[step-{:05}]]\n", i + 1));
                }
            }
            (format!("{}.md", id(i)), text)
        })
        .collect()
}

#[divan::bench(sample_count = 20)]
fn load_and_validate_10k(bencher: divan::Bencher<'_, '_>) {
    let files = generate(10_000);
    let source = PlanSource::Vault(files);
    bencher.bench_local(|| {
        let checked = check(divan::black_box(&source));
        assert!(checked.diagnostics.is_empty());
        checked
    });
}

#[divan::bench(sample_count = 20)]
fn load_only_10k(bencher: divan::Bencher<'_, '_>) {
    let files = generate(10_000);
    bencher.bench_local(|| vault::load(divan::black_box(&files)));
}
