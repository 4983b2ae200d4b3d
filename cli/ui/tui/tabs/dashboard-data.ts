import { useCallback, useEffect, useRef, useState } from 'react';
import { messageOf, type TuiBackend } from '../backend.js';
import type { EventStore } from '../event-store.js';
import type { Row } from './ResourceTab.js';

/** The metrics the Dashboard reads from GET /v1/metrics, a day each over the last 30 days. */
export const DASHBOARD_METRICS = ['revenue', 'orders', 'monthly_recurring_revenue', 'active_subscriptions'] as const;
type Metric = (typeof DASHBOARD_METRICS)[number];

/** Event types after which the Dashboard's figures may have moved. */
const MOVING = ['order.', 'subscription.', 'checkout.', 'refund.'];

export interface DashboardData {
  currency: string;
  timezone: string;
  /** One per day, oldest first; the last is today. */
  days: ({ timestamp: string } & Record<Metric, number>)[];
  failedPayments: Row[];
  failedCheckouts: Row[];
  loadedAt: Date;
}

export interface DashboardState {
  data?: DashboardData;
  loading: boolean;
  error?: string;
  reload(): void;
}

/** Events of the moving kinds the store has counted (history and live): when it grows, the figures may have moved. */
export function movingCount(store: EventStore): number {
  let count = 0;
  for (const [type, n] of store.counts) if (MOVING.some((prefix) => type.startsWith(prefix))) count += n;
  return count;
}

const organization = (organizationId: string) => `organization_id=${encodeURIComponent(organizationId)}`;

/** The Dashboard's figures: metrics by day in this timezone, and the latest failed payments and checkouts. */
export async function loadDashboard(backend: TuiBackend, organizationId: string, timezone: string, failures = 5): Promise<DashboardData> {
  const metrics = DASHBOARD_METRICS.map((slug) => `metrics=${slug}`).join('&');
  const [answer, payments, checkouts] = await Promise.all([
    backend.request<{ periods: DashboardData['days']; currency: string }>('GET', `/v1/metrics/?${organization(organizationId)}&interval=day&timezone=${encodeURIComponent(timezone)}&${metrics}`),
    backend.request<{ items: Row[] }>('GET', `/v1/payments/?${organization(organizationId)}&status=failed&limit=${failures}&sorting=-created_at`),
    backend.request<{ items: Row[] }>('GET', `/v1/checkouts/?${organization(organizationId)}&status=failed&limit=${failures}&sorting=-created_at`),
  ]);
  return { currency: answer.currency ?? 'usd', timezone, days: answer.periods ?? [], failedPayments: payments.items ?? [], failedCheckouts: checkouts.items ?? [], loadedAt: new Date() };
}

/**
 * Loads the Dashboard, then again whenever the live stream brings an order, subscription, checkout or refund event:
 * at most once per `minGapMs` however fast they come (one load in flight, one more after it if events arrived).
 */
export function useDashboard(backend: TuiBackend, organizationId: string, store: EventStore, version: number, minGapMs = 1000): DashboardState {
  const [data, setData] = useState<DashboardData | undefined>();
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | undefined>();
  const timezone = useRef(Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC').current;
  const run = useRef({ alive: true, inFlight: false, again: false, last: 0, timer: undefined as NodeJS.Timeout | undefined });

  const load = useCallback(async (force = false) => {
    const state = run.current;
    if (state.inFlight || state.timer) {
      state.again = true;
      return;
    }
    const wait = state.last + minGapMs - Date.now();
    if (!force && state.last > 0 && wait > 0) {
      state.timer = setTimeout(() => {
        state.timer = undefined;
        void load();
      }, wait);
      return;
    }
    state.inFlight = true;
    // This load reads everything committed so far: only events arriving from now on call for another.
    state.again = false;
    setLoading(true);
    try {
      const next = await loadDashboard(backend, organizationId, timezone);
      if (state.alive) {
        setData(next);
        setError(undefined);
      }
    } catch (problem) {
      if (state.alive) setError(messageOf(problem));
    } finally {
      state.inFlight = false;
      state.last = Date.now();
      if (state.alive) setLoading(false);
      if (state.alive && state.again) {
        state.again = false;
        state.timer = setTimeout(() => {
          state.timer = undefined;
          void load();
        }, minGapMs);
      }
    }
  }, [backend, organizationId, timezone, minGapMs]);

  useEffect(() => {
    const state = run.current;
    state.alive = true;
    void load();
    return () => {
      state.alive = false;
      clearTimeout(state.timer);
      state.timer = undefined;
    };
  }, [load]);

  const moving = movingCount(store);
  const seen = useRef(moving);
  useEffect(() => {
    if (moving === seen.current) return;
    seen.current = moving;
    void load();
  }, [moving, version, load]);

  return { data, loading, error, reload: () => void load(true) };
}
