// Validates a JSON document against a JSON Schema (draft-07) with ajv 8, which
// compiles patterns as Unicode regular expressions, as NIST's OSCAL schemas
// need. Usage: node validate-oscal.mjs SCHEMA.json DOCUMENT.json
// Exit 0: valid. Exit 1: invalid, each error on stderr. Exit 2: usage or I/O.
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const [schemaPath, docPath] = process.argv.slice(2);
if (!schemaPath || !docPath) {
  console.error('usage: node validate-oscal.mjs SCHEMA.json DOCUMENT.json');
  process.exit(2);
}
let schema, doc;
try {
  schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
  doc = JSON.parse(readFileSync(docPath, 'utf8'));
} catch (e) {
  console.error(`reading the input: ${e.message}`);
  process.exit(2);
}
const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: true });
addFormats(ajv);
const validate = ajv.compile(schema);
if (validate(doc)) {
  console.log('valid');
  process.exit(0);
}
for (const e of validate.errors.slice(0, 50)) {
  console.error(`${e.instancePath || '/'}: ${e.message} ${JSON.stringify(e.params)}`);
}
process.exit(1);
