/**
 * Polar's API versions (the `Polar-Version: YYYY-MM` request header). A request without the header gets the current
 * version, which is also the wire format `@polar-sh/sdk` 0.49 (which never sends the header) was generated from.
 * Serializers take the version where the wire differs between versions; `docs/polar-wire-format.md` lists where.
 */
export const API_VERSIONS = ['2026-04', '2026-10'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export const CURRENT_API_VERSION: ApiVersion = '2026-04';

export const isApiVersion = (value: string): value is ApiVersion => (API_VERSIONS as readonly string[]).includes(value);

/** Whether `version` is `since` or later (versions are `YYYY-MM`, so they order as strings). */
export const versionAtLeast = (version: ApiVersion, since: ApiVersion) => version >= since;
