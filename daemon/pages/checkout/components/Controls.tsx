import type { ReactElement, ReactNode } from 'react';

/** What every control of the checkout form shares: its name, label, help text, error and the value to show again. */
export interface ControlProps {
  name: string;
  label: ReactNode;
  hint?: string;
  error?: string;
  required?: boolean;
}

const idOf = (name: string) => `field-${name.replace(/[^a-zA-Z0-9_-]/g, '_')}`;

/** The aria wiring of a control: its hint and error described, the error announced as invalid. */
function described(name: string, hint?: string, error?: string) {
  const id = idOf(name);
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  return {
    id,
    hintId,
    errorId,
    aria: { 'aria-invalid': error ? true : undefined, 'aria-describedby': [hintId, errorId].filter(Boolean).join(' ') || undefined },
  };
}

function Shell({ name, label, hint, error, children, className = 'field' }: ControlProps & { children: (ids: ReturnType<typeof described>) => ReactElement; className?: string }) {
  const ids = described(name, hint, error);
  return (
    <div className={error ? `${className} field-invalid` : className}>
      <label htmlFor={ids.id}>{label}</label>
      {hint ? (
        <p id={ids.hintId} className="hint">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={ids.errorId} className="field-error">
          <span className="visually-hidden">Error: </span>
          {error}
        </p>
      ) : null}
      {children(ids)}
    </div>
  );
}

export interface TextControlProps extends ControlProps {
  value?: string;
  type?: 'text' | 'email' | 'number' | 'date' | 'tel';
  autoComplete?: string;
  inputMode?: 'text' | 'email' | 'numeric' | 'decimal';
  placeholder?: string;
  minLength?: number;
  maxLength?: number;
  min?: number | string;
  max?: number | string;
  step?: string;
  pattern?: string;
  textarea?: boolean;
  /** Card inputs: the browser must not keep or suggest them from history beyond what autocomplete allows. */
  spellCheck?: boolean;
}

/** An input (or textarea) whose previous value is shown again; `value` is never given for card fields. */
export function TextControl({ name, label, hint, error, required, value, textarea, ...input }: TextControlProps) {
  return (
    <Shell name={name} label={label} hint={hint} error={error} required={required}>
      {({ id, aria }) =>
        textarea ? (
          <textarea id={id} name={name} defaultValue={value} required={required} placeholder={input.placeholder} minLength={input.minLength} maxLength={input.maxLength} rows={4} {...aria} />
        ) : (
          <input id={id} name={name} type={input.type ?? 'text'} defaultValue={value} required={required} {...input} {...aria} />
        )
      }
    </Shell>
  );
}

export interface SelectControlProps extends ControlProps {
  value?: string;
  options: { value: string; label: string }[];
  /** The first, empty choice. */
  placeholder: string;
  autoComplete?: string;
}

export function SelectControl({ name, label, hint, error, required, value, options, placeholder, autoComplete }: SelectControlProps) {
  return (
    <Shell name={name} label={label} hint={hint} error={error} required={required}>
      {({ id, aria }) => (
        <select id={id} name={name} defaultValue={value ?? ''} required={required} autoComplete={autoComplete} {...aria}>
          <option value="">{placeholder}</option>
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    </Shell>
  );
}

/** A checkbox with its label beside it; posts `on` when ticked. */
export function CheckboxControl({ name, label, hint, error, required, checked }: ControlProps & { checked: boolean }) {
  const { id, hintId, errorId, aria } = described(name, hint, error);
  return (
    <div className={error ? 'field field-check field-invalid' : 'field field-check'}>
      {error ? (
        <p id={errorId} className="field-error">
          <span className="visually-hidden">Error: </span>
          {error}
        </p>
      ) : null}
      <input id={id} name={name} type="checkbox" defaultChecked={checked} required={required} {...aria} />
      <label htmlFor={id}>{label}</label>
      {hint ? (
        <p id={hintId} className="hint">
          {hint}
        </p>
      ) : null}
    </div>
  );
}
