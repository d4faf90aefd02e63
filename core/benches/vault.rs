//! Load + validate a generated 10,000-note vault (about 1.5 KB a note:
//! realistic frontmatter, prose with wikilinks, a `## Next` list), the
//! issue's target being under 50 ms natively.
//!
//! `cargo bench -p planvault-core --bench vault`
//!
//! `hostile_frontmatter` is one note built to be slow: deeply nested flow
//! collections, refused at the depth limit, and blocks at the limit, which
//! the parser reads; each time must grow linearly with the size.

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

/// A vault of `n` notes where every name recurs in each of `n / 100`
/// folders (`p000/n00` … `p099/n99`): bare links resolve to the linking
/// note's own folder, each folder's last note goes on with a relative
/// `[[../pNNN/n00]]`, and every tenth note loops back with `[[./nKK]]`.
pub fn generate_duplicates(n: usize) -> BTreeMap<String, String> {
    let folders = n.div_ceil(100);
    (0..n)
        .map(|i| {
            let (f, k) = (i / 100, i % 100);
            let mut text = String::with_capacity(600);
            text.push_str(if i == 0 {
                "---\ntype: start\n"
            } else {
                "---\ntype: step\n"
            });
            text.push_str("status: pending\ntags: [plan]\n---\n");
            text.push_str(&format!("# Part {f} step {k}\n\n"));
            text.push_str(PROSE[i % PROSE.len()]);
            text.push_str(&format!(
                " See [[n{:02}]] and [[../p{:03}/n00]].\n\n",
                (k + 50) % 100,
                (f + 1) % folders
            ));
            if i + 1 < n {
                text.push_str("## Next\n");
                if k == 99 {
                    text.push_str(&format!("- [[../p{:03}/n00]]\n", f + 1));
                } else if k % 10 == 9 {
                    text.push_str(&format!("- needs revision -> [[./n{:02}]]\n", k - 5));
                    text.push_str(&format!("- approved -> [[n{:02}]]\n", k + 1));
                } else {
                    text.push_str(&format!("- [[n{:02}]]\n", k + 1));
                }
            }
            (format!("p{f:03}/n{k:02}.md"), text)
        })
        .collect()
}

/// 10,000 notes with a hundred of each name and relative links: Obsidian's
/// resolution rules (own folder, then fewest folders, then relative paths)
/// on the hot path.
#[divan::bench(sample_count = 20)]
fn load_and_validate_10k_duplicates(bencher: divan::Bencher<'_, '_>) {
    let source = PlanSource::Vault(generate_duplicates(10_000));
    bencher.bench_local(|| {
        let checked = check(divan::black_box(&source));
        // Every link resolves as Obsidian would: no ambiguity, nothing dangling.
        assert!(checked.diagnostics.is_empty());
        checked
    });
}

#[divan::bench(sample_count = 20)]
fn load_only_10k(bencher: divan::Bencher<'_, '_>) {
    let files = generate(10_000);
    bencher.bench_local(|| vault::load(divan::black_box(&files)));
}

/// One note whose frontmatter holds `kind` scaled to `n`.
fn hostile_note(kind: &str, n: usize) -> BTreeMap<String, String> {
    let value = match kind {
        // `n` nested brackets: refused at the 129th.
        "nested" => format!("{}{}", "[".repeat(n), "]".repeat(n)),
        // `n` brackets, one a line: refused at the 129th line.
        "nested_lines" => "[\n".repeat(n),
        // `n` / 256 lists nested 127 deep, read by the parser.
        _ => format!(
            "[{}]",
            vec![format!("{}{}", "[".repeat(126), "]".repeat(126)); n / 256].join(", ")
        ),
    };
    BTreeMap::from([(
        "n.md".to_string(),
        format!("---\ntype: start\nv: {value}\n---\n# N\n"),
    )])
}

#[divan::bench(
    args = ["nested", "nested_lines", "at_the_limit"],
    consts = [50_000, 100_000, 200_000],
    sample_count = 10
)]
fn hostile_frontmatter<const N: usize>(bencher: divan::Bencher<'_, '_>, kind: &str) {
    let source = PlanSource::Vault(hostile_note(kind, N));
    bencher.bench_local(|| check(divan::black_box(&source)));
}
