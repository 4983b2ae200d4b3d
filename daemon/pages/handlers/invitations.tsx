import type { RequestHandler } from 'express';
import type { AppDeps } from '../../app.js';
import { authFailure, callAuth } from '../auth-calls.js';
import { sendPage } from '../render.js';
import { currentSession, signInUrl } from '../session.js';
import { InvitationPage, NoticePage } from '../views/EmailPages.js';

const invitationPath = (id: string) => `/invitations/${encodeURIComponent(id)}`;

/** GET /invitations/:id: the invitation mailed to the signed-in user; anyone else signs in first. */
export function showInvitation(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const id = String(req.params.id);
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl(invitationPath(id)));
    const reply = await callAuth(deps, req, res, { method: 'GET', path: '/organization/get-invitation', query: { id } });
    if (reply.status !== 200) {
      const failure = authFailure(reply);
      return sendPage(
        res,
        reply.status,
        <NoticePage
          title="Invitation not available"
          kind="error"
          message={`${failure.message}. Invitations are for the address they were sent to (you are signed in as ${signedIn.user.email}) and expire after a while.`}
          links={[{ href: '/account', label: 'Your account' }]}
          user={signedIn.user}
        />,
      );
    }
    const body = reply.body as { id: string; organizationName: string; inviterEmail: string; role: string; email: string };
    sendPage(res, 200, <InvitationPage invitation={body} user={signedIn.user} />);
  };
}

/** POST /invitations/:id/accept and /reject. */
export function decideInvitation(deps: AppDeps, decision: 'accept' | 'reject'): RequestHandler {
  return async (req, res) => {
    const id = String(req.params.id);
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl(invitationPath(id)));
    const reply = await callAuth(deps, req, res, {
      method: 'POST',
      path: decision === 'accept' ? '/organization/accept-invitation' : '/organization/reject-invitation',
      body: { invitationId: id },
    });
    if (reply.status !== 200) {
      const failure = authFailure(reply);
      return sendPage(
        res,
        reply.status,
        <NoticePage title="Invitation not available" kind="error" message={failure.message} links={[{ href: '/account', label: 'Your account' }]} user={signedIn.user} />,
      );
    }
    sendPage(
      res,
      200,
      <NoticePage
        title={decision === 'accept' ? 'Invitation accepted' : 'Invitation declined'}
        kind="success"
        message={decision === 'accept' ? 'You are now a member of the organization.' : 'You declined the invitation.'}
        links={[{ href: '/account', label: 'Your account' }]}
        user={signedIn.user}
      />,
    );
  };
}
