// The way a plugin validates a vault in plain JavaScript today: gray-matter
// for the frontmatter, regular expressions for the title and the `## Next`
// links, graphology for the graph (its strongly connected components recurse,
// hence `node --stack-size`). It checks what planvault checks: knob types,
// dangling and ambiguous links, the start rule, reachability, a terminal, and
// loops without exit. Diagnostics are only counted by code here.
import matter from "gray-matter";
import Graph from "graphology";
import { stronglyConnectedComponents } from "graphology-components";
import { bfsFromNode } from "graphology-traversal";

const NEXT_HEADING = /^##\s+Next\s*$/m;
const NEXT_ITEM = /^\s*[-*+]\s+(?:(.*?)\s*(?:->|=>|→)\s*)?\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]/;
const TITLE = /^#\s+(.+)$/m;

export function validatePlainJs(files) {
  const problems = [];
  const notes = [];
  for (const [path, text] of Object.entries(files)) {
    if (!path.toLowerCase().endsWith(".md") || path.split("/").some((p) => p.startsWith("."))) continue;
    const id = path.slice(0, -3);
    let parsed;
    try {
      // An options object turns gray-matter's per-text cache off, so every
      // round really parses.
      parsed = matter(text, {});
    } catch (error) {
      problems.push({ code: "bad-frontmatter", id });
      parsed = { data: {}, content: text };
    }
    const { data, content } = parsed;
    if (data.type !== undefined && !["start", "step"].includes(data.type)) problems.push({ code: "bad-frontmatter", id });
    if (data.status !== undefined && !["pending", "active", "done"].includes(data.status)) problems.push({ code: "bad-frontmatter", id });
    if (data.max_visits !== undefined && !(Number.isInteger(data.max_visits) && data.max_visits > 0)) problems.push({ code: "bad-frontmatter", id });
    if (data.tools !== undefined && !Array.isArray(data.tools)) problems.push({ code: "bad-frontmatter", id });
    const title = TITLE.exec(content)?.[1] ?? id.split("/").pop();
    const edges = [];
    const heading = NEXT_HEADING.exec(content);
    if (heading) {
      const section = content.slice(heading.index + heading[0].length).split(/^#{1,2}\s/m)[0];
      for (const line of section.split("\n")) {
        const item = NEXT_ITEM.exec(line);
        if (item) edges.push({ label: item[1] ?? null, target: item[2].trim() });
      }
    }
    notes.push({ id, title, start: data.type === "start", edges });
  }

  // Obsidian-style resolution: by path, else by basename, case-insensitively.
  const byPath = new Map();
  const byBasename = new Map();
  for (const note of notes) {
    byPath.set(note.id.toLowerCase(), note.id);
    const base = note.id.split("/").pop().toLowerCase();
    byBasename.set(base, [...(byBasename.get(base) ?? []), note.id]);
  }
  const graph = new Graph({ type: "directed", multi: true });
  for (const note of notes) graph.addNode(note.id, { title: note.title });
  for (const note of notes) {
    for (const edge of note.edges) {
      const key = edge.target.toLowerCase();
      const candidates = byPath.has(key) ? [byPath.get(key)] : (byBasename.get(key) ?? []);
      if (candidates.length === 1) graph.addDirectedEdge(note.id, candidates[0], { label: edge.label });
      else problems.push({ code: candidates.length === 0 ? "dangling-edge" : "ambiguous-link", id: note.id });
    }
  }

  const starts = notes.filter((n) => n.start).map((n) => n.id);
  const roots = graph.filterNodes((node) => graph.inDegree(node) === 0);
  const start = starts.length === 1 ? starts[0] : starts.length === 0 && roots.length === 1 ? roots[0] : null;
  if (starts.length > 1) problems.push({ code: "multiple-starts" });
  if (start === null && starts.length <= 1) problems.push({ code: "no-start" });
  if (start !== null) {
    const reached = new Set();
    bfsFromNode(graph, start, (node) => {
      reached.add(node);
    });
    // A terminal declares no `## Next` link (a dangling one still counts as declared).
    const declared = new Map(notes.map((n) => [n.id, n.edges.length]));
    if (![...reached].some((node) => declared.get(node) === 0)) problems.push({ code: "no-terminal-reachable" });
    graph.forEachNode((node) => {
      if (!reached.has(node)) problems.push({ code: "unreachable", id: node });
    });
  }
  for (const component of stronglyConnectedComponents(graph)) {
    const members = new Set(component);
    const loops = component.length > 1 || graph.hasDirectedEdge(component[0], component[0]);
    const exits = component.some((node) => graph.outNeighbors(node).some((next) => !members.has(next)));
    if (loops && !exits) problems.push({ code: "cycle-without-exit", nodes: component });
  }
  return problems;
}
