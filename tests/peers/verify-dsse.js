// An independent verifier of provenance records: Node.js's own crypto and
// DSSE's pre-authentication encoding written out here, sharing nothing with
// Causeway. Usage: node verify-dsse.js RECORD.json KEYS.json (a JWKS).
// Prints "verified JOB_ID" and exits 0 when a signature verifies with a key
// of the set; exits 1 otherwise.
import fs from 'node:fs';
import crypto from 'node:crypto';

const [recordPath, keysPath] = process.argv.slice(2);
const envelope = JSON.parse(fs.readFileSync(recordPath, 'utf8'));
const jwks = JSON.parse(fs.readFileSync(keysPath, 'utf8'));

// PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
function pae(type, body) {
  const t = Buffer.from(type, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${t.length} `), t, Buffer.from(` ${body.length} `), body]);
}

const body = Buffer.from(envelope.payload, 'base64');
const message = pae(envelope.payloadType, body);
let verified = false;
for (const s of envelope.signatures || []) {
  for (const jwk of jwks.keys || []) {
    if (s.keyid && jwk.kid !== s.keyid) continue;
    const key = crypto.createPublicKey({ key: jwk, format: 'jwk' });
    if (crypto.verify('sha256', message, { key, dsaEncoding: 'der' }, Buffer.from(s.sig, 'base64'))) verified = true;
  }
}
if (!verified || envelope.payloadType !== 'application/vnd.in-toto+json') {
  console.log('rejected');
  process.exit(1);
}
const statement = JSON.parse(body.toString('utf8'));
if (statement._type !== 'https://in-toto.io/Statement/v1') {
  console.log('rejected: not an in-toto Statement');
  process.exit(1);
}
console.log('verified ' + statement.predicate.buildDefinition.internalParameters.job_id);
