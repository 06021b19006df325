#!/usr/bin/env node
// A real OpenID Provider for the tests: the npm `oidc-provider` package (a certified implementation), configured
// as a team's IdP would be for the tracker: dynamic client registration for MCP clients, resource indicators
// (RFC 8707) that issue JWT access tokens for the tracker's /mcp with its scopes, refresh tokens, and a client for
// the tracker's board. People sign in through its own development pages (any login name, any password).
//
// Input: one JSON document as argv[2]:
//   {"port": N, "resource": "http://127.0.0.1:T/mcp", "boardRedirect": "http://127.0.0.1:T/board/signin/idp/back",
//    "boardSecret": "..."}
// Prints {"issuer": "http://127.0.0.1:N"} once it listens; runs until killed.
//
// Accounts: the login name is the account id and, with @example.com when it has no @, its e-mail address;
// two names give hostile e-mail claims: "surrogate" (a lone UTF-16 surrogate in it) and "oversized" (400 characters).

import Provider from "oidc-provider";

const spec = JSON.parse(process.argv[2]);
const issuer = `http://127.0.0.1:${spec.port}`;

function emailOf(id) {
  if (id === "surrogate") return "a\ud800b@example.com";
  if (id === "oversized") return `${"a".repeat(400)}@example.com`;
  return id.includes("@") ? id : `${id}@example.com`;
}

const configuration = {
  clients: [
    {
      client_id: "bee-board",
      client_secret: spec.boardSecret,
      redirect_uris: [spec.boardRedirect],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: emailOf(id), email_verified: true, name: id };
      },
    };
  },
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
  scopes: ["openid", "offline_access", "email", "profile", "tracker:read", "tracker:write"],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => spec.resource,
      useGrantedResource: () => true,
      getResourceServerInfo(ctx, resourceIndicator) {
        if (resourceIndicator !== spec.resource) {
          throw new Provider.errors.InvalidTarget();
        }
        return {
          scope: "tracker:read tracker:write",
          audience: spec.resource,
          accessTokenTTL: 600,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        };
      },
    },
  },
  async issueRefreshToken(ctx, client) {
    return client.grantTypeAllowed("refresh_token");
  },
  async extraTokenClaims(ctx, token) {
    return token.accountId ? { email: emailOf(token.accountId) } : undefined;
  },
  async loadExistingGrant(ctx) {
    // Every requested scope and resource is granted once the person continues at the consent page.
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    return undefined;
  },
  ttl: { AccessToken: 600, AuthorizationCode: 120, IdToken: 600, RefreshToken: 86400, Interaction: 600, Session: 3600, Grant: 86400 },
};

const provider = new Provider(issuer, configuration);
provider.on("server_error", (ctx, error) => process.stderr.write(`server_error: ${error?.stack ?? error}\n`));
provider.listen(spec.port, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ issuer }) + "\n");
});
