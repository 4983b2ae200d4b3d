import { CoreError } from '../../errors.js';

/** Every way a customer write is refused, as the 422 issue Polar answers with. */
export const CUSTOMER_ISSUES = {
  EMAIL_TAKEN: { loc: ['body', 'email'], msg: 'A customer with this email address already exists.', type: 'value_error' },
  EXTERNAL_ID_TAKEN: { loc: ['body', 'external_id'], msg: 'A customer with this external ID already exists.', type: 'value_error' },
  EXTERNAL_ID_IMMUTABLE: { loc: ['body', 'external_id'], msg: 'Customer external ID cannot be updated.', type: 'value_error' },
  BILLING_ADDRESS_REQUIRED: { loc: ['body', 'billing_address'], msg: 'Customer billing address cannot be reset to null once set.', type: 'value_error' },
  TAX_ID_NEEDS_COUNTRY: { loc: ['body', 'billing_address'], msg: 'Country is required to validate tax ID.', type: 'missing' },
  TAX_ID_INVALID: { loc: ['body', 'tax_id'], msg: 'Invalid tax ID.', type: 'invalid' },
} as const;
export type CustomerIssue = keyof typeof CUSTOMER_ISSUES;

/** A 422 listing the issues; its code is the first one's. */
export function customerInvalid(issues: readonly [CustomerIssue, ...CustomerIssue[]]): CoreError {
  return new CoreError('invalid', `CUSTOMER_${issues[0]}`, CUSTOMER_ISSUES[issues[0]].msg, issues.map((issue) => CUSTOMER_ISSUES[issue]));
}

export const customerNotFound = () => new CoreError('not_found', 'CUSTOMER_NOT_FOUND', 'Customer not found');

/** The same external id in two organizations the caller reaches: the caller must say which. */
export const ambiguousExternalId = () =>
  new CoreError('invalid', 'CUSTOMER_EXTERNAL_ID_AMBIGUOUS', 'Several of your organizations have a customer with this external ID', [
    { loc: ['query', 'organization_id'], msg: 'Several of your organizations have a customer with this external ID: name one with organization_id', type: 'missing' },
  ]);

export const customersReadOnly = () =>
  new CoreError('forbidden', 'INSUFFICIENT_SCOPE', 'Changing customers needs the customers:write scope (an owner or admin) in their organization');
