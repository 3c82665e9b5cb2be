// ajv 8 with allErrors (every failure collected, as engine/schema does) on
// the invoice of engine/schema/testdata/peer-invoice: the JavaScript peer of
// scripts/schemabench.sh. The schema is compiled once and each document
// decoded once; after a warm-up round (the JIT), three timed rounds of
// SECONDS each.
// usage: NODE_PATH=<dir with ajv> node bench_ajv.js [SECONDS=2] [DOCS_DIR]
// prints one line per document: <valid|invalid|invalid50> <CPU ns per
// validation, median of the three rounds>
"use strict";
const fs = require("fs");
const path = require("path");
const Ajv2020 = require("ajv/dist/2020").default;

const secs = Number(process.argv[2] || 2);
const dir = process.argv[3] || path.join(__dirname, "..", "..", "engine", "schema", "testdata", "peer-invoice");
const load = (name) => JSON.parse(fs.readFileSync(path.join(dir, name), "utf8"));

// documents: each file and the number of failures ajv must report for it.
const documents = [
  ["valid", "invoice.valid.json", 0],
  ["invalid", "invoice.invalid.json", 1],
  ["invalid50", "invoice.invalid50.json", 50],
];

// round validates doc in batches of 1000 until secs of wall time passed and
// returns the CPU nanoseconds per validation.
function round(validate, doc) {
  let n = 0;
  let sink = 0;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const limit = BigInt(Math.round(secs * 1e9));
  while (process.hrtime.bigint() - t0 < limit) {
    for (let i = 0; i < 1000; i++) sink += validate(doc) ? 1 : 0;
    n += 1000;
  }
  const c = process.cpuUsage(c0);
  if (sink < 0) console.log(sink); // keeps the calls observable
  return ((c.user + c.system) * 1000) / n;
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const validate = new Ajv2020({ allErrors: true }).compile(load("invoice.schema.json"));
for (const [name, file, failures] of documents) {
  const doc = load(file);
  const ok = validate(doc);
  const got = ok ? 0 : validate.errors.length;
  if (ok !== (failures === 0) || got !== failures) {
    throw new Error(`ajv reports ${got} failures for ${file}, want ${failures}`);
  }
  round(validate, doc);
  const ns = [0, 1, 2].map(() => round(validate, doc));
  console.log(`${name} ${median(ns).toFixed(1)}`);
}
