import type { RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../../app.js';
import { DEVICE_CLIENTS } from '../../../core/auth/device-clients.js';
import { authFailure, callAuth } from '../auth-calls.js';
import { DEVICE_OUTCOMES, deviceOutcomeOf, type DeviceOutcome } from '../device-outcomes.js';
import { fieldOf } from '../forms.js';
import { sendPage } from '../render.js';
import { currentSession, signInUrl, type SignedInUser } from '../session.js';
import { normaliseUserCode } from '../user-code.js';
import { DeviceConfirmPage } from '../views/DeviceConfirmPage.js';
import { DeviceEntryPage } from '../views/DeviceEntryPage.js';
import { DeviceOutcomePage } from '../views/DeviceOutcomePage.js';

/** Better Auth's GET /device answer; client and scope are there only for the user who claimed the code. */
const Verification = z.object({
  status: z.enum(['pending', 'approved', 'denied']),
  client_id: z.string().optional(),
  scope: z.string().nullish(),
});

const CODE_REQUIRED = 'Enter the code shown in your terminal.';

const devicePath = (userCode: string) => `/device?user_code=${encodeURIComponent(userCode)}`;

/**
 * GET /device[?user_code=…]: the code form, or the request behind the code. Looking a code up while
 * signed in claims it for this user (Better Auth), so only they can approve or deny it afterwards.
 */
export function showDevice(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl(req.originalUrl));
    const { user } = signedIn;
    const typed = req.query.user_code;
    if (typed === undefined) return sendPage(res, 200, <DeviceEntryPage user={user} />);
    const userCode = normaliseUserCode(typed);
    if (!userCode) return sendPage(res, 400, <DeviceEntryPage user={user} value={typeof typed === 'string' ? typed : ''} error={CODE_REQUIRED} />);

    const reply = await callAuth(deps, req, res, { method: 'GET', path: '/device', query: { user_code: userCode } });
    if (reply.status !== 200) {
      const outcome = deviceOutcomeOf(authFailure(reply));
      if (outcome === 'signed_out') return res.redirect(303, signInUrl(devicePath(userCode)));
      // A fresh lookup always claims, so "unclaimed" cannot come back here; treat it as not yours.
      return sendOutcome(res, user, outcome === 'unclaimed' ? 'not_yours' : outcome, userCode);
    }
    const verification = Verification.parse(reply.body);
    if (verification.status !== 'pending') return sendOutcome(res, user, 'processed', userCode);
    if (!verification.client_id) return sendOutcome(res, user, 'not_yours', userCode);
    const clientId = verification.client_id;
    sendPage(
      res,
      200,
      <DeviceConfirmPage
        user={user}
        userCode={userCode}
        clientId={clientId}
        clientName={DEVICE_CLIENTS.get(clientId) ?? clientId}
        scope={verification.scope ?? undefined}
      />,
    );
  };
}

/** POST /device/approve and /device/deny: the user's answer for a code they have looked at. */
export function decideDevice(deps: AppDeps, decision: 'approve' | 'deny'): RequestHandler {
  return async (req, res) => {
    const userCode = normaliseUserCode(fieldOf(req.body, 'user_code'));
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl(userCode ? devicePath(userCode) : '/device'));
    const { user } = signedIn;
    if (!userCode) return sendPage(res, 400, <DeviceEntryPage user={user} error={CODE_REQUIRED} />);

    const reply = await callAuth(deps, req, res, { method: 'POST', path: `/device/${decision}`, body: { userCode } });
    if (reply.status === 200) return sendOutcome(res, user, decision === 'approve' ? 'approved' : 'denied', userCode);
    const outcome = deviceOutcomeOf(authFailure(reply));
    if (outcome === 'signed_out') return res.redirect(303, signInUrl(devicePath(userCode)));
    // Never shown to this user yet: show it first rather than approving a request they have not seen.
    if (outcome === 'unclaimed') return res.redirect(303, devicePath(userCode));
    sendOutcome(res, user, outcome, userCode);
  };
}

function sendOutcome(res: Response, user: SignedInUser, outcome: DeviceOutcome, userCode: string): void {
  sendPage(res, DEVICE_OUTCOMES[outcome].status, <DeviceOutcomePage user={user} outcome={outcome} userCode={userCode} />);
}
