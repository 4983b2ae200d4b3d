import type { TuiBackend } from '../backend.js';

/** What every tab gets from the app. */
export interface TabProps {
  backend: TuiBackend;
  organizationId: string;
  /** Lines the tab may use. */
  height: number;
  /** A tab that takes all keys (a form, a filter, a dialog) says so; the app's keys then pause. */
  setCaptured(captured: boolean): void;
}
