// Reads `cargo metadata --no-deps` on stdin and prints the folder of every
// workspace crate that the browser app or its worker builds on (themselves
// included), one per line, relative to the workspace root.
import { relative, dirname } from 'node:path';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const metadata = JSON.parse(input);
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
  console.error('app-crates: planvault-web or planvault-worker is missing from the metadata');
  process.exit(1);
}
for (const name of [...seen].sort()) {
  console.log(relative(metadata.workspace_root, dirname(byName.get(name).manifest_path)));
}
