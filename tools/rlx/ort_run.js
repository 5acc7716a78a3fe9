// Runs an ONNX model with onnxruntime-node (CPU) on .npy inputs and writes each output as
// OUT_DIR/<name>.npy — the reference side of `make onnx-parity` — or, with RLX_ORT_BY_INDEX=1, as
// OUT_DIR/<i>.npy in output order with their names in OUT_DIR/names.txt (`rlx diff --against
// onnxruntime`, which embeds this file).
// usage: ORT_NODE=<node_modules/onnxruntime-node> node ort_run.js MODEL.onnx OUT_DIR NAME=FILE.npy …
const fs = require('fs'), path = require('path');
const ort = require(process.env.ORT_NODE || 'onnxruntime-node');

const kinds = { '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array] };

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(file + ': not a .npy file');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const off = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', off, off + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(file + ': Fortran order');
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const [type, A] = kinds[descr] || [];
  if (!type) throw new Error(file + ': dtype ' + descr);
  const data = buf.subarray(off + hlen);
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return new ort.Tensor(type, new A(copy.buffer, 0, copy.length / A.BYTES_PER_ELEMENT), shape);
}

function writeNpy(file, t) {
  const descr = Object.keys(kinds).find(k => kinds[k][0] === t.type);
  const shape = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head[0] = 0x93; head.write('NUMPY', 1, 'latin1'); head[6] = 1; head[7] = 0; head.writeUInt16LE(header.length, 8);
  const d = t.data;
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(d.buffer, d.byteOffset, d.byteLength)]));
}

(async () => {
  const [model, out, ...items] = process.argv.slice(2);
  const feeds = {};
  for (const it of items) { const eq = it.indexOf('='); feeds[it.slice(0, eq)] = readNpy(it.slice(eq + 1)); }
  const s = await ort.InferenceSession.create(model, { executionProviders: ['cpu'], intraOpNumThreads: 2 });
  const res = await s.run(feeds);
  fs.mkdirSync(out, { recursive: true });
  const byIndex = process.env.RLX_ORT_BY_INDEX === '1';
  s.outputNames.forEach((name, i) => {
    const file = byIndex ? `${i}.npy` : name.replace(/[^A-Za-z0-9_.-]/g, '_') + '.npy';
    if (res[name] && kinds[Object.keys(kinds).find(k => kinds[k][0] === res[name].type)]) writeNpy(path.join(out, file), res[name]);
  });
  if (byIndex) fs.writeFileSync(path.join(out, 'names.txt'), s.outputNames.join('\n') + '\n');
  console.log('onnxruntime-node', ort.env.versions.common, ':', s.outputNames.join(', '), '→', out);
})().catch(e => { console.error(e.message || e); process.exit(1); });
