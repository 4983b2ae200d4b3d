import type { MailMessage } from './mailer.js';

/** The mails of the account flows. Plain text plus a small HTML version, both carrying the link. */

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function compose(to: string, subject: string, lines: string[], link: { label: string; url: string }, footer: string): MailMessage {
  const text = [...lines, '', `${link.label}: ${link.url}`, '', footer].join('\n');
  const html = [
    ...lines.map((line) => `<p>${escapeHtml(line)}</p>`),
    `<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p>`,
    `<p style="color:#666">${escapeHtml(footer)}</p>`,
  ].join('\n');
  return { to, subject, text, html };
}

const IGNORE = 'If you did not ask for this, you can ignore this email.';

export function verificationMail(to: string, name: string, url: string): MailMessage {
  return compose(to, 'Verify your email address for Till', [`Hello ${name},`, 'Confirm that this is your email address to finish setting up your Till account.'], { label: 'Verify your email address', url }, IGNORE);
}

export function resetPasswordMail(to: string, name: string, url: string, expiresInMinutes: number): MailMessage {
  return compose(
    to,
    'Reset your Till password',
    [`Hello ${name},`, `Someone asked to reset the password of your Till account. The link works once, within ${expiresInMinutes} minutes.`],
    { label: 'Choose a new password', url },
    `${IGNORE} Your password stays as it is.`,
  );
}

export function changeEmailMail(to: string, name: string, newEmail: string, url: string): MailMessage {
  return compose(
    to,
    'Confirm the change of your Till email address',
    [`Hello ${name},`, `Someone asked to change the email address of your Till account from ${to} to ${newEmail}.`],
    { label: 'Approve the change', url },
    `${IGNORE} Your email address stays as it is.`,
  );
}

export function deleteAccountMail(to: string, name: string, url: string): MailMessage {
  return compose(
    to,
    'Confirm deleting your Till account',
    [`Hello ${name},`, 'Someone asked to delete your Till account. Deleting it signs you out everywhere and removes you from every organization; it cannot be undone.'],
    { label: 'Delete my account', url },
    `${IGNORE} Your account stays as it is.`,
  );
}

export function invitationMail(to: string, inviter: string, organization: string, role: string, url: string): MailMessage {
  return compose(
    to,
    `${inviter} invited you to ${organization} on Till`,
    [`${inviter} invited you to join the organization ${organization} on Till as ${role}.`, 'Sign in (or create an account with this email address) to accept or decline.'],
    { label: 'View the invitation', url },
    'If you do not know this organization, you can ignore this email.',
  );
}

/* The customer portal's mails: to a seller's customers, in the seller's name (they are not Till users). */

export function portalCodeMail(to: string, seller: string, code: string, expiresInMinutes: number, url: string): MailMessage {
  return compose(
    to,
    `Your ${seller} sign-in code: ${code}`,
    [`Your code to sign in to ${seller}'s customer portal is ${code}.`, `Type it on the sign-in page within ${expiresInMinutes} minutes. It works once.`],
    { label: 'Open the sign-in page', url },
    'If you did not ask for this, you can ignore this email: nobody can sign in without the code.',
  );
}

export function customerEmailUpdateMail(to: string, seller: string, url: string, expiresInMinutes: number): MailMessage {
  return compose(
    to,
    `Verify your new email address for ${seller}`,
    [`Someone asked to use ${to} as the email address of their ${seller} customer account.`, `Confirm it within ${expiresInMinutes} minutes. The link works once.`],
    { label: 'Confirm this email address', url },
    `${IGNORE} The account keeps its email address.`,
  );
}

export function customerEmailChangedMail(to: string, seller: string, newEmail: string, portalUrl: string): MailMessage {
  return compose(
    to,
    `Your ${seller} email address has been changed`,
    [`The email address of your ${seller} customer account is now ${newEmail}. Receipts and sign-in codes go there from now on.`],
    { label: 'Open your account', url: portalUrl },
    `If you did not make this change, contact ${seller}.`,
  );
}

