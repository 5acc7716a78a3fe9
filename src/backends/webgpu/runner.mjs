// The webgpu device's GPU side: a Node process that owns a WebGPU device (the npm `webgpu`
// package: Dawn) and does what the rlx process asks over its stdin/stdout — Dawn's node binding
// exports no C API, so the device lives here and the plan is driven from C++ (bridge.h). It runs
// as one module after web/rlx-webgpu.js (CMake joins them), whose functions it calls.
//
// Frames both ways: u32 length of what follows, then (requests) u32 op and its payload or
// (replies) u32 status (0 ok, 1 error) and the reply's payload or the error's text.
// Little-endian; ids are chosen by the caller.
//
//   1 hello    JSON {module, backends[]}        → JSON {adapter, backend, limits}
//   2 buffer   u32 id, f64 bytes                 a storage buffer (copy source and destination)
//   3 write    u32 id, f64 offset, bytes         queue.writeBuffer
//   4 pipeline u32 id, u32 bindings, WGSL text   compiled; its layout: group 0 = `bindings`
//                                                storage buffers, group 1 = one uniform buffer
//   5 program  u32 id, u32 n, n × (u32 pipeline, u32 nb, nb × u32 buffer, u32 nw, nw × u32 word,
//              u32 gx, gy, gz)                   bind groups and the words' uniform buffer, made once
//   6 run      u32 program                       one compute pass, submitted and waited for
//   7 read     u32 id, f64 offset, f64 bytes     → the bytes
//   8 free     u32 kind (0 buffer, 1 pipeline, 2 program), u32 id
import fs from 'fs';
import { pathToFileURL } from 'url';

let device = null;
const instances = [];  // kept alive: Dawn's device dies with the instance it came from
const buffers_ = new Map(), pipelines = new Map(), programs = new Map();

