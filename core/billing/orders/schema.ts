import { z } from 'zod';
import { AddressInput, Text, type Address } from '../customers/address.js';
import type { Metadata } from '../shared/metadata.js';

export const ORDER_STATUSES = ['pending', 'paid', 'refunded', 'partially_refunded'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const BILLING_REASONS = ['purchase', 'subscription_create', 'subscription_cycle', 'subscription_update'] as const;
export type BillingReason = (typeof BILLING_REASONS)[number];

export const ORDER_SORTING = ['created_at', 'status', 'invoice_number', 'amount', 'net_amount', 'customer', 'product', 'discount', 'subscription'] as const;

/**
 * Which status an order may move to from which. Every status change goes through `canTransition` and a guarded
 * update that names the status it read, so two concurrent changes cannot both apply.
 * A refund moves paid → partially_refunded / refunded; a failed processor refund gives the claim back (→ paid
 * again when nothing else was refunded).
 */
export const ORDER_TRANSITIONS: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  pending: ['paid'],
  paid: ['partially_refunded', 'refunded'],
  partially_refunded: ['partially_refunded', 'refunded', 'paid'],
  refunded: ['partially_refunded', 'paid'],
};

export const canTransition = (from: OrderStatus, to: OrderStatus): boolean => ORDER_TRANSITIONS[from].includes(to);

/** The statuses in which money was received and part of it may still be refunded. */
export const REFUNDABLE_STATUSES: readonly OrderStatus[] = ['paid', 'partially_refunded'];

export interface OrderItem {
  id: string;
  label: string;
  amount: number;
  taxAmount: number;
  proration: boolean;
  productPriceId: string | null;
  createdAt: Date;
  modifiedAt: Date | null;
}

export interface StoredOrder {
  id: string;
  organizationId: string;
  customerId: string;
  productId: string | null;
  subscriptionId: string | null;
  checkoutId: string | null;
  discountId: string | null;
  paymentId: string | null;
  status: OrderStatus;
  billingReason: BillingReason;
  currency: string;
  subtotalAmount: number;
  discountAmount: number;
  netAmount: number;
  taxAmount: number;
  totalAmount: number;
  appliedBalanceAmount: number;
  refundedAmount: number;
  refundedTaxAmount: number;
  platformFeeAmount: number;
  billingName: string | null;
  billingAddress: Address | null;
  invoiceNumber: string;
  isInvoiceGenerated: boolean;
  metadata: Metadata;
  customFieldData: Record<string, unknown>;
  items: OrderItem[];
  createdAt: Date;
  modifiedAt: Date | null;
}

/** Net amount (plus applied balance) not refunded yet, as Polar computes it. */
export const refundableAmount = (order: Pick<StoredOrder, 'netAmount' | 'appliedBalanceAmount' | 'refundedAmount'>): number =>
  Math.max(0, order.netAmount + order.appliedBalanceAmount - order.refundedAmount);

export const refundableTaxAmount = (order: Pick<StoredOrder, 'taxAmount' | 'refundedTaxAmount'>): number => Math.max(0, order.taxAmount - order.refundedTaxAmount);

/**
 * The tax that goes back with a refund of `amount` (net): proportional to the order's tax rate, and the whole
 * remaining tax when the refund takes the whole remaining amount (so rounding never strands a cent).
 */
export function refundTaxFor(order: Pick<StoredOrder, 'netAmount' | 'appliedBalanceAmount' | 'refundedAmount' | 'taxAmount' | 'refundedTaxAmount'>, amount: number): number {
  if (amount >= refundableAmount(order)) return refundableTaxAmount(order);
  if (order.netAmount <= 0 || order.taxAmount <= 0) return 0;
  return Math.min(refundableTaxAmount(order), Math.round((amount * order.taxAmount) / order.netAmount));
}

/** The status an order has once `refundedAmount` of it is refunded. */
export function statusAfterRefunds(order: Pick<StoredOrder, 'netAmount' | 'appliedBalanceAmount'>, refundedAmount: number): OrderStatus {
  if (refundedAmount <= 0) return 'paid';
  return refundedAmount >= order.netAmount + order.appliedBalanceAmount ? 'refunded' : 'partially_refunded';
}

/** PATCH /v1/orders/{id}: the name and address the invoice shows. */
export const OrderUpdate = z
  .object({
    billing_name: Text.trim().max(256).nullish(),
    billing_address: AddressInput.nullish(),
  })
  .strict();
export type OrderUpdate = z.infer<typeof OrderUpdate>;

/** What the other domains hand to createOrder (checkout fulfilment, renewals, subscription updates). */
export interface OrderCreateInput {
  organizationId: string;
  customerId: string;
  productId: string | null;
  subscriptionId: string | null;
  checkoutId: string | null;
  billingReason: BillingReason;
  currency: string;
  items: { label: string; amount: number; taxAmount: number; proration: boolean; productPriceId: string | null }[];
  subtotalAmount: number;
  discountAmount: number;
  discountId: string | null;
  netAmount: number;
  taxAmount: number;
  totalAmount: number;
  status: 'pending' | 'paid';
  paymentId: string | null;
  billingName: string | null;
  billingAddress: object | null;
  metadata: Metadata;
  customFieldData: Record<string, unknown>;
}

export interface OrderFilter {
  organizationIds: readonly string[];
  productIds?: readonly string[];
  productPriceTypes?: readonly ('one_time' | 'recurring')[];
  discountIds?: readonly string[];
  customerIds?: readonly string[];
  externalCustomerIds?: readonly string[];
  checkoutIds?: readonly string[];
  subscriptionIds?: readonly string[];
  metadata?: Record<string, string[]>;
  /** Polar's export filters. */
  statuses?: readonly OrderStatus[];
  createdAfter?: Date;
  createdBefore?: Date;
}