/** What an order's receipt mail says: what was bought, the amount as shown to the customer, where to find the PDF. */
export interface ReceiptMailContent {
  seller: string;
  product: string;
  amount: string;
  receiptNumber: string | null;
  portalUrl: string;
}

export function orderReceiptMail(to: string, content: ReceiptMailContent): MailMessage {
  return compose(
    to,
    `Your receipt from ${content.seller}`,
    [
      `Thank you for your order of ${content.product}.`,
      `Paid: ${content.amount}${content.receiptNumber ? ` (receipt ${content.receiptNumber})` : ''}.`,
      'Your receipt, invoices, license keys and downloads are in the customer portal.',
    ],
    { label: 'Open the customer portal', url: content.portalUrl },
    `This email was sent by ${content.seller} because you bought from them.`,
  );
}

export function renewalReceiptMail(to: string, content: ReceiptMailContent & { nextCharge: string | null }): MailMessage {
  return compose(
    to,
    `Your ${content.product} subscription was renewed`,
    [
      `Your subscription to ${content.product} from ${content.seller} was renewed.`,
      `Paid: ${content.amount}${content.receiptNumber ? ` (receipt ${content.receiptNumber})` : ''}.`,
      ...(content.nextCharge ? [`The next renewal is on ${content.nextCharge}.`] : []),
      'You can see your receipts, or cancel, in the customer portal.',
    ],
    { label: 'Open the customer portal', url: content.portalUrl },
    `This email was sent by ${content.seller} because you subscribe to ${content.product}.`,
  );
}

export function cancellationMail(to: string, content: { seller: string; product: string; endsOn: string | null; portalUrl: string }): MailMessage {
  return compose(
    to,
    `Your ${content.product} subscription is canceled`,
    [
      `Your subscription to ${content.product} from ${content.seller} is canceled.`,
      content.endsOn ? `You keep access until ${content.endsOn}; nothing more will be charged.` : 'It has ended; nothing more will be charged.',
      ...(content.endsOn ? ['Changed your mind? You can take the cancellation back in the customer portal until then.'] : []),
    ],
    { label: 'Open the customer portal', url: content.portalUrl },
    `This email was sent by ${content.seller} because you subscribed to ${content.product}.`,
  );
}

/** What `paymentNeededMail` says: whose subscription, what is owed, and why the renewal did not go through. */
export interface PaymentNeeded {
  seller: string;
  product: string;
  /** The owed amount as the customer reads it ("$12.00"). */
  amount: string;
  /** `authentication_required`: the bank wants the customer to confirm; anything else: declined. */
  declineCode: string | null;
  declineMessage: string | null;
  url: string;
  expiresAt: Date;
}

/**
 * To a customer whose renewal was declined or needs their authentication (3-D Secure): a link to pay the owed
 * renewal themselves. The subscription is past_due meanwhile and the seller keeps retrying the saved card.
 */
export function paymentNeededMail(to: string, name: string | null, needed: PaymentNeeded): MailMessage {
  const authenticate = needed.declineCode === 'authentication_required';
  const why = authenticate
    ? `Your bank asks you to confirm the payment of ${needed.amount} for your ${needed.product} subscription with ${needed.seller}, which could not be done while you were away.`
    : `The payment of ${needed.amount} for your ${needed.product} subscription with ${needed.seller} did not go through${needed.declineMessage ? `: ${needed.declineMessage}` : '.'}`;
  return compose(
    to,
    authenticate ? `Confirm your payment to ${needed.seller}` : `Your payment to ${needed.seller} failed`,
    [
      `Hello${name ? ` ${name}` : ''},`,
      why,
      `Your subscription is past due until it is paid. Pay it with the link below (it works until ${needed.expiresAt.toUTCString()}); ${needed.seller} will also try your saved card again in a few days.`,
    ],
    { label: authenticate ? 'Confirm and pay' : 'Pay now', url: needed.url },
    'If you have paid meanwhile, you can ignore this email.',
  );
}
