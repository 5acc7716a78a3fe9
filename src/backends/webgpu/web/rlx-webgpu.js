// rlx-webgpu.js — runs RLX's compiled plans on WebGPU. One module for both of its users: RLX's
// `webgpu` device, whose Node runner (runner.mjs, Dawn) drives these functions for the C++ side,
// and the directory `rlx export --target webgpu` writes, whose page loads a plan with loadPlan.
// Uses only the WebGPU API (no Node, no DOM), so it runs wherever navigator.gpu does.

// Validation and out-of-memory errors of what `f` does, thrown as one Error.
export async function checked(device, f) {
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  let thrown = null, result;
  try {
    result = await f();
  } catch (e) {
    thrown = e;
  }
  const validation = await device.popErrorScope();
  const oom = await device.popErrorScope();
  if (thrown) throw thrown;
  if (validation) throw new Error(validation.message);
  if (oom) throw new Error(`out of GPU memory: ${oom.message}`);
  return result;
}

// A compute pipeline of WGSL `code` (entry point `main`): group 0 holds one storage buffer per
// entry of `writes` (read-only where false), group 1 the uniform buffer of the dispatch's words.
// A compile error is thrown with its line of WGSL; `name` says which kernel it was.
export async function makeKernel(device, code, writes, name = 'a kernel') {
  const module = device.createShaderModule({ code });
  const info = await module.getCompilationInfo();
  const errors = info.messages.filter(m => m.type === 'error');
  if (errors.length) {
    const lines = code.split('\n');
    throw new Error(`${name}: ` + errors.map(m => `${m.lineNum}:${m.linePos}: ${m.message}\n    ${lines[m.lineNum - 1] ?? ''}`).join('\n'));
  }
  const storage = writes.map((w, b) => ({ binding: b, visibility: GPUShaderStage.COMPUTE, buffer: { type: w ? 'storage' : 'read-only-storage' } }));
  const groups = [device.createBindGroupLayout({ entries: storage }),
    device.createBindGroupLayout({ entries: [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } }] })];
  return checked(device, async () => {
    const layout = device.createPipelineLayout({ bindGroupLayouts: groups });
    return { pipeline: await device.createComputePipelineAsync({ layout, compute: { module, entryPoint: 'main' } }), groups };
  });
}

