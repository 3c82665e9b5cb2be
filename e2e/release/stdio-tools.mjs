// Drives a verifier over MCP stdio (newline-delimited JSON-RPC) with
// initialize and tools/list, and checks that the tools it lists are the ones
// the bundle manifest lists. Run by ../../.ci/release.sh, two ways:
//
//   node stdio-tools.mjs --bundle DIR --data-dir D
//       DIR is an unpacked .mcpb: the command and arguments are resolved from
//       its manifest.json by @anthropic-ai/mcpb's own getMcpConfigForManifest,
//       as Claude Desktop resolves them, with user_config.data_dir = D; D must
//       hold keys/ afterwards (the argument reached the binary).
//   node stdio-tools.mjs --manifest FILE -- COMMAND ARGS...
//       runs COMMAND ARGS (e.g. `podman run -i IMAGE ...`).
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { getMcpConfigForManifest } from "@anthropic-ai/mcpb";

function fail(msg) {
  console.error("stdio-tools: " + msg);
  process.exit(1);
}

const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : undefined;
};

let command, args, manifest, dataDir;
const bundle = opt("--bundle");
if (bundle) {
  dataDir = opt("--data-dir");
  if (!dataDir) fail("--bundle needs --data-dir");
  manifest = JSON.parse(readFileSync(join(bundle, "manifest.json"), "utf8"));
  const config = await getMcpConfigForManifest({
    manifest,
    extensionPath: bundle,
    systemDirs: { HOME: process.env.HOME ?? "/nonexistent" },
    userConfig: { data_dir: dataDir },
    pathSeparator: "/",
  });
  if (!config) fail("the manifest gives no MCP configuration for this platform");
  command = config.command;
  args = config.args ?? [];
} else {
  const sep = argv.indexOf("--");
  const file = opt("--manifest");
  if (!file || sep < 0 || sep + 1 >= argv.length) fail("usage: --manifest FILE -- COMMAND ARGS...");
  manifest = JSON.parse(readFileSync(file, "utf8"));
  [command, ...args] = argv.slice(sep + 1);
}
console.log(`stdio-tools: ${command} ${args.join(" ")}`);

const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const timer = setTimeout(() => {
  child.kill("SIGKILL");
  fail("no answer within 60 s");
}, 60_000);
child.on("error", (e) => fail(`starting ${command}: ${e.message}`));

const pending = new Map();
let buf = "";
child.stdout.setEncoding("utf8");
child.stdout.on("data", (chunk) => {
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl).trim();
    buf = buf.slice(nl + 1);
    if (!line) continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      fail(`a line that is not JSON on stdout: ${line.slice(0, 200)}`);
    }
    if (msg.id !== undefined && pending.has(msg.id)) {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    }
  }
});

let nextId = 1;
function request(method, params) {
  const id = nextId++;
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  return new Promise((resolve) => pending.set(id, resolve));
}

const init = await request("initialize", {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "release-e2e", version: "0" },
});
if (init.error) fail(`initialize: ${JSON.stringify(init.error)}`);
console.log(`stdio-tools: ${init.result.serverInfo.name} ${init.result.serverInfo.version}, protocol ${init.result.protocolVersion}`);
child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");

const list = await request("tools/list", {});
if (list.error) fail(`tools/list: ${JSON.stringify(list.error)}`);
const got = list.result.tools.map((t) => t.name).sort();
const want = manifest.tools.map((t) => t.name).sort();
if (JSON.stringify(got) !== JSON.stringify(want)) {
  fail(`tools/list answers ${JSON.stringify(got)}; the manifest lists ${JSON.stringify(want)}`);
}
console.log(`stdio-tools: tools/list: ${got.join(", ")}`);

child.stdin.end();
const code = await new Promise((resolve) => child.on("exit", (c) => resolve(c)));
clearTimeout(timer);
if (code !== 0) fail(`the server exited with ${code} after stdin closed`);
if (dataDir) {
  const keys = readdirSync(join(dataDir, "keys"));
  if (keys.length === 0) fail(`no key in ${dataDir}/keys: user_config.data_dir did not reach the binary`);
}
console.log("stdio-tools: ok");
