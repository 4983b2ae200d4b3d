import type { ReactNode } from 'react';

export interface PostButtonProps {
  action: string;
  label: ReactNode;
  /** Hidden fields posted with the button. */
  fields?: Record<string, string>;
  variant?: 'primary' | 'secondary' | 'danger' | 'link';
}

const CLASS_BY_VARIANT = {
  primary: 'button',
  secondary: 'button button-secondary',
  danger: 'button button-danger',
  link: 'button button-link',
} as const;

/** A one-button form: every state change on these pages is a POST, so it works without JavaScript. */
export function PostButton({ action, label, fields = {}, variant = 'primary' }: PostButtonProps) {
  return (
    <form method="post" action={action} className="inline-form">
      <HiddenFields fields={fields} />
      <button type="submit" className={CLASS_BY_VARIANT[variant]}>
        {label}
      </button>
    </form>
  );
}

export function HiddenFields({ fields }: { fields: Record<string, string> }) {
  return (
    <>
      {Object.entries(fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
    </>
  );
}
