import type { ResourceSpec } from '../spec.js';
import { events } from './events.js';
import { meters } from './meters.js';
import { customerMeters } from './customer-meters.js';
import { accessTokens } from './access-tokens.js';
import { benefits } from './benefits.js';
import { customFields } from './custom-fields.js';
import { customers } from './customers.js';
import { discounts } from './discounts.js';
import { files } from './files.js';
import { organizations } from './organizations.js';
import { products } from './products.js';
import { orders } from './orders.js';
import { refunds } from './refunds.js';
import { licenseKeys } from './license-keys.js';
import { subscriptions } from './subscriptions.js';
import { webhooks } from './webhooks.js';
import { checkouts } from './checkouts.js';
import { checkoutLinks } from './checkout-links.js';

/** Every catalog noun, in the order `till --help` lists them. */
export const RESOURCES: readonly ResourceSpec[] = [organizations, accessTokens, products, benefits, customFields, discounts, customers, files, checkouts, checkoutLinks, orders, refunds, licenseKeys, subscriptions, events, meters, customerMeters, webhooks];