// stdout is a non-blocking socket to Node: a large reply fills it (EAGAIN) while rlx reads
function write_all(buf) {
  for (let off = 0; off < buf.length;) {
    try {
      off += fs.writeSync(1, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

function reply(status, payload) {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload ?? new Uint8Array(0));
  const head = Buffer.alloc(8);
  head.writeUInt32LE(body.length + 4, 0);
  head.writeUInt32LE(status, 4);
  write_all(head);
  write_all(body);
}

function need(map, id, what) {
  const x = map.get(id);
  if (x === undefined) throw new Error(`no ${what} ${id}`);
  return x;
}

async function hello(req) {
  const { create, globals } = await import(pathToFileURL(req.module).href);
  Object.assign(globalThis, globals);
  const why = [];
  for (const backend of req.backends) {
    // skip_validation: Dawn refuses one buffer bound writable twice in a dispatch even where the
    // ranges are disjoint or the kernel orders its own accesses, and the plans bind one arena
    const gpu = create([`backend=${backend}`, "enable-dawn-features=skip_validation"]);
    instances.push(gpu);
    const adapter = await gpu.requestAdapter({ featureLevel: 'compatibility' }).catch(e => (why.push(`${backend}: ${e.message}`), null));
    if (!adapter) {
      if (why.length === 0 || !why[why.length - 1].startsWith(backend)) why.push(`${backend}: no adapter`);
      continue;
    }
    const L = adapter.limits, want = {};
    for (const k of ['maxComputeWorkgroupSizeX', 'maxComputeWorkgroupSizeY', 'maxComputeWorkgroupSizeZ', 'maxComputeInvocationsPerWorkgroup',
      'maxComputeWorkgroupStorageSize', 'maxStorageBufferBindingSize', 'maxBufferSize', 'maxStorageBuffersPerShaderStage',
      'maxComputeWorkgroupsPerDimension', 'maxBindGroups'])
      want[k] = L[k];
    device = await adapter.requestDevice({ requiredLimits: want });
    device.lost.then(info => { if (info.reason !== 'destroyed') process.stderr.write(`rlx webgpu runner: device lost: ${info.message}\n`); });
    const i = adapter.info ?? {};
    const limits = {};
    for (const k in want) limits[k] = device.limits[k];
    return JSON.stringify({ adapter: [i.description || i.device, i.vendor, i.architecture].filter(Boolean).join(', '), backend, limits });
  }
  throw new Error(`no WebGPU adapter (${why.join('; ')})`);
}

async function pipeline(id, bindings, code) {
  // all read_write: the device binds one arena for a kernel's inputs and outputs (from_spirv.h)
  pipelines.set(id, await makeKernel(device, code, new Array(bindings).fill(true)));
}

// The payload of a program request: n, then each dispatch's pipeline, buffers, words, groups.
function program(id, v) {
  let k = 0;
  const n = v[k++], steps = [];
  for (let s = 0; s < n; ++s) {
    const kernel = need(pipelines, v[k++], 'pipeline');
    const nb = v[k++], buffers = Array.from(v.subarray(k, k + nb), b => need(buffers_, b, 'buffer'));
    k += nb;
    const nw = v[k++], words = v.slice(k, k + nw);
    k += nw;
    steps.push({ kernel, buffers, words, groups: [v[k], v[k + 1], v[k + 2]] });
    k += 3;
  }
  programs.set(id, makeProgram(device, steps));
}

async function read(id, offset, bytes) {
  return Buffer.from(await readBuffer(device, need(buffers_, id, 'buffer'), offset, bytes));
}

async function handle(op, body) {
  const u32 = i => body.readUInt32LE(i), f64 = i => body.readDoubleLE(i);
  switch (op) {
    case 1: return hello(JSON.parse(body.toString('utf8')));
    case 2:
      await checked(device, () => buffers_.set(u32(0), makeBuffer(device, f64(4))));
      return null;
    case 3: {
      const data = body.subarray(12);
      const offset = f64(4), lo = offset - (offset % 4);
      if (lo === offset && data.length % 4 === 0) device.queue.writeBuffer(need(buffers_, u32(0), 'buffer'), offset, data);
      else {  // writeBuffer takes whole words: merge the edges with what is there
        const size = Math.ceil((offset + data.length - lo) / 4) * 4;
        const merged = Buffer.from(await read(u32(0), lo, size));
        data.copy(merged, offset - lo);
        device.queue.writeBuffer(need(buffers_, u32(0), 'buffer'), lo, merged);
      }
      return null;
    }
    case 4: return pipeline(u32(0), u32(4), body.subarray(8).toString('utf8')).then(() => null);
    case 5: {
      const v = new Uint32Array(body.buffer.slice(body.byteOffset + 4, body.byteOffset + body.length));
      await checked(device, async () => program(u32(0), v));
      return null;
    }
    case 6: await checked(device, () => runProgram(device, need(programs, u32(0), 'program'))); return null;
    case 7: return read(u32(0), f64(4), f64(12));
    case 8: {
      const map = [buffers_, pipelines, programs][u32(0)], x = map.get(u32(4));
      if (x && u32(0) === 0) x.destroy();
      if (x && u32(0) === 2) x.uniform.destroy();
      map.delete(u32(4));
      return null;
    }
    default: throw new Error(`unknown request ${op}`);
  }
}

// Requests are served one at a time, in order. What arrives is kept as chunks and joined once
// per frame (a model's weights arrive in many).
let chunks = [], total = 0, busy = false;
async function pump() {
  if (busy) return;
  busy = true;
  for (;;) {
    if (total < 4) break;
    if (chunks[0].length < 4) chunks = [Buffer.concat(chunks, total)];
    const len = chunks[0].readUInt32LE(0);
    if (total < 4 + len) break;
    const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
    const rest = all.subarray(4 + len);
    chunks = rest.length ? [rest] : [];
    total = rest.length;
    const op = all.readUInt32LE(4), body = Buffer.from(all.subarray(8, 4 + len));
    try {
      reply(0, await handle(op, body));
    } catch (e) {
      reply(1, String(e && e.message ? e.message : e));
    }
  }
  busy = false;
}
process.stdin.on('data', chunk => {
  chunks.push(chunk);
  total += chunk.length;
  pump();
});
// Dawn's teardown at a normal exit aborts (std::system_error from a worker thread): leave at once
process.stdin.on('end', () => {
  if (device) device.destroy();
  process.exit(0);
});
