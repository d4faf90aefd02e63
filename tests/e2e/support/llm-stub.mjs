// Starts testkit/llm-stub (the scripted OpenAI-compatible server, real HTTP
// and SSE with CORS headers) on 127.0.0.1 for one test, from the binary
// `cargo build -p planvault-llm-stub` leaves in target/debug.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './server.mjs';

/** $PLANVAULT_LLM_STUB, else target/debug/planvault-llm-stub. */
export const STUB_BIN = process.env.PLANVAULT_LLM_STUB ?? join(REPO_ROOT, 'target', 'debug', 'planvault-llm-stub');

/**
 * Serves `script` (see testkit/llm-stub/src/script.rs) and resolves to
 * `{ url, requests(), close() }`; `url` is the API base (`…/v1`).
 */
export async function startStub(script) {
  if (!existsSync(STUB_BIN)) {
    throw new Error(`${STUB_BIN} is missing: cargo build -p planvault-llm-stub`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'planvault-stub-'));
  const file = join(dir, 'script.json');
  writeFileSync(file, JSON.stringify(script));
  const child = spawn(STUB_BIN, ['--script', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`llm-stub exited with ${code}`)));
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const found = /listening on (\S+)/.exec(out);
      if (found) resolve(found[1]);
    });
  });
  const root = url.replace(/\/v1\/?$/, '');
  return {
    url,
    /** Every request the stub has seen (the Authorization header only as present or not). */
    async requests() {
      const response = await fetch(`${root}/__stub/requests`);
      return response.json();
    },
    close() {
      child.kill();
    },
  };
}

/** A reply served once to a request whose messages contain `contains`. */
export function reply(contains, content, extra = {}) {
  return { match: { contains }, content, ...extra };
}
