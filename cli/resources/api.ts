import { httpFailure, type ApiClient, type ApiResponse, type HttpMethod } from '../api/client.js';
import { CliError, EXIT } from '../errors.js';

export interface RequestOptions {
  body?: unknown;
  /** The flag that sets a top-level body field, so a 422 on it can say which flag to fix. */
  flagOf?: (field: string) => string | undefined;
  /** Sent as Idempotency-Key (a random one is sent on /v1 writes otherwise). */
  idempotencyKey?: string;
}

/** The API as the catalog commands use it: one server, one token, failures as CliErrors. */
export interface Caller {
  readonly server: string;
  request<T = unknown>(method: HttpMethod, path: string, options?: RequestOptions): Promise<T>;
}

/** `refused` replaces the error of a 401, e.g. to say that TILL_TOKEN (not the stored session) was refused. */
export function createCaller(api: ApiClient, token: string, refused?: () => CliError): Caller {
  return {
    server: api.server,
    async request<T>(method: HttpMethod, path: string, options: RequestOptions = {}) {
      const response = await api.send(method, path, { token, body: options.body, idempotencyKey: options.idempotencyKey });
      if (response.status >= 200 && response.status <= 299) return response.body as T;
      if (response.status === 401 && refused) throw refused();
      throw response.status === 422 ? validationFailure(api.server, response, options.flagOf) : httpFailure(api.server, response);
    },
  };
}

interface Issue {
  loc?: unknown;
  msg?: unknown;
}

/**
 * A 422 with every field error listed, one per line: `name (--name): String must contain at least 3 characters`.
 * Exit 5, as every invalid input.
 */
export function validationFailure(server: string, response: ApiResponse, flagOf?: (field: string) => string | undefined): CliError {
  const body = (response.body ?? {}) as { detail?: unknown; code?: unknown };
  const issues = Array.isArray(body.detail) ? (body.detail as Issue[]) : [];
  if (issues.length === 0) return httpFailure(server, response);
  const lines = issues.map((issue) => {
    const loc = Array.isArray(issue.loc) ? issue.loc.map(String) : [];
    // ["body", "prices", 0, "price_amount"] → prices.0.price_amount; query and path keep their prefix.
    const where = loc[0] === 'body' ? loc.slice(1) : loc;
    const flag = loc[0] === 'body' && where[0] !== undefined ? flagOf?.(where[0]) : undefined;
    const field = where.length > 0 ? where.join('.') : 'body';
    return `  ${field}${flag ? ` (${flag})` : ''}: ${typeof issue.msg === 'string' ? issue.msg : 'invalid'}`;
  });
  const code = typeof body.code === 'string' ? body.code : 'INVALID_INPUT';
  return new CliError(code, `${server} rejected the request:\n${lines.join('\n')}`, EXIT.invalid);
}
