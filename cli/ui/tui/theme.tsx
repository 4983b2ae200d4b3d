import { createContext, useContext } from 'react';

/** Colours only when allowed (NO_COLOR unset, a terminal): components ask for a colour and get one or none. */
export interface Theme {
  color(name: 'cyan' | 'green' | 'red' | 'yellow' | 'magenta' | 'gray'): string | undefined;
  enabled: boolean;
}

export const themeFor = (enabled: boolean): Theme => ({ enabled, color: (name) => (enabled ? name : undefined) });

export const ThemeContext = createContext<Theme>(themeFor(false));
export const useTheme = () => useContext(ThemeContext);
