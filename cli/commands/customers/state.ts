import type { Env, Streams } from '../../output.js';
import { openSession } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';
import { describeValue, formatMoney, shortDate } from '../../ui/record.js';
import { renderTable } from '../../ui/table.js';

export interface StateOptions {
  server?: string;
  json?: boolean;
  external?: boolean;
  org?: string;
}

type Row = Record<string, unknown>;

/**
 * `till customers state ID` (or `--external EXTERNAL_ID`): what the customer is entitled to now — active
 * subscriptions, granted benefits, active meters — as GET /v1/customers/{id}/state answers it.
 */
export async function customerState(id: string, options: StateOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const path = options.external
    ? `/v1/customers/external/${encodeURIComponent(id)}/state${options.org ? `?organization_id=${encodeURIComponent(options.org)}` : ''}`
    : `/v1/customers/${encodeURIComponent(id)}/state`;
  const state = await session.api.request<ApiObject>('GET', path);
  session.out.result(state, (style) => {
    const table = <T extends Row>(title: string, rows: T[], columns: { header: string; value(row: T): string }[]) =>
      rows.length === 0 ? `${style.bold(title)}  none` : `${style.bold(title)}\n${renderTable(rows, columns, { terminal: true, style })}`;
    const subscriptions = (state.active_subscriptions ?? []) as Row[];
    const benefits = (state.granted_benefits ?? []) as Row[];
    const meters = (state.active_meters ?? []) as Row[];
    return [
      `${String(state.email)}${state.name ? ` (${String(state.name)})` : ''}  ${style.dim(String(state.id))}${state.external_id ? style.dim(`  external ${String(state.external_id)}`) : ''}`,
      table('Active subscriptions', subscriptions, [
        { header: 'ID', value: (s) => String(s.id) },
        { header: 'STATUS', value: (s) => String(s.status) },
        { header: 'AMOUNT', value: (s) => `${formatMoney(Number(s.amount), String(s.currency))}/${String(s.recurring_interval)}` },
        { header: 'PERIOD ENDS', value: (s) => shortDate(s.current_period_end) },
        { header: 'CANCELS', value: (s) => (s.cancel_at_period_end ? 'at period end' : '—') },
      ]),
      table('Granted benefits', benefits, [
        { header: 'BENEFIT', value: (b) => String(b.benefit_id) },
        { header: 'TYPE', value: (b) => String(b.benefit_type) },
        { header: 'GRANTED', value: (b) => shortDate(b.granted_at) },
        { header: 'PROPERTIES', value: (b) => describeValue(b.properties) },
      ]),
      table('Active meters', meters, [
        { header: 'METER', value: (m) => String(m.meter_id) },
        { header: 'CONSUMED', value: (m) => describeValue(m.consumed_units) },
        { header: 'CREDITED', value: (m) => describeValue(m.credited_units) },
        { header: 'BALANCE', value: (m) => describeValue(m.balance) },
      ]),
    ].join('\n\n');
  });
  return 0;
}
