/**
 * Counts turns of the event loop from now on (a chain of setImmediate, one link a turn) until stopped: a test's way
 * to tell whether work let the loop turn while it ran. Synchronous work lets no turn through, however long.
 */
export function countLoopTurns(): { readonly turns: number; stop(): void } {
  let turns = 0;
  let counting = true;
  const count = () => {
    turns++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  return {
    get turns() {
      return turns;
    },
    stop() {
      counting = false;
    },
  };
}
