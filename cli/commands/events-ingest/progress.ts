import type { Writable } from 'node:stream';
import { count as plural } from '../../resources/words.js';

export interface RateProgress {
  /** `count` events have been sent, having read `bytes` of the input. */
  update(count: number, bytes: number): void;
  finish(): void;
  /** "52,000 events/s" over the whole run. */
  rate(): string;
}

const WIDTH = 24;
const REDRAW_MS = 100;

/**
 * A progress line with the event rate, redrawn in place on a terminal: a bar and a percentage when the input's
 * size is known (a file), the count alone otherwise (stdin). A no-op off a terminal or when not enabled.
 */
export function createRateProgress(
  stream: Writable & { isTTY?: boolean },
  label: string,
  totalBytes: number | undefined,
  { enabled = true, now = Date.now }: { enabled?: boolean; now?: () => number } = {},
): RateProgress {
  const started = now();
  let count = 0;
  let bytes = 0;
  let last = 0;
  const perSecond = () => {
    const seconds = Math.max((now() - started) / 1000, 0.001);
    return `${Math.round(count / seconds).toLocaleString('en-US')} events/s`;
  };
  const visible = enabled && stream.isTTY === true;
  const draw = () => {
    const events = `${plural(count, 'event')}  ${perSecond()}`;
    if (totalBytes === undefined || totalBytes === 0) {
      stream.write(`\r${label}  ${events}\x1b[K`);
      return;
    }
    const ratio = Math.min(1, bytes / totalBytes);
    const filled = Math.round(ratio * WIDTH);
    stream.write(`\r${label}  ${'█'.repeat(filled)}${'░'.repeat(WIDTH - filled)}  ${String(Math.floor(ratio * 100)).padStart(3)}%  ${events}\x1b[K`);
  };
  return {
    update(nextCount, nextBytes) {
      count = nextCount;
      bytes = Math.max(bytes, nextBytes);
      if (!visible) return;
      const at = now();
      if (at - last >= REDRAW_MS) {
        last = at;
        draw();
      }
    },
    finish() {
      if (!visible) return;
      if (totalBytes !== undefined) bytes = totalBytes;
      draw();
      stream.write('\n');
    },
    rate: perSecond,
  };
}
