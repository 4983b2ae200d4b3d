import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { isCoreError, type CoreError, type ErrorKind } from '../../core/errors.js';
import { isUniqueViolation } from '../../core/db/sql.js';

/** Each kind's status and the error name Polar's API (and so @polar-sh/sdk) expects in the body. */
export const HTTP_BY_KIND: Record<ErrorKind, { status: number; error: string }> = {
  invalid: { status: 422, error: 'RequestValidationError' },
  bad_request: { status: 400, error: 'BadRequest' },
  unauthorized: { status: 401, error: 'Unauthorized' },
  forbidden: { status: 403, error: 'NotPermitted' },
  not_found: { status: 404, error: 'ResourceNotFound' },
  conflict: { status: 409, error: 'Conflict' },
  payment_failed: { status: 402, error: 'PaymentFailed' },
  rate_limited: { status: 429, error: 'TooManyRequests' },
};

/**
 * Codes whose status and error name Polar fixes per operation rather than per kind (the SDK parses exactly
 * these): consulted before HTTP_BY_KIND. Domains add their codes here.
 */
export const WIRE_ERRORS: Readonly<Record<string, { status: number; error: string }>> = {
  CHECKOUT_PAYMENT_DECLINED: { status: 400, error: 'PaymentError' },
  CHECKOUT_NOT_OPEN: { status: 403, error: 'NotOpenCheckout' },
  CHECKOUT_EXPIRED: { status: 410, error: 'ExpiredCheckoutError' },
  ALREADY_ACTIVE_SUBSCRIPTION: { status: 403, error: 'AlreadyActiveSubscriptionError' },
  TRIAL_ALREADY_REDEEMED: { status: 403, error: 'TrialAlreadyRedeemed' },
  DISCOUNT_REDEMPTION_LIMIT_REACHED: { status: 403, error: 'DiscountRedemptionLimitReached' },
  SUBSCRIPTION_ALREADY_CANCELED: { status: 403, error: 'AlreadyCanceledSubscription' },
  SUBSCRIPTION_ENDED: { status: 410, error: 'ResourceUnavailable' },
  SUBSCRIPTION_LOCKED: { status: 409, error: 'SubscriptionLocked' },
  PAYMENT_METHOD_IN_USE: { status: 400, error: 'PaymentMethodInUseByActiveSubscription' },
  PAYMENT_METHOD_SETUP_FAILED: { status: 400, error: 'PaymentMethodSetupFailed' },
  INVALID_CUSTOMER_EMAIL_UPDATE: { status: 401, error: 'InvalidCustomerEmailUpdate' },
  SUBSCRIPTION_PLAN_UPDATE_NOT_ALLOWED: { status: 403, error: 'UpdateSubscriptionPlanNotAllowed' },
  ORDER_REFUNDED_ALREADY: { status: 403, error: 'RefundedAlready' },
  REVOKE_BENEFITS_NOT_ALLOWED: { status: 400, error: 'RevokeSubscriptionBenefitsProhibited' },
  ORDER_NOT_ELIGIBLE_FOR_INVOICE: { status: 409, error: 'OrderNotEligibleForInvoice' },
  MISSING_INVOICE_BILLING_DETAILS: { status: 422, error: 'MissingInvoiceBillingDetails' },
  RECEIPT_NOT_ALLOCATED: { status: 404, error: 'ReceiptNotAllocated' },
  ROTATE_NOT_PERMITTED: { status: 400, error: 'RotateNotPermitted' },
  PRODUCT_NOT_DELETABLE: { status: 409, error: 'ProductNotDeletable' },
};

/** One item of a 422's `detail`, as Polar (FastAPI) writes it. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** The status and body an expected failure answers (also what an idempotency key stores for replays). */
export function coreErrorAnswer(err: CoreError): { status: number; body: Record<string, unknown> } {
  const { status, error } = (err.kind !== 'invalid' && WIRE_ERRORS[err.code]) || HTTP_BY_KIND[err.kind];
  if (err.kind === 'invalid') {
    // A 422's detail is always a list of issues; a failure without field issues still gets one.
    const issues = Array.isArray(err.details) ? (err.details as ValidationIssue[]) : [{ loc: ['body'], msg: err.message, type: 'value_error' }];
    return { status, body: { error, code: err.code, detail: issues } };
  }
  return { status, body: { error, code: err.code, detail: err.message } };
}

function sendCoreError(res: Response, err: CoreError) {
  if (err.kind === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
  const { status, body } = coreErrorAnswer(err);
  res.status(status).json(body);
}

/** The one place failures become HTTP: expected ones with their status, everything else a logged 500. */
export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (isCoreError(err)) {
    sendCoreError(res, err);
    return;
  }
  const status = typeof err?.status === 'number' ? err.status : typeof err?.statusCode === 'number' ? err.statusCode : 500;
  if (err?.type === 'entity.parse.failed') {
    // Malformed JSON is invalid input like any other, as Polar answers it: a 422 at ['body'].
    res.status(422).json({ error: 'RequestValidationError', code: 'MALFORMED_BODY', detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
    return;
  }
  if (isUniqueViolation(err)) {
    // Two requests raced past a service's own "already exists" check: the loser hears of the conflict, not a 500.
    res.status(409).json({ error: 'Conflict', code: 'ALREADY_EXISTS', detail: 'It already exists (another request created it at the same moment)' });
    return;
  }
  if (status >= 400 && status < 500) {
    // body-parser and friends: too large, wrong charset or encoding.
    const code = err.type === 'entity.too.large' ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST';
    res.status(status).json({ error: code, code, detail: err.expose ? err.message : 'Bad request' });
    return;
  }
  req.log?.error({ err }, 'unhandled error');
  res.status(500).json({ error: 'InternalServerError', code: 'INTERNAL_SERVER_ERROR', detail: 'Internal server error', request_id: req.id });
};

export const notFound: RequestHandler = (req, res) => {
  res.status(404).json({ error: 'ResourceNotFound', code: 'ROUTE_NOT_FOUND', detail: `No route for ${req.method} ${req.path}` });
};
