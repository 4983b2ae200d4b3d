// The terminal UI benchmark (issue 8): `till ui`'s Events tab on an 80×24 virtual terminal while a live stream of
// TILL_BENCH_TUI_RATE (default 1,000) events per second runs, against baselines measured in the same run:
//   - frame time: React's render and commit of the Events tab (App's onCommit) and ink's layout and output (ink's
//     onRender renderTime), per frame, under the stream vs. the same screen (1,000 events kept) redrawn for key presses;
//   - memory: heap and RSS of the idle app (no events) vs. their peak during the stream and after it (both after GC);
//   - the event loop: utilisation and delay (how long a key press can wait) while idle vs. under the stream, and the
//     cost of keeping the events alone (the same stream into the EventStore, no UI).
// `benchTui({ root, quick })` returns a Markdown section (scripts/bench.mjs puts it in docs/performance.md);
// `node scripts/bench-tui.mjs [--quick]` prints it and replaces that section of docs/performance.md.
import { build } from 'esbuild';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (xs, p) => {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const ms = (value) => (Number.isFinite(value) ? `${value.toFixed(2)} ms` : '—');
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ratio = (a, b) => (b > 0 && Number.isFinite(a) ? `${(a / b).toFixed(2)}×` : '—');
const pct = (value) => `${(value * 100).toFixed(1)} %`;
const TYPES = ['order.created', 'order.paid', 'checkout.updated', 'subscription.updated', 'customer.state_changed'];

/** A garbage collection on demand, with or without --expose-gc. */
function collector() {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc');
}

/** One stream event, shaped as `till ui` receives them (cli/commands/ui.ts). */
function streamEvent(n) {
  const type = TYPES[n % TYPES.length];
  const timestamp = new Date().toISOString();
  return { id: `evt_${n}`, type, timestamp, payload: { type, timestamp, data: { id: `obj_${n}`, amount: n, customer: { email: `c${n % 100}@example.com` } } } };
}

/** Sends `rate` events per second for `seconds` to `emit`, in 10 ms ticks; resolves with how many were sent. */
async function stream(emit, rate, seconds, first = 0) {
  const total = Math.round(rate * seconds);
  let sent = 0;
  const started = performance.now();
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
      for (; sent < due; sent += 1) emit(streamEvent(first + sent));
      if (sent >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  return sent;
}

/** What changed in the TUI's frames and why, written by hand from profiles of this bench: kept in the section. */
const HISTORY = `What changed since the quiet run of 13:22 (Orders met at 14.0 ms; Dashboard 20.2, Customers 22.7 and Subscriptions
24.4 ms missed; Subscriptions' heap 1.25× of idle), from CPU profiles of this bench per tab (b991ef8, 7c15df0):
- On the list tabs about 90 % of a frame is ink's output (a styled cell per character, Intl.Segmenter on lines that
  are not ASCII); React's render was about 1.5 ms and Yoga's layout 0.002 ms. The body box clipped horizontally
  (\`overflow="hidden"\`), re-measuring every line that was already cut to the width: it clips vertically only now.
- Customers and Subscriptions were slower than Orders because each of their rows held one non-ASCII character, which
  sends string-width off its ASCII fast path for the whole line: Subscriptions' NEXT column now shows the day, which
  fits, instead of a minute cut with '…'; Customers keeps its '—' for "none" (what is left between it and Orders).
- Unselected rows drop their invisible trailing padding; the list tabs and the Dashboard's view are memoized, so a
  flush of the stream no longer re-renders them; the Dashboard derives its figures and sparklines once a load.
- The event store kept a timestamp per event for the per-minute rate and trimmed it on the Events tab only: on any
  other tab it grew by about 8 KB/s at 1,000 events/s. It keeps 60 per-second counts now (the heap is flat).
- The bench counted ink's drawing twice on the Dashboard when ink drew inside React's commit; React's column is its
  own time now.

The evening run of 2026-11-26 (18:43, load 0.2, the bench in a process of its own) missed the 16 ms on every tab
(p99 24-27 ms), with no change to the TUI's code since the 16:10 run that met it (6.7-10.0 ms). It ran on another
machine, where \`node -e 0\` started in 66.8 ms against 53.8 ms and the key press without a stream, this bench's own
baseline, took 17.6-29.1 ms at p99 for ink alone against 14.6 ms; there the tabs' ink p99 was 0.8-1.5× that baseline's,
against 0.3-0.7× at 16:10. The same code on the next machine (2026-11-26 20:01, load 0.3, fresh checkout, nothing
else running) meets it on every tab again: p99 7.5-9.5 ms, with the baseline's ink p99 at 13.8 ms and the tabs at
0.5-0.7× of it, as at 16:10. The 18:43 figures followed that one machine, not the code.
`;

export async function benchTui({ root = process.cwd(), quick = false } = {}) {
  const rate = Number(process.env.TILL_BENCH_TUI_RATE ?? 1000);
  const seconds = Number(process.env.TILL_BENCH_TUI_SECONDS ?? (quick ? 2 : 5));
  const redraws = quick ? 40 : 100;
  const gc = collector();
  const measureMemory = () => {
    gc();
    const { heapUsed, rss } = process.memoryUsage();
    return { heapUsed, rss };
  };

  // As `till ui` does (cli/commands/ui.ts): React's production build. (Set before react loads; restored after.)
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV ??= 'production';
  const dir = mkdtempSync(join(root, 'node_modules', '.till-bench-tui-'));
  const entry = join(dir, 'entry.js');
  try {
    await build({
      stdin: {
        contents: "export { App } from './cli/ui/tui/App.js'; export { EventStore } from './cli/ui/tui/event-store.js'; export { render } from 'ink'; export { createElement } from 'react';",
        resolveDir: root,
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
    const { App, EventStore, render, createElement } = await import(pathToFileURL(entry).href);

    // Baseline 1: the events kept without any UI (the EventStore alone under the same stream).
    const bare = new EventStore();
    let eluStart = performance.eventLoopUtilization();
    await stream((event) => bare.add(event), rate, Math.min(seconds, 2), 0);
    const storeElu = performance.eventLoopUtilization(eluStart).utilization;

    let handlers;
    // The new tabs' lists and the Dashboard's figures, as a busy shop's server would answer them (100 rows each).
    const customer = (n) => ({ id: `cus_${n}`, email: `c${n}@example.com`, name: `Customer ${n}`, created_at: new Date().toISOString() });
    const rowsOf = (make) => ({ items: Array.from({ length: 100 }, (_, n) => make(n)) });
    const answer = (path) => {
      if (path.startsWith('/v1/metrics/')) {
        const periods = Array.from({ length: 31 }, (_, n) => ({ timestamp: new Date(Date.now() - (30 - n) * 86_400_000).toISOString(), revenue: n * 1000, orders: n, monthly_recurring_revenue: n * 500, active_subscriptions: n }));
        return { periods, totals: {}, metrics: {}, currency: 'usd' };
      }
      if (path.startsWith('/v1/orders/')) return rowsOf((n) => ({ id: `ord_${n}`, created_at: new Date().toISOString(), customer: customer(n), total_amount: 2500, refundable_amount: 2500, currency: 'usd', status: 'paid' }));
      if (path.startsWith('/v1/customers/')) return rowsOf(customer);
      if (path.startsWith('/v1/subscriptions/')) return rowsOf((n) => ({ id: `sub_${n}`, customer: customer(n), product: { name: 'Pro plan' }, amount: 2500, currency: 'usd', recurring_interval: 'month', status: 'active', current_period_end: new Date().toISOString() }));
      return { items: [] };
    };
    const backend = {
      server: 'http://127.0.0.1:4010',
      request: async (_method, path) => answer(path),
      follow: (_org, given, signal) => {
        handlers = given;
        given.onState({ kind: 'live' });
        return new Promise((resolve) => signal.addEventListener('abort', resolve));
      },
    };
    const stdout = Object.assign(new EventEmitter(), { columns: 80, rows: 24, isTTY: true, writes: 0, write() { this.writes += 1; return true; } });
    // A terminal's input as ink reads it: 'readable', then read() until null.
    const typed = [];
    const stdin = Object.assign(new EventEmitter(), { isTTY: true, setRawMode() {}, setEncoding() {}, resume() {}, pause() {}, ref() {}, unref() {}, read: () => typed.shift() ?? null });
    const press = (key) => {
      typed.push(key);
      stdin.emit('readable');
    };
    let phase = 'idle';
    const NEW_TABS = [['Dashboard', '1'], ['Orders', '3'], ['Customers', '4'], ['Subscriptions', '5']];
    const frames = { idle: { react: [], ink: [] }, redraw: { react: [], ink: [] }, stream: { react: [], ink: [] }, ...Object.fromEntries(NEW_TABS.map(([name]) => [name, { react: [], ink: [] }])) };
    /** ink's last draws, when each ended and how long it took (to tell React's own time from ink's, below). */
    const inkDraws = [];
    const app = render(
      createElement(App, {
        backend,
        organizations: [{ id: 'org', name: 'Bench', slug: 'bench' }],
        organizationId: 'org',
        color: true,
        // React's render and commit alone: ink may draw inside the commit (before the layout effect that ends this
        // measure), and its drawing is counted in ink's figures, so it is taken out of React's here.
        onCommit: (took) => {
          const end = performance.now();
          const drawn = inkDraws.filter((draw) => draw.at >= end - took && draw.at <= end).reduce((sum, draw) => sum + draw.renderTime, 0);
          frames[phase].react.push(Math.max(0, took - drawn));
        },
        initialTab: 2,
        dashboardGapMs: 1000,
      }),
      { stdout, stdin, exitOnCtrlC: false, patchConsole: false, maxFps: 30, onRender: ({ renderTime }) => {
          frames[phase].ink.push(renderTime);
          inkDraws.push({ at: performance.now(), renderTime });
          if (inkDraws.length > 64) inkDraws.splice(0, 32);
        } },
    );
    await sleep(300);

    // Baseline 2: the idle app (no events): memory, and the event loop.
    const idleMemory = measureMemory();
    const idleDelay = monitorEventLoopDelay({ resolution: 1 });
    idleDelay.enable();
    eluStart = performance.eventLoopUtilization();
    await sleep(quick ? 500 : 1000);
    const idleElu = performance.eventLoopUtilization(eluStart).utilization;
    idleDelay.disable();

    // Baseline 3: frames of the same screen without a stream: 1,000 events kept, the selection moved by a key each
    // time (↓ then ↑: it pauses the tab, so p follows again before the stream).
    for (let n = 0; n < 1000; n += 1) handlers.onEvent(streamEvent(1_000_000 + n));
    await sleep(300);
    phase = 'redraw';
    for (let n = 0; n < redraws; n += 1) {
      press(n % 2 ? 'k' : 'j');
      await sleep(40);
    }
    phase = 'idle';
    press('p');
    await sleep(100);

    // Under the stream.
    let peak = { heapUsed: 0, rss: 0 };
    const sampler = setInterval(() => {
      const { heapUsed, rss } = process.memoryUsage();
      peak = { heapUsed: Math.max(peak.heapUsed, heapUsed), rss: Math.max(peak.rss, rss) };
    }, 50);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    phase = 'stream';
    const writesBefore = stdout.writes;
    delay.enable();
    eluStart = performance.eventLoopUtilization();
    const started = performance.now();
    const sent = await stream((event) => handlers.onEvent(event), rate, seconds, 0);
    await sleep(200);
    const streamElu = performance.eventLoopUtilization(eluStart).utilization;
    const elapsed = (performance.now() - started) / 1000;
    delay.disable();
    clearInterval(sampler);
    phase = 'idle';
    const written = stdout.writes - writesBefore;
    const streamFrames = frames.stream.ink.length;
    const afterMemory = measureMemory();

    // The new tabs (issue 20), each under the same stream for the same time: its frames, and the heap after it.
    // 20 s a tab: at ~10 frames a second that is ~200 frames, so the p99 is a percentile and not the slowest frame
    // (with the 31 frames of 3 s, p99 was the maximum, one GC pause or one slow scheduling of the VM).
    const tabSeconds = Number(process.env.TILL_BENCH_TUI_TAB_SECONDS ?? (quick ? 1 : 20));
    const tabRows = [];
    let first = sent;
    for (const [name, key] of NEW_TABS) {
      press(key);
      await sleep(500);
      phase = name;
      const tabSent = await stream((event) => handlers.onEvent(event), rate, tabSeconds, first);
      first += tabSent;
      await sleep(200);
      phase = 'idle';
      const memory = measureMemory();
      const f = frames[name];
      // The targets (issue 20): a frame's p99 under 16 ms (React's own p99 plus ink's where React's is measured, an
      // upper bound; ink's drawing inside React's commit counted once, in ink's) and the heap flat (after GC, within 25 % of the idle app's).
      const frameP99 = percentile(f.ink, 99) + (f.react.length ? percentile(f.react, 99) : 0);
      const verdict = `${frameP99 < 16 ? 'met' : '**missed**'} (${ms(frameP99)}); heap ${memory.heapUsed <= 1.25 * idleMemory.heapUsed ? 'flat' : '**grew**'}`;
      tabRows.push(`| ${name} | ${tabSent.toLocaleString('en-US')} | ${f.ink.length} | ${f.react.length ? `${ms(percentile(f.react, 50))} / ${ms(percentile(f.react, 99))}` : '—'} | ${ms(percentile(f.ink, 50))} / ${ms(percentile(f.ink, 99))} | ${mb(memory.heapUsed)} (${ratio(memory.heapUsed, idleMemory.heapUsed)} of idle) | ${verdict} |`);
    }
    app.unmount();

    const f = frames;
    const row = (name, base, under) => `| ${name} | ${ms(percentile(base, 50))} / ${ms(percentile(base, 99))} | ${ms(percentile(under, 50))} / ${ms(percentile(under, 99))} | ${ratio(percentile(under, 50), percentile(base, 50))} / ${ratio(percentile(under, 99), percentile(base, 99))} |`;
    return `## Terminal UI under a live stream (issue 8)

\`till ui\`'s Events tab (the default) on an 80×24 virtual terminal, React's production build, while
${sent.toLocaleString('en-US')} events arrive at ${rate.toLocaleString('en-US')}/s for ${seconds} s (${elapsed.toFixed(1)} s measured).
The tab keeps the newest 1,000 events and re-renders at most every 100 ms; ink draws at most 30 frames/s.
Baselines from the same run: the same screen (1,000 events kept) redrawn ${redraws} times without a stream (a key
press moving the selection each time), the idle app (no events), and the events kept by the EventStore alone with no UI.

| Frame time (p50 / p99) | Key press, no stream (baseline) | Under the stream | Ratio |
|---|---|---|---|
${row('React render + commit of the tab', f.redraw.react, f.stream.react)}
${row('ink layout + output', f.redraw.ink, f.stream.ink)}

A frame is React's work on the update plus ink's on the output (ink skips output that did not change).
Frames under the stream: ${streamFrames} drawn (${(streamFrames / elapsed).toFixed(1)}/s), ${written} terminal writes.

| Memory and event loop | Idle app (baseline) | Under the stream | Ratio |
|---|---|---|---|
| Heap used (after GC) / peak during / after GC | ${mb(idleMemory.heapUsed)} | ${mb(peak.heapUsed)} peak, ${mb(afterMemory.heapUsed)} after | ${ratio(peak.heapUsed, idleMemory.heapUsed)} peak, ${ratio(afterMemory.heapUsed, idleMemory.heapUsed)} after |
| RSS / peak during / after GC | ${mb(idleMemory.rss)} | ${mb(peak.rss)} peak, ${mb(afterMemory.rss)} after | ${ratio(peak.rss, idleMemory.rss)} peak, ${ratio(afterMemory.rss, idleMemory.rss)} after |
| Event-loop utilisation | ${pct(idleElu)} (the EventStore alone under the stream: ${pct(storeElu)}) | ${pct(streamElu)} | ${ratio(streamElu, storeElu)} of the store alone |
| Event-loop delay p50 / p99 (how long a key press waits) | ${ms(idleDelay.percentile(50) / 1e6)} / ${ms(idleDelay.percentile(99) / 1e6)} | ${ms(delay.percentile(50) / 1e6)} / ${ms(delay.percentile(99) / 1e6)} | ${ratio(delay.percentile(99), idleDelay.percentile(99))} (p99) |

The new tabs (issue 20) under the same stream, ${tabSeconds} s each, one after the other (the Dashboard loads its
figures again at most once a second while order events stream in; the lists hold 100 rows). React's time is
measured for the Dashboard (its own render and commit: when ink draws inside the commit, that drawing is counted in
ink's column, not twice); ink's layout and output for every frame. Heap after GC once
each tab's stream ends, against the idle app's.

Targets: a frame's p99 under 16 ms (React's p99 plus ink's, where React's is measured) and the heap flat (within
25 % of the idle app's after GC). Load average while measuring: ${loadavg().map((x) => x.toFixed(2)).join(', ')} on ${cpus().length} cores (the
machine is shared; frame times move with the load, the ratios less).

| Tab | Events | Frames | React render + commit p50 / p99 | ink layout + output p50 / p99 | Heap after (GC) | p99 < 16 ms; heap |
|---|---|---|---|---|---|---|
${tabRows.join('\n')}

${HISTORY}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // Alone, it also replaces its section of docs/performance.md (the rest of the file is left as it is).
  const root = fileURLToPath(new URL('..', import.meta.url));
  const section = await benchTui({ root, quick: process.argv.includes('--quick') });
  console.log(section);
  // --stdout: the section alone, for npm run bench, which runs this bench in a process of its own.
  if (process.argv.includes('--stdout')) process.exit(0);
  const path = join(root, 'docs/performance.md');
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const at = current.indexOf('## Terminal UI under a live stream');
  const next = at >= 0 ? current.indexOf('\n## ', at + 1) : -1;
  writeFileSync(path, at >= 0 ? `${current.slice(0, at)}${section}${next >= 0 ? current.slice(next) : ''}` : `${current.trimEnd()}\n\n${section}`);
}
