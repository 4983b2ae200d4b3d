import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { signUp, uniqueEmail, type SignedIn } from '../testing/auth-client.js';

let daemon: TestDaemon;

beforeAll(async () => {
  daemon = await startTestDaemon();
  await signUp(daemon.url); // the platform admin; nobody below holds a platform role
});
afterAll(async () => {
  await daemon?.close();
});

interface Org {
  id: string;
  owner: SignedIn;
}

async function createOrg(): Promise<Org> {
  const owner = await signUp(daemon.url);
  const slug = `org-${owner.user.id.slice(0, 8).toLowerCase()}`;
  const res = await owner.client.post('/organization/create', { name: 'Acme', slug });
  expect(res.status).toBe(200);
  return { id: res.body.id, owner };
}

async function invite(org: Org, from: SignedIn, email: string, role: string | string[] = 'member') {
  return from.client.post('/organization/invite-member', { email, role, organizationId: org.id });
}

/** A new account joins through an invitation, accepted over HTTP; returns the account and its member row. */
async function join(org: Org, role: string | string[] = 'member') {
  const email = uniqueEmail(Array.isArray(role) ? role.join('-') : role);
  const invitation = await invite(org, org.owner, email, role);
  expect(invitation.status).toBe(200);
  const account = await signUp(daemon.url, { email });
  const accepted = await account.client.post('/organization/accept-invitation', { invitationId: invitation.body.id });
  expect(accepted.status).toBe(200);
  return { account, member: accepted.body.member as { id: string; role: string } };
}

async function invitationStatus(org: Org, id: string) {
  const res = await org.owner.client.get('/organization/list-invitations', { organizationId: org.id });
  return res.body.find((i: { id: string }) => i.id === id)?.status;
}

describe('organizations', () => {
  it('makes the creator its owner', async () => {
    const org = await createOrg();
    const res = await org.owner.client.get('/organization/get-full-organization', { organizationId: org.id });
    expect(res.body.members).toEqual([expect.objectContaining({ userId: org.owner.user.id, role: 'owner' })]);
  });
});

describe('invitations', () => {
  it('go from pending to accepted, making the invitee a member with the invited role', async () => {
    const org = await createOrg();
    const email = uniqueEmail('invitee');
    const invitation = await invite(org, org.owner, email, 'admin');
    expect(invitation.body).toMatchObject({ email, role: 'admin', status: 'pending', organizationId: org.id });
    const invitee = await signUp(daemon.url, { email });
    const res = await invitee.client.post('/organization/accept-invitation', { invitationId: invitation.body.id });
    expect(res.body.invitation.status).toBe('accepted');
    expect(res.body.member).toMatchObject({ userId: invitee.user.id, role: 'admin', organizationId: org.id });
    expect(await invitationStatus(org, invitation.body.id)).toBe('accepted');
  });

  it('go from pending to rejected when the recipient declines, adding no member', async () => {
    const org = await createOrg();
    const email = uniqueEmail('decliner');
    const invitation = await invite(org, org.owner, email);
    const invitee = await signUp(daemon.url, { email });
    const res = await invitee.client.post('/organization/reject-invitation', { invitationId: invitation.body.id });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ invitation: { status: 'rejected' }, member: null });
    expect(await invitationStatus(org, invitation.body.id)).toBe('rejected');
    const accept = await invitee.client.post('/organization/accept-invitation', { invitationId: invitation.body.id });
    expect(accept.status).toBe(400);
    expect(accept.body.message).toBe('Invitation not found');
  });

  it('go from pending to canceled by the owner, and can then no longer be accepted', async () => {
    const org = await createOrg();
    const email = uniqueEmail('uninvited');
    const invitation = await invite(org, org.owner, email);
    const res = await org.owner.client.post('/organization/cancel-invitation', { invitationId: invitation.body.id });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('canceled');
    const invitee = await signUp(daemon.url, { email });
    const accept = await invitee.client.post('/organization/accept-invitation', { invitationId: invitation.body.id });
    expect(accept.status).toBe(400);
    expect(accept.body.message).toBe('Invitation not found');
  });

  it('leave the accepted state alone: no second accept, no reject, no cancel', async () => {
    const org = await createOrg();
    const email = uniqueEmail('member');
    const invitation = await invite(org, org.owner, email);
    const invitee = await signUp(daemon.url, { email });
    await invitee.client.post('/organization/accept-invitation', { invitationId: invitation.body.id });
    expect((await invitee.client.post('/organization/accept-invitation', { invitationId: invitation.body.id })).status).toBe(400);
    expect((await invitee.client.post('/organization/reject-invitation', { invitationId: invitation.body.id })).status).toBe(400);
    const cancel = await org.owner.client.post('/organization/cancel-invitation', { invitationId: invitation.body.id });
    expect(cancel.status).toBe(400);
    expect(cancel.body.code).toBe('INVITATION_NOT_PENDING');
    expect(await invitationStatus(org, invitation.body.id)).toBe('accepted');
  });

  it('can be accepted only by their recipient', async () => {
    const org = await createOrg();
    const invitation = await invite(org, org.owner, uniqueEmail('someone'));
    const stranger = await signUp(daemon.url);
    const res = await stranger.client.post('/organization/accept-invitation', { invitationId: invitation.body.id });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('You are not the recipient of the invitation');
  });

  it('accept a list of roles, and refuse a role that does not exist', async () => {
    const org = await createOrg();
    const { member } = await join(org, ['admin', 'member']);
    expect(member.role).toBe('admin,member');
    const unknown = await invite(org, org.owner, uniqueEmail(), 'boss');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('ROLE_NOT_FOUND: boss');
  });
});

