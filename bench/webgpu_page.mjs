// The sentence-embedding page of `rlx export --target webgpu` timed in headless Chromium: saves
// the all-MiniLM-L6-v2 architecture with seeded random weights (`rlx bench minilm --save`),
// exports it for batch B × S tokens, opens the page with N sentences repeated R times and
// prints the p50 of the page's own timing (model.run of every batch, tokenizing excluded) with
// a screenshot. Chromium's WebGPU here is SwiftShader (a CPU), so this times the path, not a GPU.
//
//   node bench/webgpu_page.mjs [--rlx build/bin/rlx] [--batch 4] [--seq 64] [--repeat 5] [--out DIR] [--json]
import { spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { fileURLToPath } from 'url';

import { openPage, serve } from '../tests/webgpu/page_driver.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const opt = { rlx: path.join(here, '../build/bin/rlx'), batch: 4, seq: 64, repeat: 5, out: path.join(os.tmpdir(), 'rlx-webgpu-page'), json: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; ++i) {
  const k = argv[i].replace(/^--/, '');
  if (k === 'json') opt.json = true;
  else if (k in opt) opt[k] = typeof opt[k] === 'number' ? Number(argv[++i]) : argv[++i];
  else throw new Error(`webgpu_page: unknown option ${argv[i]}`);
}
const sh = (args, what) => {
  const r = spawnSync(opt.rlx, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${what}: ${r.stderr || r.error}`);
  return r.stdout;
};
fs.rmSync(opt.out, { recursive: true, force: true });
const model = path.join(opt.out, 'minilm-l6-random'), dir = path.join(opt.out, 'export');
sh(['bench', 'minilm', '--batch', '1', '--seq', '16', '--runs', '1', '--save', model], 'rlx bench minilm --save');
sh(['export', '--target', 'webgpu', model, '-o', dir, '--bind', `B=${opt.batch},S=${opt.seq}`], 'rlx export');
// sentences of the placeholder vocabulary (w5 … w30521), S - 2 words each: full rows
const words = n => Array.from({ length: n }, (_, i) => `w${1000 + ((i * 7919) % 29000)}`).join(' ');
const texts = Array.from({ length: opt.batch }, (_, r) => words(opt.seq - 2 - r));
const server = await serve(dir);
const p50 = times => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];

// The same plan in Node on Dawn (the npm webgpu package: Vulkan, else OpenGL ES on llvmpipe here)
async function dawn() {
  const module = process.env.RLX_WEBGPU_MODULE || path.join(os.homedir(), '.cache/rlx-npm/node_modules/webgpu/index.js');
  if (!fs.existsSync(module)) return null;
  process.env.EGL_PLATFORM ??= 'surfaceless';
  const { create, globals } = await import(module);
  Object.assign(globalThis, globals);
  const { loadPlan } = await import(path.join(dir, 'rlx-webgpu.js'));
  for (const backend of ['vulkan', 'opengles']) {
    const m = await loadPlan(server.base, { gpu: create([`backend=${backend}`]) }).catch(() => null);
    if (!m) continue;
    const n = opt.batch * opt.seq, feeds = { input_ids: Int32Array.from({ length: n }, (_, i) => 1000 + ((i * 7919) % 29000)), attention_mask: new Int32Array(n).fill(1), token_type_ids: new Int32Array(n) };
    const times = [];
    for (let i = 0; i <= opt.repeat; ++i) {
      const t0 = performance.now();
      await m.run(feeds);
      if (i) times.push(performance.now() - t0);  // the first run warms up
    }
    m.destroy();
    return { adapter: m.adapter, p50_ms: p50(times), times_ms: times };
  }
  return null;
}

try {
  const { value, png } = await openPage(`${server.base}index.html?repeat=${opt.repeat}&texts=${encodeURIComponent(JSON.stringify(texts))}`, { profile: path.join(opt.out, 'profile') });
  fs.writeFileSync(path.join(opt.out, 'page.png'), png);
  const row = { workload: 'minilm-l6 page', batch: value.batch, seq: value.length, chromium: { adapter: value.adapter, p50_ms: p50(value.times), times_ms: value.times },
    node_dawn: await dawn(), screenshot: path.join(opt.out, 'page.png') };
  if (opt.json) console.log(JSON.stringify(row));
  else {
    console.log(`MiniLM-L6, batch ${row.batch} × ${row.seq} tokens, p50 of ${opt.repeat} runs:`);
    console.log(`  headless Chromium (${row.chromium.adapter}): ${row.chromium.p50_ms.toFixed(1)} ms; screenshot ${row.screenshot}`);
    if (row.node_dawn) console.log(`  Node + Dawn (${row.node_dawn.adapter}): ${row.node_dawn.p50_ms.toFixed(1)} ms`);
  }
} finally {
  server.close();
}
