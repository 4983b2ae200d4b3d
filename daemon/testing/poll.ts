/**
 * Polls until `read` answers something `done` accepts, and answers it: for what a daemon does in the background
 * (jobs, deliveries, a restart's catch-up). Past `timeoutMs` it fails naming `what` and the last answer.
 */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value instanceof Map ? [...value] : value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Polls until `check` holds; past `timeoutMs` it fails naming `what` and, when given, what `explain` finds then. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, explain?: () => Promise<unknown>): Promise<void> {
  await until(check, Boolean, what, timeoutMs).catch(async (error: unknown) => {
    if (!explain) throw error;
    throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await explain(), null, 1)}`);
  });
}
