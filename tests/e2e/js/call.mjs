#!/usr/bin/env node
// Drive an MCP host through the official TypeScript SDK client (the client inside Claude Code, Cursor, VS Code
// and the MCP Inspector), so the tests see results exactly as those clients see them.
//
// Input: one JSON document on stdin (or a file named by argv[2]):
//   {"server": {"stdio": {"command": "...", "args": [...], "cwd": "...", "env": {...}}}
//           | {"http": {"url": "http://.../mcp", "headers": {"Authorization": "Bearer ..."}}},
//    "listTools": true,                       // default true; the client validates outputs only after listing
//    "calls": [{"name": "tool", "arguments": {...}}, ...],
//    "prompts": [{"name": "prompt", "arguments": {...}}, ...],  // optional: then prompts/list and each prompts/get
//    "reads": ["resource URI", ...]}         // optional: resources/read of each, after the calls
// Output: one JSON document on stdout:
//   {"serverVersion": {...}, "instructions": "..." | null, "tools": [...] | null,
//    "calls": [{"result": CallToolResult} | {"thrown": {"class", "code", "message", "data"}}, ...],
//    "promptList": [...] | null, "prompts": [{"result": GetPromptResult} | {"thrown": {...}}, ...],
//    "reads": [{"result": ReadResourceResult} | {"thrown": {...}}, ...]}
// A call that throws (the client's own output-schema validation included) is reported, never swallowed, and the
// remaining calls still run. Failing to connect exits 1 with {"connectError": {...}}.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function describe(error) {
  if (!(error instanceof Error)) {
    return { class: typeof error, code: null, message: String(error), data: null };
  }
  return {
    class: error.constructor?.name ?? error.name,
    code: error.code ?? null,
    message: error.message,
    data: error.data ?? null,
  };
}

function transportFor(server) {
  if (server.stdio) {
    const { command, args = [], cwd, env } = server.stdio;
    // The SDK merges env over its safe default environment (PATH, HOME, ...); the host's stderr goes to ours.
    return new StdioClientTransport({ command, args, cwd, env, stderr: "inherit" });
  }
  if (server.http) {
    const { url, headers = {} } = server.http;
    return new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  }
  throw new Error("server needs a 'stdio' or an 'http' entry");
}

function write(document) {
  return new Promise((resolve) => process.stdout.write(JSON.stringify(document) + "\n", resolve));
}

async function main() {
  const spec = JSON.parse(readFileSync(process.argv[2] ?? 0, "utf8"));
  const client = new Client({ name: "bee-foreign-client-test", version: "0.0.0" });
  try {
    await client.connect(transportFor(spec.server));
  } catch (error) {
    await write({ connectError: describe(error) });
    process.exit(1);
  }
  const out = {
    serverVersion: client.getServerVersion() ?? null,
    instructions: client.getInstructions() ?? null,
    tools: null,
    calls: [],
    promptList: null,
    prompts: [],
    reads: [],
  };
  try {
    if (spec.listTools ?? true) {
      out.tools = (await client.listTools()).tools;
    }
    for (const call of spec.calls ?? []) {
      try {
        out.calls.push({ result: await client.callTool({ name: call.name, arguments: call.arguments ?? {} }) });
      } catch (error) {
        out.calls.push({ thrown: describe(error) });
      }
    }
    if (spec.prompts) {
      out.promptList = (await client.listPrompts()).prompts;
      for (const prompt of spec.prompts) {
        try {
          out.prompts.push({ result: await client.getPrompt({ name: prompt.name, arguments: prompt.arguments ?? {} }) });
        } catch (error) {
          out.prompts.push({ thrown: describe(error) });
        }
      }
    }
    for (const uri of spec.reads ?? []) {
      try {
        out.reads.push({ result: await client.readResource({ uri }) });
      } catch (error) {
        out.reads.push({ thrown: describe(error) });
      }
    }
  } finally {
    await client.close();
  }
  await write(out);
}

main().catch(async (error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(2);
});
