import type { RequestHandler } from 'express';
import type { AppDeps } from '../../app.js';
import { currentSession } from '../session.js';

/** GET /: the account page when signed in, else sign-in. */
export function home(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    res.redirect(303, signedIn ? '/account' : '/sign-in');
  };
}
