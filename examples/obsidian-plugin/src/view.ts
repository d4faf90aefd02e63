// The side panel: one row per diagnostic; clicking a row opens the note at
// the offending line.
import { ItemView, TFile, type WorkspaceLeaf } from "obsidian";
import type { Diagnostic } from "planvault/markdown/inline";
import type PlanvaultPlugin from "./main";

export const VIEW_TYPE = "planvault-diagnostics";

/** `file:line:col`, as the CLI prints it. */
export function location(d: Diagnostic): string {
  if (d.file === null) return "";
  return [d.file, d.line, d.column].filter((part) => part !== null).join(":");
}

export class DiagnosticsView extends ItemView {
  constructor(
    leaf: WorkspaceLeaf,
    private readonly plugin: PlanvaultPlugin,
  ) {
    super(leaf);
  }

  getViewType(): string {
    return VIEW_TYPE;
  }

  getDisplayText(): string {
    return "Plan diagnostics";
  }

  getIcon(): string {
    return "list-checks";
  }

  async onOpen(): Promise<void> {
    this.render();
  }

  render(): void {
    const root = this.contentEl;
    root.empty();
    const { diagnostics } = this.plugin;
    const errors = diagnostics.filter((d) => d.severity === "error").length;
    root.createEl("h4", {
      text: diagnostics.length === 0 ? "The plan is sound" : `${errors} errors, ${diagnostics.length - errors} warnings`,
    });
    const list = root.createEl("ul", { cls: "planvault-diagnostics" });
    for (const d of diagnostics) {
      const row = list.createEl("li", { cls: `planvault-${d.severity}` });
      row.createEl("code", { text: `${d.severity}[${d.code}]` });
      row.createSpan({ text: ` ${d.message}` });
      const where = location(d);
      if (where) row.createDiv({ cls: "planvault-location", text: where });
      row.addEventListener("click", () => void this.reveal(d));
    }
  }

  private async reveal(d: Diagnostic): Promise<void> {
    if (d.file === null) return;
    const file = this.app.vault.getAbstractFileByPath(this.plugin.vaultPath(d.file));
    if (!(file instanceof TFile)) return;
    const line = Math.max((d.line ?? 1) - 1, 0);
    await this.app.workspace.getLeaf(false).openFile(file, { eState: { line } });
  }
}
