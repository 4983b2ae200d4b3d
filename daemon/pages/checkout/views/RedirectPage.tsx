import { CheckoutLayout } from '../components/CheckoutLayout.js';

/** On to the processor's authentication page (3-D Secure), which comes back to the checkout when done. */
export function RedirectPage({ url }: { url: string }) {
  return (
    <CheckoutLayout title="Confirm your payment with your bank" refreshTo={{ url, seconds: 0 }}>
      <p>Your bank asks you to confirm this payment. You are being taken to its page; you come back here when it is done.</p>
      <p>
        <a className="button" href={url}>
          Continue to your bank
        </a>
      </p>
    </CheckoutLayout>
  );
}
