/**
 * The parts of Polar's CheckoutPublic (the wire shape the client endpoints answer, snake_case) that the hosted
 * page reads. The page renders from the serialized checkout, so it shows exactly what the SDK would see.
 */

export type FieldMode = 'required' | 'optional' | 'disabled';

export interface AddressWire {
  line1: string | null;
  line2: string | null;
  postal_code: string | null;
  city: string | null;
  state: string | null;
  country: string;
}

export interface PriceWire {
  id: string;
  amount_type: 'fixed' | 'custom' | 'free' | 'metered_unit' | 'seat_based' | string;
  price_currency: string;
  price_amount?: number;
  minimum_amount?: number | null;
  maximum_amount?: number | null;
  preset_amount?: number | null;
  is_archived: boolean;
}

export interface CustomFieldWire {
  id: string;
  slug: string;
  name: string;
  type: 'checkbox' | 'date' | 'number' | 'select' | 'text';
  properties: {
    form_label?: string;
    form_help_text?: string;
    form_placeholder?: string;
    ge?: number;
    le?: number;
    textarea?: boolean;
    min_length?: number;
    max_length?: number;
    options?: { value: string; label: string }[];
  };
}

export interface AttachedCustomFieldWire {
  custom_field_id: string;
  custom_field: CustomFieldWire;
  order: number;
  required: boolean;
}

export interface BenefitWire {
  id: string;
  type: string;
  description: string;
}

export interface ProductWire {
  id: string;
  name: string;
  description: string | null;
  is_recurring: boolean;
  recurring_interval: string | null;
  recurring_interval_count?: number | null;
  trial_interval?: string | null;
  trial_interval_count?: number | null;
  prices: PriceWire[];
  benefits: BenefitWire[];
}

export interface DiscountWire {
  id: string;
  name: string;
  code: string | null;
  type: 'fixed' | 'percentage';
  duration: 'once' | 'forever' | 'repeating';
  duration_in_months?: number;
  basis_points?: number;
  amount?: number;
  currency?: string;
}

export interface CheckoutWire {
  id: string;
  status: 'open' | 'expired' | 'confirmed' | 'succeeded' | 'failed';
  client_secret: string;
  url: string;
  expires_at: string;
  success_url: string;
  return_url?: string | null;
  embed_origin: string | null;
  amount: number;
  discount_amount: number;
  net_amount: number;
  tax_amount: number | null;
  total_amount: number;
  currency: string;
  organization_id: string;
  product_id: string | null;
  product_price_id: string | null;
  discount_id: string | null;
  allow_discount_codes: boolean;
  require_billing_address: boolean;
  is_discount_applicable: boolean;
  is_free_product_price: boolean;
  is_payment_required: boolean;
  is_payment_setup_required: boolean;
  is_payment_form_required: boolean;
  customer_name: string | null;
  customer_email: string | null;
  customer_billing_name: string | null;
  is_business_customer?: boolean;
  customer_tax_id?: string | null;
  customer_billing_address: AddressWire | null;
  billing_address_fields: { country: FieldMode; state: FieldMode; city: FieldMode; postal_code: FieldMode; line1: FieldMode; line2: FieldMode };
  products: ProductWire[];
  product: ProductWire | null;
  product_price: PriceWire | null;
  discount: DiscountWire | null;
  organization: { name: string; slug: string; avatar_url: string | null };
  attached_custom_fields: AttachedCustomFieldWire[] | null;
  custom_field_data?: Record<string, string | number | boolean | null>;
  trial_end?: string | null;
  active_trial_interval?: string | null;
  active_trial_interval_count?: number | null;
}
