// The npm MCP client against the substrate: over streamable HTTP (SCIDEX_URL/mcp,
// the bearer token per request) and over stdio (SCIDEX_BIN mcp, token from
// SCIDEX_TOKEN). For each transport: list the tools, create an artifact, read it
// back, update it with a stale hash (a VersionConflict as data, with the merge
// hint), then with the suggested hash; read it as a resource
// (scidex://<type>/<id>); follow it with the events tool; and on stdio, where
// this client's revision (2025-11-25) keeps a session, subscribe to the
// resource and be told when another client (this script over /graphql) edits
// it. Over stateless /mcp that revision's resources/subscribe is refused,
// saying what to use. Prints "ok <check>" lines; exits 1 on the first failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const { SCIDEX_URL, SCIDEX_TOKEN, SCIDEX_BIN, DATABASE_URL, SCIDEX_JWT_SECRET } = process.env;

function fail(msg) {
  console.log("FAIL " + msg);
  process.exit(1);
}

function data(result, what) {
  if (result.isError) fail(`${what}: isError ${JSON.stringify(result.content)}`);
  const d = result.structuredContent;
  if (!d) fail(`${what}: no structuredContent: ${JSON.stringify(result)}`);
  return d.data ?? d;
}

async function exercise(name, transport) {
  const client = new Client({ name: "scidex-e2e", version: "1.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of ["get_artifact", "create_artifact", "update_artifact", "invoke_tool", "events"]) {
    if (!names.includes(want)) fail(`${name}: no tool ${want} in ${names.join(",")}`);
  }
  const get = tools.find((t) => t.name === "get_artifact");
  if (!get.inputSchema?.properties?.ref || !(get.inputSchema.required || []).includes("ref")) fail(`${name}: get_artifact input schema ${JSON.stringify(get.inputSchema)}`);
  console.log(`ok   ${name} lists ${tools.length} tools`);

  const created = data(await client.callTool({ name: "create_artifact", arguments: { input: { type: "hypothesis", title: `MCP ${name} hypothesis`, content: { target_gene: "TREM2" } } } }), "create");
  const ws = created.createArtifact;
  if (ws.__typename !== "WriteSuccess") fail(`${name}: create ${JSON.stringify(ws)}`);
  const ref = ws.ref.split("@")[0];
  const got = data(await client.callTool({ name: "get_artifact", arguments: { ref } }), "get");
  if (got.artifact?.title !== `MCP ${name} hypothesis`) fail(`${name}: get ${JSON.stringify(got)}`);
  console.log(`ok   ${name} create and get`);

  const first = data(await client.callTool({ name: "update_artifact", arguments: { input: { ref, baseContentHash: ws.contentHash, patch: [{ op: "add", path: "/confidence", value: 0.5 }] } } }), "update");
  if (first.updateArtifact.__typename !== "WriteSuccess") fail(`${name}: update ${JSON.stringify(first)}`);
  const stale = data(await client.callTool({ name: "update_artifact", arguments: { input: { ref, baseContentHash: ws.contentHash, patch: [{ op: "add", path: "/mechanism", value: "R47H" }] } } }), "stale update");
  const vc = stale.updateArtifact;
  if (vc.__typename !== "VersionConflict" || !vc.mergeHint?.suggestedBaseContentHash) fail(`${name}: stale update ${JSON.stringify(vc)}`);
  const retry = data(await client.callTool({ name: "update_artifact", arguments: { input: { ref, baseContentHash: vc.mergeHint.suggestedBaseContentHash, patch: [{ op: "add", path: "/mechanism", value: "R47H" }] } } }), "retry");
  if (retry.updateArtifact.__typename !== "WriteSuccess") fail(`${name}: retry ${JSON.stringify(retry)}`);
  console.log(`ok   ${name} version conflict with merge hint, then the retry`);

  const [type, id] = [ref.slice(0, ref.indexOf(":")), ref.slice(ref.indexOf(":") + 1)];
  const uri = `scidex://${type}/${encodeURIComponent(id)}`;
  const read = await client.readResource({ uri });
  const body = JSON.parse(read.contents?.[0]?.text ?? "null");
  if (read.contents?.[0]?.mimeType !== "application/json" || body?.title !== `MCP ${name} hypothesis` || body?.content?.mechanism !== "R47H") fail(`${name}: read ${uri}: ${JSON.stringify(read)}`);
  console.log(`ok   ${name} reads the artifact as a resource`);

  const evs = data(await client.callTool({ name: "events", arguments: { from: "START", types: ["hypothesis.*"], limit: 100 } }), "events");
  if (!evs.poll?.cursor || !evs.poll.events.some((e) => e.ref?.startsWith(ref))) fail(`${name}: events ${JSON.stringify(evs).slice(0, 400)}`);
  console.log(`ok   ${name} events`);

  // A queued call of a substrate tool that declares an output schema is
  // structured content the SDK validates against it (before, text only, and
  // callTool threw -32600).
  const queued = await client.callTool({ name: "tool.data.check_conformance", arguments: {
    csv: "subject,time_h,conc\n1,0,0.74\n1,0.25,2.84\n",
    spec: { columns: [{ name: "subject", type: "integer", required: true }, { name: "time_h", type: "number", unit: "h", min: 0 }, { name: "conc", type: "number", unit: "mg/L", min: 0 }] },
  } }).catch((e) => fail(`${name}: calling the queued substrate tool threw: ${e.message}`));
  const status = queued.structuredContent?.tool_call?.status;
  if (queued.isError || !["queued", "running", "succeeded"].includes(status) || !queued.structuredContent.tool_call.ref?.startsWith("tool_call:")) {
    fail(`${name}: the queued substrate tool answered ${JSON.stringify(queued)}`);
  }
  console.log(`ok   ${name} a queued substrate tool answers its status, structured`);

  if (name === "http") {
    let refused = "";
    try { await client.subscribeResource({ uri }); } catch (e) { refused = String(e.message); }
    if (!refused.includes("subscriptions/listen")) fail(`${name}: resources/subscribe over stateless /mcp: ${refused || "accepted"}`);
    console.log(`ok   ${name} refuses resources/subscribe, naming subscriptions/listen`);
  } else {
    const updated = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no notifications/resources/updated within 30s")), 30000);
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { clearTimeout(timer); resolve(n.params.uri); });
    });
    await client.subscribeResource({ uri });
    const now = JSON.parse((await client.readResource({ uri })).contents[0].text);
    const res = await fetch(SCIDEX_URL + "/graphql", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${SCIDEX_TOKEN}` },
      body: JSON.stringify({ query: `mutation($r: Ref!, $h: String!) { updateArtifact(input: {ref: $r, baseContentHash: $h, title: "edited elsewhere"}) { __typename } }`,
        variables: { r: ref, h: now.contentHash } }),
    });
    const answer = await res.json();
    if (answer.data?.updateArtifact?.__typename !== "WriteSuccess") fail(`${name}: the other client's update: ${JSON.stringify(answer)}`);
    const got = await updated.catch((e) => fail(`${name}: ${e.message}`));
    if (got !== uri) fail(`${name}: notified of ${got}, want ${uri}`);
    const after = JSON.parse((await client.readResource({ uri })).contents[0].text);
    if (after.title !== "edited elsewhere") fail(`${name}: after the notification the resource reads ${JSON.stringify(after)}`);
    console.log(`ok   ${name} subscription: told of another client's edit`);
  }
  await client.close();
}

await exercise("http", new StreamableHTTPClientTransport(new URL(SCIDEX_URL + "/mcp"), {
  requestInit: { headers: { Authorization: `Bearer ${SCIDEX_TOKEN}` } },
}));
if (SCIDEX_BIN) {
  await exercise("stdio", new StdioClientTransport({
    command: SCIDEX_BIN, args: ["mcp"],
    env: { ...process.env, SCIDEX_TOKEN, DATABASE_URL, SCIDEX_JWT_SECRET },
  }));
}
console.log("ok   done");
