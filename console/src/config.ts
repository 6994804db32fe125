// What the page is told by whoever serves it, in config.json beside index.html:
// cmd/local writes it for the local stack; a deploy writes it from the stack's outputs.
export interface ConsoleConfig {
  /** The OpenID provider: the user pool's issuer (https://cognito-idp.<region>.amazonaws.com/<pool id>) or the local one. */
  authority: string;
  /** The console's app client id at that provider. */
  clientId: string;
  /** The base URL of the console's API (ConsoleApi; locally /console/api): routes are <api>/admin/… */
  api: string;
  /** Where sign-out goes when the provider's discovery names no end_session_endpoint (Cognito's /logout). */
  logoutUrl?: string;
}

export async function loadConfig(): Promise<ConsoleConfig> {
  const resp = await fetch(new URL('config.json', document.baseURI), { cache: 'no-store' });
  if (!resp.ok) throw new Error(`config.json: HTTP ${resp.status}`);
  const c = (await resp.json()) as ConsoleConfig;
  if (!c.authority || !c.clientId || c.api === undefined) throw new Error('config.json needs authority, clientId and api');
  return c;
}
