// The load client of bench/mcpserve: the official TypeScript SDK's client
// over streamable HTTP, SESSIONS sessions each making CALLS calls of a
// trivial tool one after the other (after 50 warm-up calls each). Prints one
// JSON line: calls/s, p50 and p99 latency (ms).
//
//   LCP_NODE_MODULES=mcp/testdata/node/node_modules node load.mjs URL TOOL SESSIONS CALLS
import path from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.LCP_NODE_MODULES;
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const { Client } = await load("@modelcontextprotocol/sdk/dist/esm/client/index.js");
const { StreamableHTTPClientTransport } = await load("@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js");

const [url, tool, sessions = "4", calls = "500"] = process.argv.slice(2);
const headers = process.env.LCP_TOKEN ? { Authorization: `Bearer ${process.env.LCP_TOKEN}` } : {};
const lat = [];
async function open(i) {
  const c = new Client({ name: `load-${i}`, version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  for (let k = 0; k < 50; k++) await c.callTool({ name: tool, arguments: { x: k } });
  return c;
}
const clients = await Promise.all([...Array(Number(sessions)).keys()].map(open));
const t0 = performance.now();
await Promise.all(clients.map(async (c) => {
  for (let k = 0; k < Number(calls); k++) {
    const t = performance.now();
    const r = await c.callTool({ name: tool, arguments: { x: k } });
    if (r.isError || r.content?.[0]?.text !== String(k)) throw new Error("unexpected result: " + JSON.stringify(r));
    lat.push(performance.now() - t);
  }
}));
const secs = (performance.now() - t0) / 1000;
lat.sort((a, b) => a - b);
console.log(JSON.stringify({
  calls_per_s: +(lat.length / secs).toFixed(1),
  p50_ms: +lat[lat.length >> 1].toFixed(3),
  p99_ms: +lat[Math.floor(lat.length * 0.99)].toFixed(3),
  calls: lat.length,
}));
await Promise.all(clients.map((c) => c.close()));
