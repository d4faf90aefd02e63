// Shared by the package tests: reading vault folders the way the CLI does.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const repoDir = fileURLToPath(new URL("../../", import.meta.url));

/** Every file under `root` (dot-folders skipped, as the CLI skips them), path → text. */
export function readVault(root) {
  const files = {};
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop();
    for (const name of readdirSync(dir)) {
      if (name.startsWith(".")) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) pending.push(path);
      else if (name.toLowerCase().endsWith(".md")) files[relative(root, path).split(sep).join("/")] = readFileSync(path, "utf8");
    }
  }
  return files;
}

/** `planvault validate --json`'s bytes for a report object. */
export function asCliJson(report) {
  return JSON.stringify(report, null, 2) + "\n";
}

/**
 * Every file of a fixture folder except the expectation (dot-folders
 * included: skipping them is the loader's job), as vault_fixtures.rs reads it.
 */
export function readFolder(root) {
  const files = {};
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop();
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        pending.push(path);
        continue;
      }
      const key = relative(root, path).split(sep).join("/");
      if (!key.startsWith("expected.snap")) files[key] = readFileSync(path, "utf8");
    }
  }
  return files;
}
