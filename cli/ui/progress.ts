import type { Writable } from 'node:stream';

export interface Progress {
  /** `done` bytes of the total have gone. */
  update(done: number): void;
  /** Draws the final state and ends the line. */
  finish(): void;
}

const WIDTH = 24;
const REDRAW_MS = 80;

/** "1.2 MB": sizes as the progress line shows them. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** A one-line progress bar redrawn in place (`\r`) on a terminal; a no-op anywhere else, or when not enabled. */
export function createProgress(
  stream: Writable & { isTTY?: boolean },
  label: string,
  total: number,
  { enabled = true, now = Date.now }: { enabled?: boolean; now?: () => number } = {},
): Progress {
  if (!enabled || !stream.isTTY) return { update() {}, finish() {} };
  let last = 0;
  let current = 0;
  const draw = () => {
    const ratio = total === 0 ? 1 : Math.min(1, current / total);
    const filled = Math.round(ratio * WIDTH);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(WIDTH - filled)}`;
    stream.write(`\r${label}  ${bar}  ${String(Math.floor(ratio * 100)).padStart(3)}%  ${formatBytes(current)} / ${formatBytes(total)}\x1b[K`);
  };
  return {
    update(done) {
      current = done;
      const at = now();
      if (at - last >= REDRAW_MS) {
        last = at;
        draw();
      }
    },
    finish() {
      current = total;
      draw();
      stream.write('\n');
    },
  };
}