describe('the SPEC §6 roles', () => {
  let org: Org;
  let admin: SignedIn;
  let member: SignedIn;

  beforeAll(async () => {
    org = await createOrg();
    admin = (await join(org, 'admin')).account;
    member = (await join(org, 'member')).account;
  });

  it('let a member read access control and nothing else', async () => {
    expect((await member.client.get('/organization/list-roles', { organizationId: org.id })).status).toBe(200);
    const refusals = [
      [await member.client.post('/organization/update', { organizationId: org.id, data: { name: 'Mine' } }), 'You are not allowed to update this organization'],
      [await member.client.post('/organization/delete', { organizationId: org.id }), 'You are not allowed to delete this organization'],
      [await invite(org, member, uniqueEmail()), 'You are not allowed to invite users to this organization'],
      [await member.client.post('/organization/create-team', { name: 'Mine', organizationId: org.id }), 'You are not allowed to create teams in this organization'],
      [await member.client.post('/organization/create-role', { role: 'mine', permission: { team: ['create'] }, organizationId: org.id }), 'You are not allowed to create a role'],
    ] as const;
    for (const [res, message] of refusals) {
      expect(res.status).toBe(403);
      expect(res.body.message).toBe(message);
    }
  });

  it('let an admin update the organization, invite, create teams and roles, but not delete it', async () => {
    const update = await admin.client.post('/organization/update', { organizationId: org.id, data: { name: 'Acme Renamed' } });
    expect(update.status).toBe(200);
    expect(update.body.name).toBe('Acme Renamed');
    expect((await invite(org, admin, uniqueEmail())).status).toBe(200);
    expect((await admin.client.post('/organization/create-team', { name: 'Admins', organizationId: org.id })).status).toBe(200);
    const role = await admin.client.post('/organization/create-role', { role: 'auditor', permission: { ac: ['read'] }, organizationId: org.id });
    expect(role.status).toBe(200);
    const del = await admin.client.post('/organization/delete', { organizationId: org.id });
    expect(del.status).toBe(403);
    expect(del.body.message).toBe('You are not allowed to delete this organization');
  });

  it('do not let an admin invite an owner', async () => {
    const res = await invite(org, admin, uniqueEmail(), 'owner');
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('You are not allowed to invite a user with this role');
  });

  it('let the owner delete the organization', async () => {
    const doomed = await createOrg();
    const res = await doomed.owner.client.post('/organization/delete', { organizationId: doomed.id });
    expect(res.status).toBe(200);
    expect((await doomed.owner.client.get('/organization/list')).body).toEqual([]);
  });
});

