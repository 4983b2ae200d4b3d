import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { authClient, TEST_PASSWORD, uniqueEmail } from '../testing/auth-client.js';

let daemon: TestDaemon;
beforeAll(async () => {
  daemon = await startTestDaemon();
});
afterAll(async () => {
  await daemon?.close();
});

describe('the first account of an installation', () => {
  it('is the only admin even when several sign-ups race on an empty database', async () => {
    const signUps = Array.from({ length: 8 }, () =>
      authClient(daemon.url).post('/sign-up/email', { email: uniqueEmail('racer'), password: TEST_PASSWORD, name: 'Racer' }),
    );
    const statuses = (await Promise.all(signUps)).map((res) => res.status);
    expect(statuses).toEqual(Array(8).fill(200));
    const roles = (await daemon.db('user').select('role')).map((row: { role: string }) => row.role);
    expect(roles.filter((role) => role === 'admin')).toHaveLength(1);
    expect(roles).toHaveLength(8);
  });
});
