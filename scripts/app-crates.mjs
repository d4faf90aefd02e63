// The folders of every workspace crate that the browser app or its worker
// builds on (themselves included), from `cargo metadata --no-deps`: what
// scripts/serve-web.mjs watches, so a crate the app comes to depend on is
// watched without a list to keep.
import { relative, dirname } from 'node:path';

/** Folders relative to the workspace root, sorted; throws when the app or worker is missing. */
export function appCrateDirs(metadata) {
  const byName = new Map(metadata.packages.map((p) => [p.name, p]));
  const seen = new Set();
  const stack = ['planvault-web', 'planvault-worker'];
  while (stack.length > 0) {
    const name = stack.pop();
    const pkg = byName.get(name);
    if (!pkg || seen.has(name)) continue;
    seen.add(name);
    for (const dep of pkg.dependencies) {
      if (dep.path && dep.kind !== 'dev') stack.push(dep.name);
    }
  }
  if (!seen.has('planvault-web') || !seen.has('planvault-worker')) {
    throw new Error('planvault-web or planvault-worker is missing from the workspace');
  }
  return [...seen]
    .map((name) => relative(metadata.workspace_root, dirname(byName.get(name).manifest_path)))
    .sort();
}
