// Loaded into a benchmarked tilld with `node --import` (bench-daemon.mjs, `probe: true`); does nothing unless
// TILL_BENCH_PROBE names a file. It measures, inside tilld, the event loop's delay (perf_hooks.monitorEventLoopDelay)
// and how long each HTTP request took from its 'request' event to its response's end (node:diagnostics_channel), and
// on SIGUSR2 writes both since the previous SIGUSR2 to that file (then starts over). Comparing the server's own time
// with the client's latency tells a wait inside tilld from one before a request reaches it.
import { subscribe } from 'node:diagnostics_channel';
import { renameSync, writeFileSync } from 'node:fs';
import { createHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';

const file = process.env.TILL_BENCH_PROBE;
if (file) {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const server = createHistogram();
  const started = new WeakMap();
  let inFlight = 0;
  let mostInFlight = 0;
  subscribe('http.server.request.start', ({ request, response }) => {
    started.set(request, performance.now());
    inFlight++;
    if (inFlight > mostInFlight) mostInFlight = inFlight;
    // 'close' comes after the answer or when the client went away without one (autocannon ending a run).
    response.once('close', () => inFlight--);
  });
  subscribe('http.server.response.finish', ({ request }) => {
    const at = started.get(request);
    if (at !== undefined) server.record(Math.max(1, Math.round((performance.now() - at) * 1000))); // µs
  });
  const ms = (h, p) => (h.count === 0 ? null : Number(h.percentile(p)) / (h === loop ? 1e6 : 1e3));
  process.on('SIGUSR2', () => {
    const snapshot = {
      loopDelay: { p50: ms(loop, 50), p99: ms(loop, 99), max: loop.max / 1e6, mean: loop.mean / 1e6 },
      server: { count: server.count, p50: ms(server, 50), p99: ms(server, 99), max: server.count ? server.max / 1e3 : null },
      mostInFlight,
    };
    loop.reset();
    server.reset();
    mostInFlight = inFlight;
    // Renamed into place: the benchmark waits for the file and must never read half of it.
    writeFileSync(`${file}.tmp`, JSON.stringify(snapshot));
    renameSync(`${file}.tmp`, file);
  });
}
