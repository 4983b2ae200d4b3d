import { useMemo, useState } from 'react';
import { deliveriesConfig, webhooksConfig } from './configs.js';
import { resourceKeys, ResourceTab, type ResourceConfig } from './ResourceTab.js';
import type { TabProps } from './tab.js';

const toggle = (config: ResourceConfig, label: string, run: () => void): ResourceConfig => ({
  ...config,
  actions: [...config.actions, { key: 'd', label, needsRow: false, run }],
});

export const WEBHOOKS_KEYS = `${resourceKeys(webhooksConfig)} · d deliveries (there: R redeliver, d endpoints)`;

/** The organization's endpoints with their health, and (d) the recent deliveries to them. */
export function WebhooksTab(props: TabProps) {
  const [view, setView] = useState<'endpoints' | 'deliveries'>('endpoints');
  const configs = useMemo(
    () => ({
      endpoints: toggle(webhooksConfig, 'deliveries', () => setView('deliveries')),
      deliveries: toggle(deliveriesConfig, 'endpoints', () => setView('endpoints')),
    }),
    [],
  );
  return <ResourceTab key={view} {...props} config={configs[view]} />;
}
