// Verifies a Causeway workload token with the jose library, the way a cloud
// trusting Causeway as an OIDC issuer would: discovery, then the JWKS it
// names, then signature, issuer, audience and expiry.
//
//   node verify.mjs ISSUER AUDIENCE TOKEN   prints {"ok": true, "payload": ..., "alg": ...}
//                                           or {"ok": false, "code": ..., "error": ...}
import { createRemoteJWKSet, jwtVerify } from 'jose';

const [issuer, audience, token] = process.argv.slice(2);
try {
  const discovery = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  if (discovery.issuer !== issuer) throw new Error(`discovery names issuer ${discovery.issuer}`);
  const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));
  const { payload, protectedHeader } = await jwtVerify(token, jwks, {
    issuer,
    audience,
    algorithms: discovery.id_token_signing_alg_values_supported,
  });
  console.log(JSON.stringify({ ok: true, payload, alg: protectedHeader.alg, kid: protectedHeader.kid }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, code: e.code || 'ERROR', error: String(e.message) }));
}
