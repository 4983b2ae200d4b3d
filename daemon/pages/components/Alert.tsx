import type { ReactNode } from 'react';

/** A message about the whole page: errors are announced at once (role=alert), successes politely. */
export function Alert({ kind, children, id }: { kind: 'error' | 'success' | 'info'; children: ReactNode; id?: string }) {
  return (
    <div id={id} className={`alert alert-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      <p>{children}</p>
    </div>
  );
}
