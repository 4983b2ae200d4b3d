import { afterEach, describe, expect, it } from 'vitest';
import { anEvent, fakeBackend, KEY, renderApp, until, type Sent } from '../testing.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());
const posts = (sent: Sent[]) => sent.filter((request) => request.method === 'POST');

function hooks(endpoints: Record<string, unknown>[]) {
  let delivered = false;
  return fakeBackend(({ method, path }) => {
    if (method === 'GET' && path.startsWith('/v1/webhooks/endpoints')) return { items: endpoints };
    if (method === 'POST' && path.includes('endpoint_id=we_2')) throw new Error('http://127.0.0.1:4010 refused: This webhook endpoint is disabled: enable it (PATCH enabled=true), then redeliver');
    if (method === 'POST' && path.startsWith('/v1/webhooks/events/')) {
      delivered = true;
      return { event_id: 'x', endpoint_ids: ['we_1'] };
    }
    if (method === 'GET' && path.startsWith('/v1/webhooks/deliveries')) {
      const first = { id: 'wd_1', succeeded: true, http_code: 200, duration_ms: 30, webhook_event: { id: 'evt_resend' } };
      return { items: delivered ? [{ id: 'wd_2', succeeded: true, http_code: 200, duration_ms: 12, webhook_event: { id: 'evt_resend' } }, first] : [first] };
    }
    return { items: [] };
  });
}

describe('r on the Events tab', () => {
  it('resends the selected event to the endpoint chosen, after a confirmation, once; shows a refusal and then how the endpoint answered', async () => {
    const fake = hooks([
      { id: 'we_1', url: 'https://a.example.com/hook', format: 'raw', enabled: true, events: ['order.paid'] },
      { id: 'we_2', url: 'https://b.example.com/hook', format: 'slack', enabled: false, events: [] },
    ]);
    const app = renderApp(fake.backend, { tab: 'Events' });
    cleanup = app.unmount;
    await app.showing('● live');
    fake.emit({ ...anEvent('order.paid'), id: 'evt_resend' });
    await app.showing('evt_resend');
    await app.press('r');
    const picker = await app.showing('Resend order.paid (evt_resend) to which endpoint?');
    expect(picker).toContain('https://a.example.com/hook raw');
    expect(picker).toContain('https://b.example.com/hook slack · disabled · not subscribed to order.paid');
    expect(fake.sent.at(-1)!.path).toBe('/v1/webhooks/endpoints?organization_id=org_A&limit=100');
    await app.press(KEY.down, KEY.enter);
    await app.showing('Resend order.paid (evt_resend) to https://b.example.com/hook?');
    await app.press('y');
    await app.showing('✗ http://127.0.0.1:4010 refused: This webhook endpoint is disabled');
    expect(posts(fake.sent)).toEqual([{ method: 'POST', path: '/v1/webhooks/events/evt_resend/redeliver?endpoint_id=we_2', body: undefined }]);

    await app.press('r');
    await app.showing('to which endpoint?');
    await app.press(KEY.enter);
    await app.showing('to https://a.example.com/hook?');
    await app.press('y', 'y');
    await app.showing('✓ Queued order.paid for https://a.example.com/hook; waiting for its answer…');
    await app.frameUntil((frame) => frame.includes('✓ Resent order.paid: 200 in 12 ms from https://a.example.com/hook'), 'the answer');
    expect(posts(fake.sent)).toHaveLength(2);
    expect(posts(fake.sent)[1]!.path).toBe('/v1/webhooks/events/evt_resend/redeliver?endpoint_id=we_1');
    // The delivery it reports is the new one, not the first delivery of that event.
    expect(fake.sent.filter((request) => request.path.startsWith('/v1/webhooks/deliveries?endpoint_id=we_1')).length).toBeGreaterThanOrEqual(2);
  });

  it('says so when the organization has no endpoint, and Esc leaves the choice without sending', async () => {
    const none = hooks([]);
    const app = renderApp(none.backend, { tab: 'Events' });
    cleanup = app.unmount;
    await app.showing('● live');
    await app.press('r');
    await app.showing('✗ No event selected to resend.');
    none.emit(anEvent('order.created'));
    await app.showing('order.created');
    await app.press('r');
    await app.showing('✗ This organization has no webhook endpoint to resend to');
    app.unmount();

    const one = hooks([{ id: 'we_1', url: 'https://a.example.com/hook', format: 'raw', enabled: true, events: [] }]);
    const again = renderApp(one.backend, { tab: 'Events' });
    cleanup = again.unmount;
    await again.showing('● live');
    one.emit(anEvent('order.created'));
    await again.showing('order.created');
    await again.press('r');
    await again.showing('to which endpoint?');
    await again.press(KEY.escape);
    await again.showing('TIME');
    await until(() => one.sent.length >= 1, 'the endpoints');
    expect(posts(one.sent)).toEqual([]);
  });
});
