// A real OpenID Connect provider for the identity tests (oauth2-mock-server):
// discovery, JWKS, and a token endpoint whose request fields choose the
// claims, so a test can ask for exactly the token it needs.
//
//   node idp.mjs PORT      prints "issuer http://127.0.0.1:PORT" when ready
//
// POST /token (grant_type=client_credentials) fields: email, groups (JSON
// array), audience, expires_in (seconds, may be negative), issuer.
// A browser signing in (authorization code with PKCE, the console's way)
// becomes LOGIN_EMAIL with the groups LOGIN_GROUPS (a JSON array) from the
// environment: the authorize endpoint asks no one.
// The first key is RS256; with ES256=1 in the environment an ES256 key is
// the one tokens are signed with.
import { OAuth2Server } from 'oauth2-mock-server';

const port = Number(process.argv[2] || 0);
const server = new OAuth2Server();
await server.issuer.keys.generate(process.env.ES256 === '1' ? 'ES256' : 'RS256');
server.service.on('beforeTokenSigning', (token, req) => {
  const b = { ...(req.body || {}) };
  if (b.grant_type === 'authorization_code' && process.env.LOGIN_EMAIL) {
    b.email = process.env.LOGIN_EMAIL;
    b.groups = process.env.LOGIN_GROUPS || '[]';
  }
  const now = Math.floor(Date.now() / 1000);
  if (b.email) token.payload.email = b.email;
  if (b.groups) token.payload.groups = JSON.parse(b.groups);
  token.payload.aud = b.audience || 'causeway';
  token.payload.sub = b.email || 'service';
  if (b.expires_in !== undefined) token.payload.exp = now + Number(b.expires_in);
  if (b.issuer) token.payload.iss = b.issuer;
});
await server.start(port, '127.0.0.1');
// Loopback by address, as the tests' configuration names it.
server.issuer.url = `http://127.0.0.1:${server.address().port}`;
console.log(`issuer ${server.issuer.url}`);
const stop = async () => {
  await server.stop();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