describe('teams', () => {
  it('are created, listed and joined by members', async () => {
    const org = await createOrg();
    const { account } = await join(org);
    const team = await org.owner.client.post('/organization/create-team', { name: 'Core', organizationId: org.id });
    expect(team.status).toBe(200);
    expect(team.body).toMatchObject({ name: 'Core', organizationId: org.id });
    const added = await org.owner.client.post('/organization/add-team-member', { teamId: team.body.id, userId: account.user.id, organizationId: org.id });
    expect(added.status).toBe(200);
    const teams = await org.owner.client.get('/organization/list-teams', { organizationId: org.id });
    expect(teams.body.map((t: { name: string }) => t.name)).toContain('Core');
    // Only the team's own members may list it.
    const members = await account.client.get('/organization/list-team-members', { teamId: team.body.id });
    expect(members.body.map((m: { userId: string }) => m.userId)).toEqual([account.user.id]);
    const outside = await org.owner.client.get('/organization/list-team-members', { teamId: team.body.id });
    expect(outside.status).toBe(400);
    expect(outside.body.message).toBe('User is not a member of the team');
  });

  it('need a name of at least 1 character', async () => {
    const org = await createOrg();
    const empty = await org.owner.client.post('/organization/create-team', { name: '', organizationId: org.id });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('VALIDATION_ERROR');
    const team = await org.owner.client.post('/organization/create-team', { name: 'A', organizationId: org.id });
    expect(team.status).toBe(200);
    const rename = await org.owner.client.post('/organization/update-team', { teamId: team.body.id, data: { name: '', organizationId: org.id } });
    expect(rename.status).toBe(400);
    expect(rename.body.code).toBe('VALIDATION_ERROR');
  });

  it('take only members of the organization', async () => {
    const org = await createOrg();
    const outsider = await signUp(daemon.url);
    const team = await org.owner.client.post('/organization/create-team', { name: 'Core', organizationId: org.id });
    const res = await org.owner.client.post('/organization/add-team-member', { teamId: team.body.id, userId: outsider.user.id, organizationId: org.id });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('User is not a member of the organization');
  });
});

describe('custom roles (dynamic access control)', () => {
  it('are created with a permission map, assigned, and honoured', async () => {
    const org = await createOrg();
    const { account, member } = await join(org);
    const createTeam = () => account.client.post('/organization/create-team', { name: 'Builders', organizationId: org.id }, 'bearer');
    expect((await createTeam()).status).toBe(403);

    const role = await org.owner.client.post('/organization/create-role', { role: 'team-maker', permission: { team: ['create'] }, organizationId: org.id });
    expect(role.status).toBe(200);
    expect(role.body.roleData).toMatchObject({ role: 'team-maker', permission: { team: ['create'] }, organizationId: org.id });
    const listed = await org.owner.client.get('/organization/list-roles', { organizationId: org.id });
    expect(listed.body.map((r: { role: string }) => r.role)).toEqual(['team-maker']);

    const assigned = await org.owner.client.post('/organization/update-member-role', { memberId: member.id, role: 'team-maker', organizationId: org.id });
    expect(assigned.status).toBe(200);
    expect((await createTeam()).status).toBe(200);
    // The role grants exactly its map: inviting is still refused.
    expect((await invite(org, account, uniqueEmail())).status).toBe(403);
  });

  it('refuse a resource outside the SPEC §6 statements', async () => {
    const org = await createOrg();
    const res = await org.owner.client.post('/organization/create-role', { role: 'billing', permission: { invoices: ['read'] }, organizationId: org.id });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('The provided permission includes an invalid resource');
  });

  it('cannot take the name of a built-in role', async () => {
    const org = await createOrg();
    const res = await org.owner.client.post('/organization/create-role', { role: 'admin', permission: { team: ['create'] }, organizationId: org.id });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('That role name is already taken');
  });
});
