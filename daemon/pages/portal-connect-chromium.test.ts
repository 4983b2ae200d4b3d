import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGitHub, type FakeGitHub } from '../../core/integrations/fake-github.js';
import { launchBrowser } from '../testing/browser.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { seedProductWithBenefits } from '../testing/benefit-grants.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk } from '../testing/v1.js';

// The customer portal in Chromium: a customer who bought a product with a GitHub repository benefit connects their
// GitHub account from the overview (through a local fake of GitHub's OAuth pages and API) and is invited.

let github: FakeGitHub;
let daemon: TestDaemon;
let browser: Browser;
let owner: SignedIn;
let organizationId: string;
let slug: string;

beforeAll(async () => {
  github = await startFakeGitHub();
  [daemon, browser] = await Promise.all([startTestDaemon({ ...github.env }), launchBrowser()]);
  owner = await signUp(daemon.url, { name: 'Rita Repo' });
  organizationId = await createOrganization(owner, 'Repo Sellers');
  slug = (await polarSdk(daemon.url, owner.token).organizations.get({ id: organizationId })).slug;
  github.addRepository('repo-sellers', 'source');
});
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
  await github?.close();
});

describe('connecting GitHub from the customer portal', () => {
  it('connects GitHub from the overview after a sandbox checkout, and the account is invited to the repository', async () => {
    const seller = polarSdk(daemon.url, owner.token);
    const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, [
      { type: 'github_repository', description: 'Source access', properties: { repositoryOwner: 'repo-sellers', repositoryName: 'source', permission: 'pull' } },
    ] as never);
    const checkout = await seller.checkouts.create({ products: [seeded.productId], customerId: seeded.customerId });
    await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
    expect((await seller.checkouts.get({ id: checkout.id })).status).toBe('succeeded');
    const session = await seller.customerSessions.create({ customerId: seeded.customerId });

    github.signIn({ id: 9001, login: 'rita-reader' });
    const context = await browser.newContext({ viewport: { width: 375, height: 812 } });
    const page = await context.newPage();
    await page.goto(session.customerPortalUrl);
    await page.getByRole('link', { name: 'Connect your GitHub account' }).click();
    await page.waitForURL(`${daemon.url}/portal/${slug}?connected=github`);

    const deadline = Date.now() + 20_000;
    while (!github.invitations('repo-sellers', 'source').some((invitation) => invitation.login === 'rita-reader')) {
      if (Date.now() > deadline) throw new Error('rita-reader was never invited');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(github.invitations('repo-sellers', 'source')).toEqual([expect.objectContaining({ login: 'rita-reader', permission: 'pull' })]);
    await page.reload();
    await page.getByTestId('benefit').getByText('Granted').waitFor();
    await context.close();
  }, 120_000);
});
