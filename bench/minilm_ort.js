// ONNX Runtime (npm onnxruntime-node, CPU) latency of the MiniLM sentence encoder exported by
// minilm_peers.py: the same shapes, ids, warm-up and run policy as `rlx bench minilm`.
// Prints one JSON object with every timed run, so the caller computes the statistics once for
// every framework.
//
// usage: ORT_NODE=<dir of node_modules/onnxruntime-node> node minilm_ort.js MODEL.onnx
//          [--threads 2] [--batch 1,8,32] [--seq 128] [--warmup 3] [--runs 0] [--min-runs 10]
//          [--min-time 3] [--check INPUT.json]
// --check runs the model once on {"input_ids": [[…]], "attention_mask": [[…]]} and returns the
// output, so the caller can confirm ORT computes what PyTorch does before trusting its timings.
'use strict';
const fs = require('fs');
const ortPath = process.env.ORT_NODE || 'onnxruntime-node';
const ort = require(ortPath);

function options(argv) {
  const o = { threads: 2, batch: '1,8,32', seq: '128', warmup: 3, runs: 0, 'min-runs': 10, 'min-time': 3, check: null };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in o) || i + 1 >= argv.length) throw new Error(`unknown option or missing value: ${argv[i]}`);
    o[key] = typeof o[key] === 'number' ? Number(argv[i + 1]) : argv[i + 1];
  }
  o.batch = o.batch.split(',').map(Number);
  o.seq = o.seq.split(',').map(Number);
  return o;
}

function int64Tensor(rows) {
  const b = rows.length, s = rows[0].length;
  const data = new BigInt64Array(b * s);
  rows.forEach((r, i) => r.forEach((v, j) => { data[i * s + j] = BigInt(v); }));
  return new ort.Tensor('int64', data, [b, s]);
}

// The ids `rlx bench minilm` feeds: 1000 + (i·7919) mod 29000, no padding.
function feeds(batch, seq) {
  const n = batch * seq;
  const ids = new BigInt64Array(n), mask = new BigInt64Array(n).fill(1n);
  for (let i = 0; i < n; i++) ids[i] = BigInt(1000 + (i * 7919) % 29000);
  return { input_ids: new ort.Tensor('int64', ids, [batch, seq]), attention_mask: new ort.Tensor('int64', mask, [batch, seq]) };
}

(async () => {
  const model = process.argv[2];
  const o = options(process.argv.slice(3));
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: o.threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  });
  const out = { ort: require(ortPath + '/package.json').version, threads: o.threads, results: [] };
  if (o.check) {
    const c = JSON.parse(fs.readFileSync(o.check, 'utf8'));
    const r = await session.run({ input_ids: int64Tensor(c.input_ids), attention_mask: int64Tensor(c.attention_mask) });
    const y = r[session.outputNames[0]];
    out.check = { dims: y.dims, data: Array.from(y.data) };
  }
  for (const seq of o.seq) {
    for (const batch of o.batch) {
      const f = feeds(batch, seq);
      for (let i = 0; i < o.warmup; i++) await session.run(f);
      const ms = [];
      const start = process.hrtime.bigint();
      for (;;) {
        const n = ms.length, elapsed = Number(process.hrtime.bigint() - start) / 1e9;
        if (o.runs > 0 ? n >= o.runs : n >= 1000 || (n >= o['min-runs'] && elapsed >= o['min-time'])) break;
        const t = process.hrtime.bigint();
        await session.run(f);
        ms.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      out.results.push({ batch, seq, warmup: o.warmup, ms });
    }
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(`minilm_ort.js: ${e.message}`); process.exit(1); });
