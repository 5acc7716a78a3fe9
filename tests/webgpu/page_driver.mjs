// Drives what `rlx export --target webgpu` writes: a static HTTP server for the directory, and
// a page opened in headless Chromium over the DevTools protocol on a pipe (no npm packages):
// it waits for the page's `window.rlx.done`, returns its value and a PNG screenshot. Used by
// the export's test and by bench/webgpu_page.mjs.
import { spawn } from 'child_process';
import fs from 'fs';
import http from 'http';
import path from 'path';

export function which(name) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir, name);
    if (dir && fs.existsSync(p)) return p;
  }
  return null;
}

export function chromiumPath() {
  return process.env.RLX_CHROMIUM || which('chromium') || which('chromium-browser') || which('google-chrome');
}

// Serves `dir` on 127.0.0.1 at a free port: resolves to {base (URL ending in '/'), close()}.
export async function serve(dir) {
  const root = path.resolve(dir);
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.json': 'application/json', '.wgsl': 'text/plain' };
  const server = http.createServer((req, res) => {
    const p = path.join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (!p.startsWith(root) || !fs.existsSync(p) || fs.statSync(p).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': types[path.extname(p)] ?? 'application/octet-stream' });
    fs.createReadStream(p).pipe(res);
  });
  await new Promise(r => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${server.address().port}/`, close: () => server.close() };
}

// Opens `url` in headless Chromium (WebGPU on the SwiftShader it ships; `profile` is a scratch
// directory) and resolves to {value (of window.rlx.done), png (Buffer)}; rejects with the page's
// error (after taking the screenshot, which is then in error.png) or after `timeout_ms`.
export async function openPage(url, { profile, width = 1000, height = 820, timeout_ms = 240000 } = {}) {
  const bin = chromiumPath();
  if (!bin) throw new Error('Chromium is not installed (apt-get install chromium)');
  const args = ['--headless', '--remote-debugging-pipe', `--user-data-dir=${profile}`, '--enable-unsafe-webgpu', '--enable-features=Vulkan',
    '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader', '--ignore-gpu-blocklist', '--no-first-run', '--hide-scrollbars', 'about:blank'];
  if (process.getuid?.() === 0) args.unshift('--no-sandbox');  // Chromium refuses root with its sandbox
  const proc = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', d => { stderr = (stderr + d).slice(-4000); });
  const waiting = new Map();
  let next = 1, pending = Buffer.alloc(0);
  proc.stdio[4].on('data', d => {
    pending = Buffer.concat([pending, d]);
    for (let z; (z = pending.indexOf(0)) >= 0;) {
      const msg = JSON.parse(pending.subarray(0, z).toString('utf8'));
      pending = pending.subarray(z + 1);
      const w = waiting.get(msg.id);
      if (!w) continue;
      waiting.delete(msg.id);
      if (msg.error) w.reject(new Error(`${w.method}: ${msg.error.message}`));
      else w.resolve(msg.result);
    }
  });
  const exited = new Promise((_, reject) => proc.on('exit', code => reject(new Error(`Chromium exited (${code}):\n${stderr}`))));
  const send = (method, params = {}, sessionId) => Promise.race([exited, new Promise((resolve, reject) => {
    const id = next++;
    waiting.set(id, { resolve, reject, method });
    proc.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + '\0');
  })]);
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no result in ${timeout_ms / 1000} s\n${stderr}`)), timeout_ms); });
  const run = async () => {
    const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
    await send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false }, sessionId);
    await send('Page.navigate', { url }, sessionId);
    for (;;) {  // the page's module sets window.rlx once it runs
      const r = await send('Runtime.evaluate', { expression: 'typeof window.rlx', returnByValue: true }, sessionId);
      if (r.result.value === 'object') break;
      await new Promise(r => setTimeout(r, 100));
    }
    const r = await send('Runtime.evaluate', { expression: 'window.rlx.done', awaitPromise: true, returnByValue: true }, sessionId);
    const shot = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
    const png = Buffer.from(shot.data, 'base64');
    if (r.exceptionDetails) {
      const e = new Error(`the page failed: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
      e.png = png;
      throw e;
    }
    return { value: r.result.value, png };
  };
  try {
    return await Promise.race([run(), timeout]);
  } finally {
    clearTimeout(timer);
    proc.kill('SIGKILL');
  }
}
