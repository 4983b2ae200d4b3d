// The terminal UI benchmark (issue 8): `till ui`'s Events tab under a live stream of TILL_BENCH_TUI_RATE (default
// 1,000) events per second for TILL_BENCH_TUI_SECONDS (5) s, drawn into an 80×24 virtual terminal. Reports frames
// drawn, the event loop's delay (p50/p99/max: how long a key press could wait), and heap before/after.
// `node scripts/bench-tui.mjs` prints a Markdown section (for docs/performance.md).
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { EventEmitter } from 'node:events';
import { pathToFileURL } from 'node:url';

const RATE = Number(process.env.TILL_BENCH_TUI_RATE ?? 1000);
const SECONDS = Number(process.env.TILL_BENCH_TUI_SECONDS ?? 5);

// As `till ui` does (cli/commands/ui.ts): React's production build.
process.env.NODE_ENV ??= 'production';
const dir = mkdtempSync(join(process.cwd(), 'node_modules', '.till-bench-tui-'));
const entry = join(dir, 'entry.js');
try {
  await build({
    stdin: {
      contents: "export { App } from './cli/ui/tui/App.js'; export { render } from 'ink'; export { createElement } from 'react';",
      resolveDir: process.cwd(),
      loader: 'ts',
    },
    outfile: entry,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: ['ink', 'react', 'react-dom'],
    logLevel: 'warning',
  });
  const { App, render, createElement } = await import(pathToFileURL(entry).href);

  let handlers;
  const backend = {
    server: 'http://127.0.0.1:4010',
    request: async () => ({ items: [] }),
    follow: (_org, given, signal) => {
      handlers = given;
      given.onState({ kind: 'live' });
      return new Promise((resolve) => signal.addEventListener('abort', resolve));
    },
  };
  const stdout = Object.assign(new EventEmitter(), { columns: 80, rows: 24, isTTY: true, frames: 0, bytes: 0, write(chunk) { this.frames += 1; this.bytes += chunk.length; return true; } });
  const stdin = Object.assign(new EventEmitter(), { isTTY: true, setRawMode() {}, setEncoding() {}, resume() {}, pause() {}, ref() {}, unref() {}, read: () => null });
  const app = render(createElement(App, { backend, organizations: [{ id: 'org', name: 'Bench', slug: 'bench' }], organizationId: 'org', color: true }), { stdout, stdin, exitOnCtrlC: false, patchConsole: false, maxFps: 30 });
  await new Promise((resolve) => setTimeout(resolve, 200));

  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const framesBefore = stdout.frames;
  const types = ['order.created', 'order.paid', 'checkout.updated', 'subscription.updated', 'customer.state_changed'];
  let sent = 0;
  const started = performance.now();
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(RATE * SECONDS, Math.floor(((performance.now() - started) / 1000) * RATE));
      for (; sent < due; sent += 1) {
        const type = types[sent % types.length];
        const timestamp = new Date().toISOString();
        handlers.onEvent({ id: `evt_${sent}`, type, timestamp, payload: { type, timestamp, data: { id: `obj_${sent}`, amount: sent, customer: { email: `c${sent % 100}@example.com` } } } });
      }
      if (sent >= RATE * SECONDS) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  delay.disable();
  const elapsed = (performance.now() - started) / 1000;
  const frames = stdout.frames - framesBefore;
  global.gc?.();
  const heapAfter = process.memoryUsage().heapUsed;
  app.unmount();
  const ms = (ns) => (ns / 1e6).toFixed(1);
  const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);
  console.log(`## Terminal UI: the Events tab under a live stream (issue 8)

\`node --expose-gc scripts/bench-tui.mjs\`: ${sent.toLocaleString('en-US')} events at ${RATE.toLocaleString('en-US')}/s for ${SECONDS} s into \`till ui\`'s Events tab, drawn on an 80×24 virtual terminal.

| Measure | Value |
| --- | --- |
| Terminal writes | ${frames} in ${elapsed.toFixed(1)} s (${(frames / elapsed).toFixed(1)}/s: the tab re-renders at most every 100 ms, ink writes at most 30 frames/s) |
| Event-loop delay p50 / p99 / max | ${ms(delay.percentile(50))} / ${ms(delay.percentile(99))} / ${ms(delay.max)} ms (how long a key press can wait) |
| Heap before / after | ${mb(heapBefore)} / ${mb(heapAfter)} MB (the tab keeps the newest 1,000 events) |
`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
