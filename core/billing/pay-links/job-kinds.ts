/** Mail the customer a link to pay an owed order after a renewal or dunning try was declined or needed authentication. */
export const PAY_LINK_MAIL_JOB = 'subscription.pay_link_mail';
