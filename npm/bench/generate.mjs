// The generated 10,000-note vault of core/benches/vault.rs, note for note:
// stages of ten, each note leading to the next, every tenth looping back for
// revision with an exit; ~1.6 KB a note of realistic frontmatter and prose.
const PROSE = [
  "Read the latest material carefully and write down what changed since the last visit.",
  "Keep the tone friendly and specific; the audience is busy and reads on a phone.",
  "When something is unclear, say so plainly instead of guessing what was meant.",
  "Cite the source of every number, and prefer the primary document over summaries.",
  "The output of this step is a short list that the next step can act on directly.",
  "If a tool call fails, retry once with a smaller request before reporting the failure.",
];

const MASK = (1n << 64n) - 1n;
const pad = (value, width) => String(value).padStart(width, "0");

/** path → note text, deterministic (xorshift64 with the Rust bench's seed). */
export function generate(n) {
  const id = (i) => `stage-${pad(Math.floor(i / 100), 3)}/step-${pad(i, 5)}`;
  let seed = 0x2545f491n;
  const nextRandom = () => {
    seed ^= (seed << 13n) & MASK;
    seed ^= seed >> 7n;
    seed ^= (seed << 17n) & MASK;
    return seed;
  };
  const files = {};
  for (let i = 0; i < n; i++) {
    let text = "---\n";
    text += i === 0 ? "type: start\n" : "type: step\n";
    text += "status: pending\n";
    text += "tools: [fetch_url, search, write_file]\n";
    text += ["role: writer\n", "role: review\n", "role: research\n"][i % 3];
    text += "max_visits: 3\n";
    text += "tags: [plan, generated]\ncreated: 2026-11-30\n---\n";
    text += `# Step ${i}: work on part ${nextRandom() % 1000n}\n\n`;
    for (let p = 0; p < 4; p++) {
      for (let s = 0; s < 3; s++) text += PROSE[(i + p + s) % PROSE.length] + " ";
      if (p === 1) text += `See [[${id(Number(nextRandom() % BigInt(n)))}]] for context. `;
      text += "\n\n";
    }
    text += "- check the inputs\n- do the work\n- record the result\n\n";
    if (i + 1 < n) {
      text += "## Next\n";
      if (i % 10 === 9) {
        text += `- needs revision -> [[step-${pad(i - 5, 5)}]]\n`;
        text += `- approved -> [[${id(i + 1)}|continue]]\n`;
      } else {
        text += `- [[step-${pad(i + 1, 5)}]]\n`;
      }
    }
    files[`${id(i)}.md`] = text;
  }
  return files;
}
