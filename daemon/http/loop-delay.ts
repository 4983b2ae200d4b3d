import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { RequestHandler } from 'express';

/** How often the event loop is sampled, in ms: fine enough to see a stall of a few ms. */
const RESOLUTION_MS = 2;
const toMs = (ns: number) => Math.round(ns / 1e4) / 100;

/** Samples the event loop's delay from now on (TILL_DEBUG_LOOP_DELAY): what a benchmark reads while it loads tilld. */
export function startLoopDelayMonitor(): IntervalHistogram {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  return histogram;
}

/**
 * GET /debug/loop-delay: the delays seen since start or since the last `?reset=1` (which answers the figures, then
 * starts over), in ms. A delay is how late the sampling timer fired: how long something else held the loop.
 */
export function loopDelayHandler(histogram: IntervalHistogram): RequestHandler {
  return (req, res) => {
    const figures = {
      resolution_ms: RESOLUTION_MS,
      samples: histogram.count,
      mean_ms: histogram.count ? toMs(histogram.mean) : 0,
      p50_ms: toMs(histogram.percentile(50)),
      p99_ms: toMs(histogram.percentile(99)),
      p999_ms: toMs(histogram.percentile(99.9)),
      max_ms: toMs(histogram.max),
    };
    if (req.query.reset === '1') histogram.reset();
    res.json(figures);
  };
}