// The bind groups of a sequence of dispatches, made once: steps are {kernel (makeKernel's),
// buffers (GPUBuffers in binding order), words (Uint32Array), groups ([x, y, z])}. All words
// live in one uniform buffer, each step's at an aligned offset.
export function makeProgram(device, steps) {
  const align = device.limits.minUniformBufferOffsetAlignment;
  const stride = Math.ceil(Math.max(16, ...steps.map(s => s.words.length * 4)) / align) * align;
  const size = Math.max(stride * steps.length, 16);
  const uniform = device.createBuffer({ size, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const bytes = new Uint8Array(size);
  steps.forEach((s, i) => bytes.set(new Uint8Array(s.words.buffer, s.words.byteOffset, s.words.byteLength), i * stride));
  device.queue.writeBuffer(uniform, 0, bytes);
  const made = steps.map((s, i) => ({
    pipeline: s.kernel.pipeline,
    groups: s.groups,
    sets: [
      device.createBindGroup({ layout: s.kernel.groups[0], entries: s.buffers.map((buffer, j) => ({ binding: j, resource: { buffer } })) }),
      device.createBindGroup({ layout: s.kernel.groups[1], entries: [{ binding: 0, resource: { buffer: uniform, offset: i * stride, size: Math.max(16, s.words.length * 4) } }] }),
    ],
  }));
  return { steps: made, uniform };
}

// One compute pass of every step in order (WebGPU orders dispatches that share a buffer),
// submitted and waited for.
export async function runProgram(device, program) {
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  for (const s of program.steps) {
    pass.setPipeline(s.pipeline);
    pass.setBindGroup(0, s.sets[0]);
    pass.setBindGroup(1, s.sets[1]);
    pass.dispatchWorkgroups(s.groups[0], s.groups[1], s.groups[2]);
  }
  pass.end();
  device.queue.submit([enc.finish()]);
  await device.queue.onSubmittedWorkDone();
}

// `bytes` bytes of `buffer` from `offset`, as a Uint8Array of their own.
export async function readBuffer(device, buffer, offset, bytes) {
  const lo = offset - (offset % 4), size = Math.max(4, Math.ceil((offset + bytes - lo) / 4) * 4);
  const staging = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(buffer, lo, staging, 0, size);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Uint8Array(staging.getMappedRange(), offset - lo, bytes).slice();
  staging.unmap();
  staging.destroy();
  return out;
}

// A storage buffer of at least `bytes` (whole words, 16 at least): copy source and destination.
export function makeBuffer(device, bytes) {
  return device.createBuffer({ size: Math.max(16, Math.ceil(bytes / 4) * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
}

// ---- exported plans (rlx export --target webgpu) ----

// An adapter and a device with the limits a plan needs (plan.needs), or an Error that says
// which one this browser's adapter lacks.
export async function requestDevice(gpu, needs = {}) {
  if (!gpu) throw new Error('this browser has no WebGPU (navigator.gpu is missing; Chromium needs --enable-unsafe-webgpu where it is off)');
  // a core adapter, else a compatibility-mode one (OpenGL ES backends, such as Dawn's on llvmpipe)
  const adapter = await gpu.requestAdapter() ?? await gpu.requestAdapter({ featureLevel: 'compatibility' });
  if (!adapter) throw new Error('WebGPU gave no adapter');
  const requiredLimits = {};
  for (const [k, v] of Object.entries(needs)) {
    if (adapter.limits[k] < v) throw new Error(`the plan needs ${k} = ${v}; this adapter allows ${adapter.limits[k]}`);
    requiredLimits[k] = Math.max(v, 0);
  }
  const device = await adapter.requestDevice({ requiredLimits });
  const i = adapter.info ?? {};
  return { device, adapter: [i.description || i.device, i.vendor, i.architecture].filter(Boolean).join(', ') || 'WebGPU adapter' };
}

const typed = {
  f32: Float32Array, f64: Float64Array, i32: Int32Array, u32: Uint32Array, i16: Int16Array, u16: Uint16Array, i8: Int8Array, u8: Uint8Array, bool: Uint8Array,
};

// The bytes of input `t` from a feed: a typed array of its dtype, or numbers; i64 as
// BigInt64Array, Int32Array or numbers, each value within 32 bits (the kernels' integer class).
function inputBytes(t, value) {
  const n = t.shape.reduce((a, b) => a * b, 1);
  if (value instanceof Uint8Array && value.byteLength === t.bytes && t.dtype !== 'u8' && t.dtype !== 'bool') return value;
  if (value.length !== n) throw new Error(`input ${t.name}: ${value.length} values for shape [${t.shape}] (${n})`);
  if (t.dtype === 'i64') {
    const out = new Int32Array(2 * n);
    for (let i = 0; i < n; ++i) {
      const v = Number(value[i]);
      if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw new Error(`input ${t.name}[${i}] = ${value[i]} does not fit the 32-bit integers the kernels compute with`);
      out[2 * i] = v;
      out[2 * i + 1] = v < 0 ? -1 : 0;
    }
    return new Uint8Array(out.buffer);
  }
  const T = typed[t.dtype];
  if (!T) throw new Error(`input ${t.name} is ${t.dtype}: give its ${t.bytes} bytes as a Uint8Array`);
  const a = value instanceof T ? value : T.from(value);
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

function outputValue(t, bytes) {
  if (t.dtype === 'i64') return new BigInt64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8);
  const T = typed[t.dtype];
  return T ? new T(bytes.buffer, bytes.byteOffset, bytes.byteLength / T.BYTES_PER_ELEMENT) : bytes;
}

async function fetchOk(url, as) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return as === 'json' ? r.json() : as === 'text' ? r.text() : r.arrayBuffer();
}

// Loads the plan in the directory at `base` (a URL ending in '/'): its weights into buffers,
// its kernels compiled, its dispatches made into one program. `progress(text)` is told each
// stage. Resolves to {plan, adapter, device, inputs, outputs, run(feeds), destroy()}; run takes
// {inputName: values} and resolves to {outputName: typed array}.
export async function loadPlan(base, { gpu = globalThis.navigator?.gpu, progress = () => {} } = {}) {
  const url = name => new URL(name, base).href;
  progress('reading plan.json');
  const plan = await fetchOk(url('plan.json'), 'json');
  if (plan.format !== 'rlx-webgpu-plan-1') throw new Error(`plan.json is ${plan.format}, not an rlx-webgpu-plan-1`);
  const { device, adapter } = await requestDevice(gpu, plan.needs);
  progress(`reading weights.bin`);
  const weights = await fetchOk(url('weights.bin'));
  const buffers = new Map();
  await checked(device, async () => {
    for (const b of plan.buffers) {
      const buf = makeBuffer(device, b.bytes);
      buffers.set(b.name, buf);
      if (b.weights_offset !== undefined) device.queue.writeBuffer(buf, 0, weights, b.weights_offset, Math.min(Math.ceil(b.bytes / 4) * 4, weights.byteLength - b.weights_offset));
    }
  });
  const kernels = [];
  for (const [i, k] of plan.kernels.entries()) {
    progress(`compiling kernel ${i + 1} of ${plan.kernels.length}`);
    kernels.push(await makeKernel(device, await fetchOk(url(k.file), 'text'), k.writes, k.file));
  }
  const need = name => {
    const b = buffers.get(name);
    if (!b) throw new Error(`plan.json: no buffer ${name}`);
    return b;
  };
  const program = await checked(device, async () => makeProgram(device, plan.dispatches.map(d => ({
    kernel: kernels[d.kernel],
    buffers: d.buffers.map(need),
    words: Uint32Array.from(d.words),
    groups: d.workgroups,
  }))));
  const errors = need('error');
  const stepNode = new Map(plan.dispatches.map(d => [d.step, d.node]));
  progress('ready');
  return {
    plan, adapter, device,
    inputs: plan.inputs, outputs: plan.outputs,
    async run(feeds) {
      for (const t of plan.inputs) {
        if (!(t.name in feeds)) throw new Error(`no value for input ${t.name}`);
        const bytes = inputBytes(t, feeds[t.name]);
        const padded = bytes.byteLength % 4 ? (() => { const p = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4); p.set(bytes); return p; })() : bytes;
        device.queue.writeBuffer(need(t.buffer), t.offset, padded);
      }
      device.queue.writeBuffer(errors, 0, new Uint32Array(16));
      await checked(device, () => runProgram(device, program));
      const e = new Uint32Array((await readBuffer(device, errors, 0, 24)).buffer);
      if (e[0]) {
        const where = stepNode.get(e[1]) ?? `step ${e[1]}`;
        if (e[0] === 2) throw new Error(`${where}: an i64 result does not fit the 32-bit integers the kernels compute with`);
        throw new Error(`${where}: index ${e[2] | 0} is out of range [0, ${e[4]})`);
      }
      const out = {};
      for (const t of plan.outputs) out[t.name] = outputValue(t, await readBuffer(device, need(t.buffer), t.offset, t.bytes));
      return out;
    },
    destroy() {
      program.uniform.destroy();
      for (const b of buffers.values()) b.destroy();
    },
  };
}
