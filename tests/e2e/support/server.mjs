// A tiny static file server for the built app (dist/), on 127.0.0.1 only.
// Each test file starts its own on a free port, so files can run in parallel;
// `scripts/start` serves the app with it too (scripts/serve-web.mjs).

import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');

/** The built app: $PLANVAULT_DIST, else dist/ at the repository root. */
export const DIST_DIR = resolve(process.env.PLANVAULT_DIST ?? join(REPO_ROOT, 'dist'));

const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.canvas': 'application/json',
  '.md': 'text/markdown; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

const BUILDING_PAGE = `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<title>planvault: building</title><p>planvault is building the app (the first build takes a few minutes);
this page reloads itself every 5 seconds.</p>`;

/**
 * Serves `root` (default: the built app) on 127.0.0.1:`port` (default: a free
 * one) and resolves to `{ url, close() }`, `url` ending in `/`; rejects with
 * the listen error (`EADDRINUSE`: the port is taken). While `building()` says
 * true, every request gets a 503 page that reloads itself (the first build
 * of `scripts/start`); without it, `root` must hold a build already.
 */
export async function serveDist(root = DIST_DIR, { port = 0, building = null } = {}) {
  root = resolve(root);
  if (!building && !existsSync(join(root, 'index.html'))) {
    throw new Error(`${root}/index.html is missing: build the app first (node scripts/build-web.mjs)`);
  }
  const server = createServer(async (request, response) => {
    if (building?.()) {
      response.writeHead(503, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      response.end(BUILDING_PAGE);
      return;
    }
    try {
      const path = decodeURIComponent(new URL(request.url, 'http://127.0.0.1').pathname);
      let file = normalize(join(root, path));
      if (file !== root && !file.startsWith(root + sep)) {
        response.writeHead(403).end();
        return;
      }
      if ((await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      response.writeHead(200, {
        'content-type': MIME_TYPES[extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-store',
      });
      response.end(body);
    } catch {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', done);
  });
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((done) => server.close(done)),
  };
}
