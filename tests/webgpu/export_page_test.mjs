// `rlx export --target webgpu` end to end: exports a BERT fixture, then runs what it wrote
//   1. in Node on Dawn (the npm webgpu package) with WebGPU's validation on — plan.json and
//      rlx-webgpu.js fed the fixture's token ids;
//   2. in headless Chromium (Debian's, its WebGPU on SwiftShader): the page itself, typing the
//      fixture's texts, tokenizing them in JavaScript and embedding them; a screenshot is saved.
// Both are checked against the fixture's reference (Hugging Face token ids, PyTorch embeddings).
//
//   node export_page_test.mjs RLX FIXTURE_DIR WORK_DIR
// Exits 77 (skipped) when neither Dawn nor Chromium is here, 1 on any mismatch.
import { spawnSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { pathToFileURL } from 'url';

import { chromiumPath, openPage, serve } from './page_driver.mjs';

const [rlx, fixture, work] = process.argv.slice(2);
if (!work) {
  console.error('usage: node export_page_test.mjs RLX FIXTURE_DIR WORK_DIR');
  process.exit(2);
}
const TOLERANCE = 1e-4;  // f32 embeddings against PyTorch's, padded batch against one text alone
const expected = JSON.parse(fs.readFileSync(path.join(fixture, 'expected.json'), 'utf8'));
const cases = expected.cases.filter(c => c.text !== undefined && c.embedding);
let failed = false;
const fail = msg => { console.log(`FAIL ${msg}`); failed = true; };

// ---- export ----
const dir = path.join(work, 'export');
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const ex = spawnSync(rlx, ['export', '--target', 'webgpu', fixture, '-o', dir, '--json'], { encoding: 'utf8' });
if (ex.status !== 0) {
  console.log(`FAIL rlx export: ${ex.stderr}`);
  process.exit(1);
}
const plan = JSON.parse(fs.readFileSync(path.join(dir, 'plan.json'), 'utf8'));
const [B, S] = plan.inputs.find(t => t.name === 'input_ids').shape;
if (S !== expected.max_tokens) fail(`the export's length S=${S} is not the model's ${expected.max_tokens} tokens`);
console.log(`exported ${JSON.parse(ex.stdout).files.length} files: ${plan.dispatches.length} dispatches, ${plan.kernels.length} kernels, batch ${B} × ${S} tokens`);

const server = await serve(dir);
const base = server.base;

function compare(where, got, c) {
  let worst = 0;
  for (let i = 0; i < c.embedding.length; ++i) worst = Math.max(worst, Math.abs(got[i] - c.embedding[i]));
  if (!(worst <= TOLERANCE)) fail(`${where}: ${c.name}: embedding differs from the reference by ${worst}`);
  return worst;
}

// ---- 1. Node + Dawn: the module on the fixture's ids ----
async function dawn() {
  const module = process.env.RLX_WEBGPU_MODULE || path.join(process.env.HOME ?? '', '.cache/rlx-npm/node_modules/webgpu/index.js');
  if (!fs.existsSync(module)) return console.log(`SKIP node/Dawn: ${module} is missing (make setup installs the npm webgpu package)`), false;
  process.env.EGL_PLATFORM ??= 'surfaceless';
  const { create, globals } = await import(pathToFileURL(module).href);
  Object.assign(globalThis, globals);
  const { loadPlan } = await import(pathToFileURL(path.join(dir, 'rlx-webgpu.js')).href);
  let model = null, why = [];
  for (const backend of ['vulkan', 'opengles']) {
    try {
      model = await loadPlan(base, { gpu: create([`backend=${backend}`]) });
      break;
    } catch (e) {
      why.push(`${backend}: ${e.message}`);
    }
  }
  if (!model) return fail(`node/Dawn: ${why.join('; ')}`), true;
  let worst = 0;
  for (let at = 0; at < cases.length; at += B) {
    const input_ids = new Int32Array(B * S), attention_mask = new Int32Array(B * S), token_type_ids = new Int32Array(B * S);
    const rows = cases.slice(at, at + B);
    rows.forEach((c, r) => c.ids.forEach((id, j) => { input_ids[r * S + j] = id; attention_mask[r * S + j] = 1; }));
    const y = (await model.run({ input_ids, attention_mask, token_type_ids }))[plan.outputs[0].name];
    const dim = plan.outputs[0].shape[1];
    rows.forEach((c, r) => { worst = Math.max(worst, compare('node/Dawn', y.subarray(r * dim, (r + 1) * dim), c)); });
  }
  console.log(`node/Dawn (${model.adapter}): ${cases.length} embeddings, max |diff| ${worst.toExponential(2)} against the reference`);
  model.destroy();
  return true;
}

// ---- 2. headless Chromium: the page itself, given the fixture's texts ----
async function chromium() {
  if (!chromiumPath()) return console.log('SKIP Chromium: not installed (apt-get install chromium)'), false;
  const texts = cases.map(c => c.text);
  let got;
  try {
    const r = await openPage(`${base}index.html?texts=${encodeURIComponent(JSON.stringify(texts))}`, { profile: path.join(work, 'profile') });
    fs.writeFileSync(path.join(work, 'page.png'), r.png);
    got = r.value;
  } catch (e) {
    if (e.png) fs.writeFileSync(path.join(work, 'page.png'), e.png);
    return fail(`Chromium: ${e.message}`), true;
  }
  let worst = 0;
  cases.forEach((c, i) => {
    // the reference truncates to the model's max_tokens, the export's S (its default)
    if (JSON.stringify(got.ids[i]) !== JSON.stringify(c.ids))
      fail(`Chromium: ${c.name}: token ids ${JSON.stringify(got.ids[i])} are not Hugging Face's ${JSON.stringify(c.ids)}`);
    else worst = Math.max(worst, compare('Chromium', got.embeddings[i], c));
  });
  console.log(`Chromium (${got.adapter}): ${texts.length} texts tokenized and embedded in ${got.ms.toFixed(0)} ms, max |diff| ${worst.toExponential(2)}; screenshot ${path.join(work, 'page.png')}`);
  return true;
}

let ran = false;
try {
  ran = (await dawn()) | ran;
  ran = (await chromium()) | ran;
} catch (e) {
  fail(e.stack ?? String(e));
} finally {
  server.close();
}
if (failed) process.exit(1);
if (!ran) process.exit(77);
console.log('ok');
process.exit(0);
