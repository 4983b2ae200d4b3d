/** Clients allowed to start a device-code login, with the name the /device page shows. */
export const DEVICE_CLIENTS: ReadonlyMap<string, string> = new Map([['till-cli', 'Till CLI (till login)']]);
