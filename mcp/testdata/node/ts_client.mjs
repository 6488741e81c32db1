// Drives lcp's MCP server with the official TypeScript SDK client, the way
// desktop assistants do, and prints what it saw as one JSON object for the
// Go test (mcp/peers_test.go) to check.
//
//   node ts_client.mjs '{"url":"http://127.0.0.1:PORT/mcp"}'
//   node ts_client.mjs '{"command":"/path/to/server","args":[...],"env":{...}}'
//
// Elicitation answers are scripted per call: the queue `plan` holds what the
// person "answers" to the next elicitation.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const target = JSON.parse(process.argv[2]);

function transport() {
  if (target.url) {
    return new StreamableHTTPClientTransport(new URL(target.url));
  }
  return new StdioClientTransport({
    command: target.command,
    args: target.args ?? [],
    env: { ...process.env, ...(target.env ?? {}) },
    stderr: "inherit",
  });
}

// sampled records the sampling requests the client answered.
const sampled = [];

// connect returns a client whose elicitation handler answers from plan
// and records what it was asked in asked; it offers sampling, answered by
// a fake model.
async function connect(plan, asked) {
  const client = new Client(
    { name: "ts-test-client", version: "1.0.0" },
    { capabilities: { elicitation: { form: {}, url: {} }, sampling: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    sampled.push(req.params);
    return { role: "assistant", model: "ts-fake-model", content: { type: "text", text: "Lighthouse" }, stopReason: "endTurn" };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params);
    const next = plan.shift();
    if (!next) return { action: "decline" };
    if (next.openPage) {
      // The person opens lcp's page in a browser and types the secret.
      const url = req.params.url;
      const page = await (await fetch(url)).text();
      asked.push({ page: page.includes('type="password"') ? "masked field" : page });
      setTimeout(async () => {
        await fetch(url, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ value: next.openPage, action: "submit" }),
        });
      }, 50);
      return { action: "accept" };
    }
    if (next.delay) await new Promise((r) => setTimeout(r, next.delay));
    return next.result;
  });
  await client.connect(transport());
  return client;
}

function text(res) {
  return { isError: !!res.isError, text: res.content?.map((c) => c.text).join("|"), structured: res.structuredContent ?? null };
}

const out = {};
const plan = [];
const asked = [];
const client = await connect(plan, asked);

const list = await client.listTools();
out.tools = list.tools.map((t) => t.name);
out.echoSchema = list.tools.find((t) => t.name === "echo")?.inputSchema;
out.greetOutputSchema = list.tools.find((t) => t.name === "greet")?.outputSchema ?? null;

out.greet = text(await client.callTool({ name: "greet", arguments: { name: "Ada" } }));
out.fail = text(await client.callTool({ name: "fail", arguments: {} }));

plan.push({ result: { action: "accept", content: { decision: "allow" } } });
out.allow = text(await client.callTool({ name: "danger", arguments: {} }));
plan.push({ result: { action: "accept", content: { decision: "reject", reason: "not on a Friday" } } });
out.reject = text(await client.callTool({ name: "danger", arguments: {} }));
plan.push({ result: { action: "accept", content: { value: "blue" } } });
out.pick = text(await client.callTool({ name: "pick", arguments: {} }));
plan.push({ openPage: "s3cret-value" });
out.login = text(await client.callTool({ name: "login", arguments: {} }));
out.asked = asked.map((p) => (p.page ? p : { mode: p.mode ?? "form", message: p.message, schema: p.requestedSchema ?? null, url: p.url ?? null }));

// Sampling: a tool asks the client's model.
out.sampling = text(await client.callTool({ name: "ask_model", arguments: { question: "What guides ships at night?" } }));
out.sampled = sampled.map((p) => ({ text: p.messages?.[0]?.content?.text, maxTokens: p.maxTokens, systemPrompt: p.systemPrompt }));

// Cancellation mid-call: the server must stop the tool.
const abort = new AbortController();
setTimeout(() => abort.abort("changed my mind"), 300);
try {
  await client.callTool({ name: "slow", arguments: { ms: 20000 } }, undefined, { signal: abort.signal });
  out.cancel = "completed";
} catch (e) {
  out.cancel = "aborted";
}

// Progress notifications while a tool runs.
let progress = 0;
await client.callTool({ name: "slow", arguments: { ms: 300 } }, undefined, { onprogress: () => progress++ });
out.progress = progress;

// Two sessions at once, each answering its own question.
const sessions = await Promise.all(
  ["Ada", "Bob"].map(async (name) => {
    const p = [];
    const a = [];
    for (let i = 0; i < 3; i++) p.push({ delay: 50, result: { action: "accept", content: { value: name } } });
    const c = await connect(p, a);
    return { c, a };
  }),
);
const results = await Promise.all(
  sessions.map(async ({ c }) => {
    const r = [];
    for (let i = 0; i < 3; i++) r.push(text(await c.callTool({ name: "ask_name", arguments: {} })).text);
    return r;
  }),
);
out.sessions = results;
out.sessionAsked = sessions.map(({ a }) => a.length);
for (const { c } of sessions) await c.close();
await client.close();
console.log(JSON.stringify(out));
