/** Every operation of @polar-sh/sdk 0.49, in the order its client declares them (see sdk049-operations.mjs). */
export function sdk049Operations(): Promise<{ operation: string; method: string; path: string }[]>;
