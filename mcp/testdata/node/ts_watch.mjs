// Drives `lcp mcp --watch` with the official TypeScript SDK client: lists
// the tools, says so on stdout ({"phase":"listed"}), waits for
// notifications/tools/list_changed (the Go test edits a tool file
// meanwhile), lists again, calls the new tool, and prints what it saw.
//
//   node ts_watch.mjs '{"url":"http://127.0.0.1:PORT/mcp"}'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const target = JSON.parse(process.argv[2]);
const client = new Client({ name: "ts-watch-client", version: "1.0.0" }, { capabilities: {} });
let changes = 0;
let onChange = () => {};
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  changes++;
  onChange();
});
await client.connect(new StreamableHTTPClientTransport(new URL(target.url)));

const names = async () => (await client.listTools()).tools.map((t) => t.name).sort();
const out = { before: await names() };
const changed = new Promise((resolve, reject) => {
  onChange = resolve;
  setTimeout(() => reject(new Error("no tools/list_changed within 20 s")), 20000);
});
console.log(JSON.stringify({ phase: "listed" }));
await changed;
out.after = await names();
out.changes = changes;
const res = await client.callTool({ name: target.call, arguments: target.args ?? {} });
out.call = { isError: !!res.isError, text: res.content?.map((c) => c.text).join("|"), meta: res._meta ?? null };
await client.close();
console.log(JSON.stringify(out));
