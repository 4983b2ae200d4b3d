import { createAccessControl } from 'better-auth/plugins/access';

/** Organization resources and their actions (SPEC §6). */
export const organizationStatements = {
  organization: ['update', 'delete'],
  member: ['create', 'update', 'delete'],
  invitation: ['create', 'cancel'],
  team: ['create', 'update', 'delete'],
  ac: ['create', 'read', 'update', 'delete'],
} as const;

export const organizationAc = createAccessControl(organizationStatements);

/** Owner: everything. Admin: everything but deleting the organization. Member: may only read ac. */
export const organizationRoles = {
  owner: organizationAc.newRole({
    organization: ['update', 'delete'],
    member: ['create', 'update', 'delete'],
    invitation: ['create', 'cancel'],
    team: ['create', 'update', 'delete'],
    ac: ['create', 'read', 'update', 'delete'],
  }),
  admin: organizationAc.newRole({
    organization: ['update'],
    member: ['create', 'update', 'delete'],
    invitation: ['create', 'cancel'],
    team: ['create', 'update', 'delete'],
    ac: ['create', 'read', 'update', 'delete'],
  }),
  member: organizationAc.newRole({
    organization: [],
    member: [],
    invitation: [],
    team: [],
    ac: ['read'],
  }),
};

/** The platform-wide admin permission set (SPEC §6): admin has all of it, user none. */
export const adminStatements = {
  user: ['create', 'list', 'set-role', 'ban', 'impersonate', 'delete', 'set-password', 'get', 'update'],
  session: ['list', 'revoke', 'delete'],
} as const;

export const adminAc = createAccessControl(adminStatements);

export const adminRoles = {
  admin: adminAc.newRole({
    user: ['create', 'list', 'set-role', 'ban', 'impersonate', 'delete', 'set-password', 'get', 'update'],
    session: ['list', 'revoke', 'delete'],
  }),
  user: adminAc.newRole({ user: [], session: [] }),
};
