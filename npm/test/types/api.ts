// Type-checked by example-plugin.test.mjs (tsc --noEmit -p npm/test/types):
// each entry's .d.ts declares the API it exports, with real object types,
// and the markdown build's declares no function its wasm does not have.
import * as full from "planvault";
import * as inline from "planvault/inline";
import * as markdown from "planvault/markdown";
import * as markdownInline from "planvault/markdown/inline";
import type { Diagnostic, GeneratedPlanOptions, NodeStatus, ValidateReport, VaultOptions } from "planvault";

const files: Record<string, string> = { "a.md": "# A\n" };
const options: GeneratedPlanOptions = { allowedTools: ["search"], limits: { maxNodes: 8 } };
const status: NodeStatus = "done";

const plan = full.parseVault(files);
const report: ValidateReport = full.validate(plan);
const first: Diagnostic | undefined = report.diagnostics[0];
const line: number | null = first ? first.line : null;
const texts: string[] = [
  full.toMermaid(plan),
  full.toJsonCanvas(full.parsePlanMd("- [ ] a\n", "PLAN.md")),
  full.toGraphJson(full.parseGeneratedPlan("[]", options)),
  full.updateStatus("# A\n", status),
  inline.toMermaid(inline.parseVault(files)),
];

for (const api of [markdown, markdownInline]) {
  const vault = new api.Vault(files);
  const scope: VaultOptions = { folder: "plans/launch" };
  const scoped: Diagnostic[] = new api.Vault(files, scope).diagnostics();
  // @ts-expect-error the folder is a string
  new api.Vault(files, { folder: 3 });
  vault.update("a.md", "# A\n\n## Next\n- [[b]]\n");
  const diagnostics: Diagnostic[] = vault.diagnostics();
  const again: ValidateReport = api.validate(api.parsePlanMd("- [ ] a\n"));
  const ids: string[] = api.parseVault(files).nodeIds;
  texts.push(api.updateStatus("# A\n", "active"), String(diagnostics.length + scoped.length + again.diagnostics.length + ids.length));
  // @ts-expect-error the markdown build has no JSON plan parser
  api.parseGeneratedPlan("[]");
  // @ts-expect-error nor the exporters
  api.toMermaid(plan);
}

export const checked = [texts, line];
