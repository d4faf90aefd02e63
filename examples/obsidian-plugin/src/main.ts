// planvault example plugin: validates the plan kept in this vault (or in one
// folder of it) with the planvault npm package, lists the diagnostics in a
// side panel and marks the offending lines (`## Next` items, headings) in the
// editor. Each change re-reads only the changed note (`Vault.update`).
import { Plugin, PluginSettingTab, Setting, TAbstractFile, TFile, type App, type WorkspaceLeaf } from "obsidian";
import { Vault as PlanVault, type Diagnostic } from "planvault/markdown/inline";
import { DiagnosticsView, VIEW_TYPE } from "./view";
import { lineMarks } from "./marks";

interface Settings {
  /** Vault folder holding the plan's notes; "" for the whole vault. */
  planFolder: string;
}

const DEFAULT_SETTINGS: Settings = { planFolder: "" };

export default class PlanvaultPlugin extends Plugin {
  settings: Settings = DEFAULT_SETTINGS;
  diagnostics: Diagnostic[] = [];
  /** Bumped whenever `diagnostics` changes, so editors redraw their marks. */
  version = 0;
  private plan: PlanVault | null = null;

  async onload(): Promise<void> {
    this.settings = { ...DEFAULT_SETTINGS, ...((await this.loadData()) as Partial<Settings> | null) };
    this.registerView(VIEW_TYPE, (leaf: WorkspaceLeaf) => new DiagnosticsView(leaf, this));
    this.registerEditorExtension(lineMarks(this));
    this.addRibbonIcon("list-checks", "Plan diagnostics", () => void this.showPanel());
    this.addCommand({ id: "show-plan-diagnostics", name: "Show plan diagnostics", callback: () => void this.showPanel() });
    this.addSettingTab(new PlanvaultSettingTab(this.app, this));

    this.app.workspace.onLayoutReady(() => {
      void this.loadPlan();
      this.registerEvent(this.app.vault.on("create", (file) => void this.noteChanged(file)));
      this.registerEvent(this.app.vault.on("modify", (file) => void this.noteChanged(file)));
      this.registerEvent(this.app.vault.on("delete", (file) => this.noteRemoved(file.path)));
      this.registerEvent(
        this.app.vault.on("rename", (file, oldPath) => {
          this.noteRemoved(oldPath);
          void this.noteChanged(file);
        }),
      );
    });
  }

  onunload(): void {
    this.plan?.free();
  }

  /** The note's path inside the plan folder, or null when it is outside. */
  planPath(vaultPath: string): string | null {
    const folder = this.settings.planFolder.replace(/\/+$/, "");
    if (folder === "") return vaultPath;
    return vaultPath.startsWith(`${folder}/`) ? vaultPath.slice(folder.length + 1) : null;
  }

  /** The vault path of a plan-relative path. */
  vaultPath(planPath: string): string {
    const folder = this.settings.planFolder.replace(/\/+$/, "");
    return folder === "" ? planPath : `${folder}/${planPath}`;
  }

  /** Read every note of the plan once. */
  async loadPlan(): Promise<void> {
    const files: Record<string, string> = {};
    for (const file of this.app.vault.getMarkdownFiles()) {
      const path = this.planPath(file.path);
      if (path !== null) files[path] = await this.app.vault.cachedRead(file);
    }
    this.plan?.free();
    this.plan = new PlanVault(files);
    this.refresh();
  }

  private async noteChanged(file: TAbstractFile): Promise<void> {
    const path = this.planPath(file.path);
    if (!this.plan || path === null || !(file instanceof TFile) || file.extension !== "md") return;
    this.plan.update(path, await this.app.vault.cachedRead(file));
    this.refresh();
  }

  private noteRemoved(vaultPath: string): void {
    const path = this.planPath(vaultPath);
    if (this.plan && path !== null && this.plan.remove(path)) this.refresh();
  }

  private refresh(): void {
    this.diagnostics = this.plan ? this.plan.diagnostics() : [];
    this.version++;
    for (const leaf of this.app.workspace.getLeavesOfType(VIEW_TYPE)) {
      if (leaf.view instanceof DiagnosticsView) leaf.view.render();
    }
    // Reconfigures the editors, which redraws their line marks.
    this.app.workspace.updateOptions();
  }

  async showPanel(): Promise<void> {
    const existing = this.app.workspace.getLeavesOfType(VIEW_TYPE)[0];
    const leaf = existing ?? this.app.workspace.getRightLeaf(false);
    if (!leaf) return;
    if (!existing) await leaf.setViewState({ type: VIEW_TYPE, active: true });
    await this.app.workspace.revealLeaf(leaf);
  }

  async saveSettings(): Promise<void> {
    await this.saveData(this.settings);
    await this.loadPlan();
  }
}

class PlanvaultSettingTab extends PluginSettingTab {
  constructor(
    app: App,
    private readonly plugin: PlanvaultPlugin,
  ) {
    super(app, plugin);
  }

  display(): void {
    this.containerEl.empty();
    new Setting(this.containerEl)
      .setName("Plan folder")
      .setDesc("The folder whose notes form the plan; empty for the whole vault.")
      .addText((text) =>
        text.setValue(this.plugin.settings.planFolder).onChange(async (value) => {
          this.plugin.settings.planFolder = value.trim();
          await this.plugin.saveSettings();
        }),
      );
  }
}
