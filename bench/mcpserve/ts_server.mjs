// The reference server of bench/mcpserve: the official TypeScript SDK's
// McpServer over streamable HTTP on express (stateful sessions, the SDK's
// defaults), with one trivial tool tool_echo(x) answering String(x).
//
//   LCP_NODE_MODULES=mcp/testdata/node/node_modules node ts_server.mjs PORT
import path from "node:path";
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";

const modules = process.env.LCP_NODE_MODULES;
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const { McpServer } = await load("@modelcontextprotocol/sdk/dist/esm/server/mcp.js");
const { StreamableHTTPServerTransport } = await load("@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js");
const { isInitializeRequest } = await load("@modelcontextprotocol/sdk/dist/esm/types.js");
const { default: express } = await load("express/index.js");
const { z } = await load("zod/index.js");

const port = Number(process.argv[2] || 3999);
const app = express();
app.use(express.json());
const transports = {};
function newServer() {
  const server = new McpServer({ name: "ts-reference", version: "1.0.0" });
  server.registerTool("tool_echo", { description: "Echo.", inputSchema: { x: z.number().int().default(0) } },
    async ({ x }) => ({ content: [{ type: "text", text: String(x) }] }));
  return server;
}
app.post("/mcp", async (req, res) => {
  const sid = req.headers["mcp-session-id"];
  let t = sid && transports[sid];
  if (!t) {
    if (!isInitializeRequest(req.body)) { res.status(400).json({ error: "no session" }); return; }
    t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => { transports[id] = t; } });
    t.onclose = () => { if (t.sessionId) delete transports[t.sessionId]; };
    await newServer().connect(t);
  }
  await t.handleRequest(req, res, req.body);
});
const session = async (req, res) => {
  const t = transports[req.headers["mcp-session-id"]];
  if (!t) { res.status(400).end(); return; }
  await t.handleRequest(req, res);
};
app.get("/mcp", session);
app.delete("/mcp", session);
app.listen(port, "127.0.0.1", () => console.error(`listening on ${port}`));
