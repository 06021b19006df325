#!/usr/bin/env node
// Sign in to an MCP server with the official TypeScript SDK client's OAuth support (an OAuthClientProvider held in
// memory, as an editor holds one), then make tool calls: the tests drive the browser part.
//
// Input: one JSON document as argv[2]:
//   {"url": "http://.../mcp", "redirectUrl": "http://127.0.0.1:PORT/callback", "clientName": "...",
//    "clientMetadataUrl": "https://..."?,            // a Client ID Metadata Document instead of registration
//    "calls": [{"name": "tool", "arguments": {...}}, ...]}
// Protocol on stdout, one JSON document a line:
//   {"authorize": "<url>"}   the client asks the user agent to open this; the test answers on stdin with one line
//                            {"callback": "<the URL the browser was sent back to>"}
//   {"done": {"calls": [{"result": CallToolResult} | {"thrown": {...}}], "tokens": {...}, "registered": {...}}}
//   {"failed": {"class", "message"}}  (exit 1)

import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const spec = JSON.parse(process.argv[2]);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function say(document) {
  return new Promise((resolve) => process.stdout.write(JSON.stringify(document) + "\n", resolve));
}

function describe(error) {
  return { class: error?.constructor?.name ?? typeof error, message: String(error?.message ?? error) };
}

class MemoryProvider {
  constructor() {
    this.saved = {};
    if (spec.clientMetadataUrl) {
      this.clientMetadataUrl = spec.clientMetadataUrl;
    }
  }
  get redirectUrl() {
    return spec.redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: spec.clientName,
      redirect_uris: [spec.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(info) {
    this.saved.client = info;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(tokens) {
    this.saved.tokens = tokens;
  }
  async redirectToAuthorization(url) {
    this.authorizeUrl = url.href;
  }
  saveCodeVerifier(verifier) {
    this.saved.verifier = verifier;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
}

async function connected(provider) {
  const client = new Client({ name: "bee-oauth-test", version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(spec.url), { authProvider: provider }));
  return client;
}

async function main() {
  const provider = new MemoryProvider();
  let client;
  try {
    client = await connected(provider);
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || !provider.authorizeUrl) {
      throw error;
    }
    await say({ authorize: provider.authorizeUrl });
    const answer = JSON.parse((await lines.next()).value);
    const back = new URL(answer.callback);
    if (back.searchParams.get("error")) {
      throw new Error(`the server refused: ${back.searchParams.get("error")}: ${back.searchParams.get("error_description")}`);
    }
    const transport = new StreamableHTTPClientTransport(new URL(spec.url), { authProvider: provider });
    await transport.finishAuth(back.searchParams.get("code"));
    client = new Client({ name: "bee-oauth-test", version: "0.0.0" });
    await client.connect(transport);
  }
  const calls = [];
  try {
    for (const call of spec.calls ?? []) {
      try {
        calls.push({ result: await client.callTool({ name: call.name, arguments: call.arguments ?? {} }) });
      } catch (error) {
        calls.push({ thrown: describe(error) });
      }
    }
  } finally {
    await client.close();
  }
  await say({ done: { calls, tokens: provider.saved.tokens ?? null, registered: provider.saved.client ?? null } });
  process.exit(0);
}

main().catch(async (error) => {
  await say({ failed: describe(error) });
  process.exit(1);
});
