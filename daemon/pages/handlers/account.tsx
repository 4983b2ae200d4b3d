import type { RequestHandler } from 'express';
import type { AppDeps } from '../../app.js';
import { listMemberships, listSessions } from '../account-data.js';
import { authHeaders, forwardCookies } from '../auth-calls.js';
import { fieldOf } from '../forms.js';
import { sendPage } from '../render.js';
import { currentSession, signInUrl } from '../session.js';
import { AccountPage, type AccountPageProps } from '../views/AccountPage.js';

/** Fixed texts for `?notice=`: what the last action did. */
const NOTICES: Record<string, NonNullable<AccountPageProps['notice']>> = {
  'session-revoked': { kind: 'success', message: 'The session was revoked; that device is signed out.' },
  'others-revoked': { kind: 'success', message: 'All your other sessions were revoked.' },
  'session-not-found': { kind: 'error', message: 'That session no longer exists.' },
  'sign-in-again': { kind: 'info', message: 'Sign in again to manage your sessions.' },
};

/** GET /account: who you are, your sessions, your organizations. */
export function showAccount(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl('/account'));
    const [sessions, memberships] = await Promise.all([listSessions(deps, req, signedIn.sessionId), listMemberships(deps, req)]);
    const notice = typeof req.query.notice === 'string' ? NOTICES[req.query.notice] : undefined;
    sendPage(
      res,
      200,
      // Tokens stop here: the page gets ids and descriptions only.
      <AccountPage
        user={signedIn.user}
        sessions={sessions.stale ? null : sessions.sessions.map(({ token: _token, ...session }) => session)}
        memberships={memberships}
        notice={notice}
      />,
    );
  };
}

/** POST /account/sessions/revoke: ends one of the user's sessions, found by id (the token never leaves the server). */
export function revokeSession(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl('/account'));
    const list = await listSessions(deps, req, signedIn.sessionId);
    if (list.stale) return res.redirect(303, '/account?notice=sign-in-again');
    const target = list.sessions.find((session) => session.id === fieldOf(req.body, 'session_id'));
    if (!target) return res.redirect(303, '/account?notice=session-not-found');
    const { headers } = await deps.auth.api.revokeSession({ headers: authHeaders(req), body: { token: target.token }, returnHeaders: true });
    forwardCookies(headers, res);
    res.redirect(303, target.current ? '/sign-in?notice=signed-out' : '/account?notice=session-revoked');
  };
}

/** POST /account/sessions/revoke-others: signs out every other device. */
export function revokeOtherSessions(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl('/account'));
    const { headers } = await deps.auth.api.revokeOtherSessions({ headers: authHeaders(req), returnHeaders: true });
    forwardCookies(headers, res);
    res.redirect(303, '/account?notice=others-revoked');
  };
}

/** POST /sign-out: ends this session and clears its cookies. */
export function signOut(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const { headers } = await deps.auth.api.signOut({ headers: authHeaders(req), returnHeaders: true });
    forwardCookies(headers, res);
    res.redirect(303, '/sign-in?notice=signed-out');
  };
}
