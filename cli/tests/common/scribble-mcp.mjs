// A stdio MCP server for the tests of what a writing tool may change: its
// one tool, `scribble`, writes `content` at `path` (or, with `link`,
// replaces `path` by a symlink to `link`; with `mkdir`, first makes that
// folder), then answers, or first sleeps `sleep` seconds, or dies without
// answering (`die`). With `delay`, it writes `started` at once and the
// file only `delay` seconds later, as a slow tool would.
import { mkdirSync, writeFileSync, rmSync, symlinkSync } from "node:fs";
import { createInterface } from "node:readline";

const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const tool = {
  name: "scribble",
  description: "write a file",
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string" },
      content: { type: "string" },
      link: { type: "string" },
      sleep: { type: "number" },
      die: { type: "boolean" },
      mkdir: { type: "string" },
      delay: { type: "number" },
      started: { type: "string" },
    },
  },
};
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { id, method, params } = JSON.parse(line);
  if (method === "initialize") {
    send({
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion: params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "scribble", version: "1" },
      },
    });
  } else if (method === "tools/list") {
    send({ jsonrpc: "2.0", id, result: { tools: [tool] } });
  } else if (method === "tools/call") {
    const args = params.arguments ?? {};
    if (args.started) writeFileSync(args.started, "");
    if (args.delay) await new Promise((done) => setTimeout(done, args.delay * 1000));
    if (args.mkdir) mkdirSync(args.mkdir, { recursive: true });
    if (args.link) {
      rmSync(args.path, { force: true });
      symlinkSync(args.link, args.path);
    } else {
      writeFileSync(args.path, args.content ?? "");
    }
    if (args.die) process.exit(1);
    if (args.sleep) await new Promise((done) => setTimeout(done, args.sleep * 1000));
    send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `wrote ${args.path}` }] } });
  } else if (id !== undefined) {
    send({ jsonrpc: "2.0", id, result: {} });
  }
}
