// A stdio MCP server for planvault's tests, speaking only what they need
// (newline-delimited JSON-RPC: initialize, tools/list, tools/call).
//
//   node server.cjs write [--root=DIR]   one tool, write_file(path, content),
//                                       writing under DIR (else the working
//                                       folder), as many real servers take
//                                       their root
//   node server.cjs endless PAGES_FILE   every tools/list page one tool with a
//                                       1 MiB description and a next page;
//                                       the pages served counted in PAGES_FILE
//   node server.cjs go-sdk               what go-sdk servers send: an empty
//                                       file as an embedded resource with no
//                                       `text` (github-mcp-server's
//                                       get_file_contents; go-sdk's
//                                       `text,omitempty`)
//   node server.cjs no-tools             a server without the tools
//                                       capability: tools/list is -32601, as
//                                       the TypeScript SDK's McpServer answers
//   node server.cjs huge                 a call's answer one line of 17 MiB
//                                       (mcp-server-filesystem sends a 9 MB
//                                       file twice: text and structured),
//                                       past the 16 MiB a client reads
//   node server.cjs keepalive PID_FILE   a session kept alive as go-sdk's
//                                       `KeepAlive` keeps it: a ping every
//                                       200 ms once initialized, and the
//                                       server ends when one goes 1 s
//                                       unanswered; its pid in PID_FILE
'use strict';
const fs = require('fs');
const path = require('path');

const [mode, ...rest] = process.argv.slice(2);
const flag = rest.find((a) => a.startsWith('--root='));
const root = flag ? flag.slice('--root='.length) : process.cwd();
let served = 0;

function tools() {
  if (mode === 'go-sdk') {
    return {
      tools: [
        { name: 'get_file_contents', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
      ],
    };
  }
  if (mode === 'keepalive' || mode === 'huge') {
    return { tools: [{ name: 'echo', description: 'Echo a message', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } }] };
  }
  if (mode === 'endless') {
    served += 1;
    fs.writeFileSync(rest[0], String(served));
    return {
      tools: [{ name: 't' + served, description: 'd'.repeat(1 << 20), inputSchema: { type: 'object' } }],
      nextCursor: 'p' + served,
    };
  }
  return {
    tools: [{
      name: 'write_file',
      description: 'Write a file',
      inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
    }],
  };
}

function call(name, args) {
  if (mode === 'go-sdk') {
    return {
      content: [
        { type: 'text', text: 'successfully downloaded empty file' },
        { type: 'resource', resource: { uri: 'repo://octo/demo/' + args.path, mimeType: 'text/plain' } },
      ],
    };
  }
  if (mode === 'huge') {
    const text = 'x'.repeat(17 << 20);
    return { content: [{ type: 'text', text }] };
  }
  if (mode === 'keepalive') return { content: [{ type: 'text', text: 'echo: ' + args.message }] };
  const file = path.resolve(root, args.path);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, args.content);
  return { content: [{ type: 'text', text: 'wrote ' + file }] };
}

const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const unanswered = new Map();
let pings = 0;
function keepAlive() {
  fs.writeFileSync(rest[0], String(process.pid));
  setInterval(() => {
    pings += 1;
    const id = 'keepalive-' + pings;
    send({ jsonrpc: '2.0', id, method: 'ping' });
    unanswered.set(id, setTimeout(() => process.exit(0), 1000));
  }, 200);
}
let buffer = '';
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let at;
  while ((at = buffer.indexOf('\n')) >= 0) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.method === undefined) {
      clearTimeout(unanswered.get(m.id));
      unanswered.delete(m.id);
      continue;
    }
    const missing = () => send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
    if (m.method === 'initialize') {
      send({ jsonrpc: '2.0', id: m.id, result: {
        protocolVersion: m.params.protocolVersion,
        capabilities: mode === 'no-tools' ? { resources: {} } : { tools: {} },
        serverInfo: { name: 'planvault-test', version: '1' },
      } });
    } else if (m.method === 'notifications/initialized') {
      if (mode === 'keepalive') keepAlive();
    } else if (m.method === 'tools/list') {
      if (mode === 'no-tools') missing();
      else send({ jsonrpc: '2.0', id: m.id, result: tools() });
    } else if (m.method === 'tools/call') {
      send({ jsonrpc: '2.0', id: m.id, result: call(m.params.name, m.params.arguments) });
    } else if (m.id !== undefined) {
      send({ jsonrpc: '2.0', id: m.id, result: {} });
    }
  }
});
