import { describe, expect, it } from 'vitest';
import { SLOW_DOWN_STEP_MS, waitForApproval, type TokenPoll } from './device-login.js';
import { CliError, EXIT } from '../errors.js';

/** A fake server that answers the given polls in order, and a clock that moves only when we sleep. */
function script(answers: TokenPoll[]) {
  let clock = 0;
  const sleeps: number[] = [];
  let polls = 0;
  const deps = {
    now: () => clock,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      clock += ms;
    },
    poll: async () => {
      const answer = answers[polls++];
      if (!answer) throw new Error('polled more often than scripted');
      return answer;
    },
  };
  return { deps, sleeps, polls: () => polls };
}

const schedule = { intervalSeconds: 5, expiresInSeconds: 1800 };

describe('waitForApproval', () => {
  it('waits one interval before each poll and returns the token once approved', async () => {
    const { deps, sleeps } = script([{ kind: 'pending' }, { kind: 'pending' }, { kind: 'token', accessToken: 'tok' }]);
    await expect(waitForApproval(deps, schedule)).resolves.toBe('tok');
    expect(sleeps).toEqual([5000, 5000, 5000]);
  });

  it('adds five seconds to the interval on every slow_down, and keeps it', async () => {
    const { deps, sleeps } = script([
      { kind: 'pending' },
      { kind: 'slow_down' },
      { kind: 'pending' },
      { kind: 'slow_down' },
      { kind: 'token', accessToken: 'tok' },
    ]);
    await expect(waitForApproval(deps, schedule)).resolves.toBe('tok');
    expect(sleeps).toEqual([5000, 5000, 5000 + SLOW_DOWN_STEP_MS, 5000 + SLOW_DOWN_STEP_MS, 5000 + 2 * SLOW_DOWN_STEP_MS]);
  });

  it('stops with ACCESS_DENIED (exit 3) when the code is denied', async () => {
    const { deps, polls } = script([{ kind: 'pending' }, { kind: 'denied' }]);
    const error = await waitForApproval(deps, schedule).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({ code: 'ACCESS_DENIED', exitCode: EXIT.notSignedIn });
    expect(polls()).toBe(2);
  });

  it('stops with DEVICE_CODE_EXPIRED (exit 3) when the server says the code expired', async () => {
    const { deps } = script([{ kind: 'pending' }, { kind: 'expired' }]);
    await expect(waitForApproval(deps, schedule)).rejects.toMatchObject({ code: 'DEVICE_CODE_EXPIRED', exitCode: EXIT.notSignedIn });
  });

  it('gives up by itself once the code has outlived expires_in, even if the server keeps saying pending', async () => {
    const { deps, polls } = script(Array.from({ length: 10 }, () => ({ kind: 'pending' }) as const));
    await expect(waitForApproval(deps, { intervalSeconds: 5, expiresInSeconds: 12 })).rejects.toMatchObject({ code: 'DEVICE_CODE_EXPIRED' });
    expect(polls()).toBe(3);
  });

  it('never polls faster than once a second, whatever interval it is given', async () => {
    const { deps, sleeps } = script([{ kind: 'token', accessToken: 'tok' }]);
    await waitForApproval(deps, { intervalSeconds: 0, expiresInSeconds: 60 });
    expect(sleeps).toEqual([1000]);
  });
});
