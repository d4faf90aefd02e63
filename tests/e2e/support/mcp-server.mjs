// Starts @modelcontextprotocol/server-everything (the protocol's reference
// test server, a dev dependency of the root package.json) in its Streamable
// HTTP mode on a free port of 127.0.0.1 for one test. It answers with CORS
// headers of its own (any origin, `mcp-session-id` exposed), so the app's
// worker reaches it from the page's origin without a proxy.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from './server.mjs';

const BIN = join(REPO_ROOT, 'node_modules', '.bin', 'mcp-server-everything');

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const listening = (port) =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });

/**
 * Resolves to `{ url, close() }`; `url` is the server's `/mcp` endpoint.
 * `port`: where (a server started again where it was), else a free one.
 */
export async function startEverything({ port } = {}) {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm ci at the repository's root`);
  port ??= await freePort();
  const child = spawn(BIN, ['streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 30_000;
  while (!(await listening(port))) {
    if (child.exitCode !== null) throw new Error(`server-everything exited with ${child.exitCode}`);
    if (Date.now() > deadline) { child.kill(); throw new Error('server-everything did not listen'); }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    /** Resolves once the server has exited (its port refuses). */
    close() {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      return exited;
    },
  };
}
