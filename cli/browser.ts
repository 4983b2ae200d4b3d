/** Opens a URL in the user's browser; false when that failed (the URL is printed anyway). */
export async function openBrowser(url: string): Promise<boolean> {
  try {
    const { default: open } = await import('open');
    const child = await open(url);
    return await new Promise<boolean>((resolve) => {
      child.once('error', () => resolve(false));
      // open() resolves once the opener is spawned; a failed spawn reports on the next tick.
      setImmediate(() => resolve(true));
    });
  } catch {
    return false;
  }
}
