// Editor marks: every line a diagnostic points at (a dangling `## Next` item,
// the `## Next` heading of a loop without exit, a bad frontmatter line) gets a
// line decoration with the message as its tooltip, and a link it is about an
// underline.
import { RangeSetBuilder } from "@codemirror/state";
import { Decoration, EditorView, ViewPlugin, type DecorationSet, type ViewUpdate } from "@codemirror/view";
import { editorInfoField } from "obsidian";
import type { Diagnostic } from "planvault/markdown/inline";
import type PlanvaultPlugin from "./main";

function marksFor(view: EditorView, plugin: PlanvaultPlugin): DecorationSet {
  const file = view.state.field(editorInfoField, false)?.file;
  const path = file ? plugin.planPath(file.path) : null;
  const builder = new RangeSetBuilder<Decoration>();
  if (path === null) return builder.finish();
  const byLine = new Map<number, Diagnostic[]>();
  for (const d of plugin.diagnostics) {
    if (d.file !== path || d.line === null || d.line > view.state.doc.lines) continue;
    byLine.set(d.line, [...(byLine.get(d.line) ?? []), d]);
  }
  for (const line of [...byLine.keys()].sort((a, b) => a - b)) {
    const found = byLine.get(line) ?? [];
    const severity = found.some((d) => d.severity === "error") ? "error" : "warning";
    const title = found.map((d) => `${d.severity}[${d.code}]: ${d.message}`).join("\n");
    const mark = Decoration.line({ class: `planvault-line planvault-line-${severity}`, attributes: { title } });
    const { from, to } = view.state.doc.line(line);
    builder.add(from, from, mark);
    // The link itself, underlined: UTF-16 columns are CodeMirror's offsets.
    const links = found.filter((d) => d.column_utf16 !== null && d.end_column_utf16 !== null);
    links.sort((a, b) => (a.column_utf16 ?? 0) - (b.column_utf16 ?? 0));
    for (const d of links) {
      const start = Math.min(to, from + (d.column_utf16 ?? 1) - 1);
      const end = Math.min(to, from + (d.end_column_utf16 ?? 1) - 1);
      if (end > start) builder.add(start, end, Decoration.mark({ class: `planvault-link planvault-link-${d.severity}` }));
    }
  }
  return builder.finish();
}

export function lineMarks(plugin: PlanvaultPlugin) {
  return ViewPlugin.fromClass(
    class {
      decorations: DecorationSet;
      private version: number;

      constructor(view: EditorView) {
        this.version = plugin.version;
        this.decorations = marksFor(view, plugin);
      }

      update(update: ViewUpdate): void {
        if (update.docChanged || update.viewportChanged || this.version !== plugin.version) {
          this.version = plugin.version;
          this.decorations = marksFor(update.view, plugin);
        }
      }
    },
    { decorations: (value) => value.decorations },
  );
}
