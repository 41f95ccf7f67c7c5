// The reference for bench/focus: DuckDB reads the same FOCUS file with
// read_csv and computes the same showback (billed and effective cost and
// rows by team and month), all threads of the machine.
//   node duckdb_showback.mjs FILE
// Prints one JSON line: seconds and the result's size.
import { DuckDBInstance } from '@duckdb/node-api';

const file = process.argv[2];
if (!file) {
  console.error('usage: node duckdb_showback.mjs FILE');
  process.exit(2);
}
const started = performance.now();
const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
const quoted = file.replaceAll("'", "''");
const reader = await conn.runAndReadAll(`
  SELECT json_extract_string(Tags, '$."causeway-team"') AS team,
         strftime(BillingPeriodStart, '%Y-%m') AS month,
         count(*) AS rows, sum(BilledCost) AS billed, sum(EffectiveCost) AS effective
  FROM read_csv('${quoted}', header = true)
  GROUP BY ALL ORDER BY ALL`);
const rows = reader.getRowObjectsJson();
const seconds = (performance.now() - started) / 1000;
let total = 0;
for (const r of rows) total += Number(r.rows);
console.log(JSON.stringify({ seconds: Number(seconds.toFixed(3)), groups: rows.length, rows: total,
                             first: rows[0] }));
