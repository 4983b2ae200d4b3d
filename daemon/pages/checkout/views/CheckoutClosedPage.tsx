import { Alert } from '../../components/Alert.js';
import { CheckoutLayout } from '../components/CheckoutLayout.js';
import type { CheckoutWire } from '../types.js';

/** A checkout that can no longer be paid: it expired, or it failed for good. */
export function CheckoutClosedPage({ checkout }: { checkout: CheckoutWire }) {
  const expired = checkout.status === 'expired';
  return (
    <CheckoutLayout title={expired ? 'This checkout has expired' : 'This checkout is closed'} seller={checkout.organization.name}>
      <Alert kind="error">
        {expired
          ? `This checkout link was valid until ${checkout.expires_at.slice(0, 16).replace('T', ' ')} UTC and can no longer be paid. Nothing was charged.`
          : 'This checkout can no longer be paid. Nothing more will be charged.'}
      </Alert>
      <p>
        {checkout.product ? `To buy ${checkout.product.name}, ` : 'To buy, '}
        go back to {checkout.organization.name}'s site and start the checkout again: you will get a new link.
      </p>
    </CheckoutLayout>
  );
}

/** A checkout link that names no checkout: mistyped, or from another Till. */
export function CheckoutNotFoundPage() {
  return (
    <CheckoutLayout title="Checkout not found">
      <Alert kind="error">This checkout link is not valid. Check that it was copied whole, or start the checkout again from the seller's site.</Alert>
    </CheckoutLayout>
  );
}
