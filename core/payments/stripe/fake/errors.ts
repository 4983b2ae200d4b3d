/** An error the fake answers the way Stripe does: `{error: {type, code, message, …}}` with its HTTP status. */
export class StripeFakeError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    /** Stripe saves an idempotent result only once the endpoint started executing (card errors yes, bad params no). */
    readonly saved = false,
  ) {
    super(String(body.message));
  }
}

/** A 400 for a parameter Stripe would refuse. */
export const invalidParam = (param: string, message: string, code = 'parameter_invalid') =>
  new StripeFakeError(400, { type: 'invalid_request_error', code, param, message });

/** A 404 for an id that does not exist, worded as Stripe words it. */
export const missing = (what: string, id: string, param = 'id') =>
  new StripeFakeError(404, { type: 'invalid_request_error', code: 'resource_missing', param, message: `No such ${what}: '${id}'` });

/** A 400 for an object in a state that does not allow the request. */
export const unexpectedState = (code: string, message: string) => new StripeFakeError(400, { type: 'invalid_request_error', code, message }, true);
