// The reference server of the MCP benchmark: the official TypeScript SDK's
// McpServer over streamable HTTP (stateful sessions, the SDK's defaults),
// exposing the same trivial tool as lcp's side.
//
//   LCP_NODE_MODULES=mcp/testdata/node/node_modules PORT=8123 node bench/mcp/ts_server.mjs
import http from "node:http";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";

const modules = process.env.LCP_NODE_MODULES;
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const { McpServer } = await load("@modelcontextprotocol/sdk/dist/esm/server/mcp.js");
const { StreamableHTTPServerTransport } = await load("@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js");
const { isInitializeRequest } = await load("@modelcontextprotocol/sdk/dist/esm/types.js");
const { z } = await load("zod/index.js");

function newServer() {
  const server = new McpServer({ name: "ts-bench", version: "1.0.0" });
  server.registerTool(
    "add",
    { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  return server;
}

const transports = new Map();

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const httpServer = http.createServer(async (req, res) => {
  try {
    const sid = req.headers["mcp-session-id"];
    if (req.method === "POST") {
      const body = await readBody(req);
      let transport = sid ? transports.get(sid) : undefined;
      if (!transport && !sid && isInitializeRequest(body)) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => transports.set(id, transport),
        });
        transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
        await newServer().connect(transport);
      }
      if (!transport) {
        res.writeHead(400).end("no session");
        return;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    const transport = sid && transports.get(sid);
    if (!transport) {
      res.writeHead(400).end("no session");
      return;
    }
    await transport.handleRequest(req, res);
  } catch (e) {
    if (!res.headersSent) res.writeHead(500).end(String(e));
  }
});
httpServer.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening"));
