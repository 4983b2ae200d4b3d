/**
 * What the pages say when sign-in or linking through a provider fails. Better Auth's callback sends the
 * browser back with `?error=<code>` (a lower-case code of its own, or the provider's OAuth error); each
 * known code gets a fixed text, SPEC §8's wording first where the catalogue has one. Nothing from the URL
 * is ever shown: an unknown code gets the general message.
 */
const MESSAGES: Record<string, string> = {
  // SPEC §8 FAILED_TO_GET_USER_INFO
  unable_to_get_user_info: 'Failed to get user info. The provider did not tell Till who you are; try again, or sign in another way.',
  // SPEC §8 SOCIAL_ACCOUNT_ALREADY_LINKED
  account_already_linked_to_different_user:
    'Social account already linked. That account signs in to another Till account; unlink it there first.',
  // SPEC §8 PROVIDER_NOT_FOUND
  oauth_provider_not_found: 'Provider not found.',
  // SPEC §8 USER_EMAIL_NOT_FOUND
  email_not_found: 'User email not found. The provider did not share your email address; allow it at the provider and try again.',
  // SPEC §8 EMAIL_NOT_VERIFIED
  email_not_verified: 'Email not verified.',
  // SPEC §8 FAILED_TO_CREATE_USER / FAILED_TO_CREATE_SESSION
  unable_to_create_user: 'Failed to create user.',
  unable_to_create_session: 'Failed to create session.',
  account_not_linked:
    'An account with this email address already exists. Sign in to it another way, then link this provider on your account page.',
  email_does_not_match: "That account's email address is not the one of your Till account: only an account with the same address can be linked.",
  unable_to_link_account: 'The account could not be linked: the provider has not verified its email address, or your session ended. Sign in and try again.',
  signup_disabled: 'No Till account uses that sign-in, and new accounts cannot be made this way.',
  access_denied: 'Sign-in was cancelled at the provider.',
  invalid_code: "The provider's answer could not be used. Try again.",
  issuer_mismatch: "The provider's answer came from an unexpected issuer. Try again.",
  state_not_found: 'That sign-in link is not valid. Start again.',
  state_mismatch: 'The sign-in took too long, or was started in another browser. Start again.',
  state_security_mismatch: 'The sign-in took too long, or was started in another browser. Start again.',
  state_invalid: 'The sign-in took too long, or was started in another browser. Start again.',
};

const GENERAL = 'Signing in with the provider did not work. Try again, or sign in another way.';

/** The text for a callback's `?error=` code (undefined when there is none). */
export function socialErrorMessage(code: unknown): string | undefined {
  if (typeof code !== 'string' || code === '') return undefined;
  return Object.hasOwn(MESSAGES, code) ? MESSAGES[code] : GENERAL;
}

/**
 * Better Auth's answer to a sign-in or link request for `providerId`, as the page should say it. A configured
 * OpenID provider whose discovery has failed so far is "not found" to Better Auth; the user is told it
 * cannot be reached (503) instead, and the next request tries discovery again.
 */
export function providerFailure(failure: { status: number; code: string; message: string }, providerId: string, configured: { id: string; name: string }[]) {
  const provider = configured.find((candidate) => candidate.id === providerId);
  if (failure.code === 'PROVIDER_NOT_FOUND' && provider) {
    return { status: 503, message: `${provider.name} cannot be reached right now. Try again in a moment, or sign in another way.` };
  }
  return { status: failure.status, message: failure.message };
}
