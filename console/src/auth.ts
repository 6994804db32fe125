import { UserManager, WebStorageStateStore, type User } from 'oidc-client-ts';
import type { ConsoleConfig } from './config';

export type Role = 'owner' | 'operator' | 'viewer' | 'none';
const order: Role[] = ['none', 'viewer', 'operator', 'owner'];

/**
 * The staff role of a user pool access token's cognito:groups, as the admin function
 * reads it (internal/httpapi/staff.go): the highest of owner, operator, viewer. The
 * page only shows and hides buttons with it; the API decides (403 ROLE_FORBIDDEN).
 */
export function roleOf(accessToken: string): Role {
  try {
    const payload = JSON.parse(atob(accessToken.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
    const groups = payload['cognito:groups'];
    const names = Array.isArray(groups) ? groups.map(String) : typeof groups === 'string' ? [groups] : [];
    return names.reduce<Role>((best, g) => (order.indexOf(g as Role) > order.indexOf(best) ? (g as Role) : best), 'none');
  } catch {
    return 'none';
  }
}

/** may reports whether role reaches need (owner ⊇ operator ⊇ viewer). */
export function may(role: Role, need: Role): boolean {
  return order.indexOf(role) >= order.indexOf(need) && role !== 'none';
}

/**
 * The sign-in: OpenID Connect authorization code with PKCE (oidc-client-ts does the
 * S256 challenge, the state, the code exchange), the redirect back to this page, the
 * tokens kept in sessionStorage (gone with the tab).
 */
export function userManager(c: ConsoleConfig): UserManager {
  const here = new URL('.', document.baseURI).toString();
  return new UserManager({
    authority: c.authority,
    client_id: c.clientId,
    redirect_uri: here,
    post_logout_redirect_uri: here,
    response_type: 'code',
    scope: 'openid profile',
    userStore: new WebStorageStateStore({ store: window.sessionStorage }),
    automaticSilentRenew: false,
  });
}

/** completeSignIn finishes a redirect back from the provider (?code&state), if this is one. */
export async function completeSignIn(um: UserManager): Promise<User | null> {
  const q = new URLSearchParams(window.location.search);
  if (q.has('code') && q.has('state')) {
    const user = await um.signinRedirectCallback();
    window.history.replaceState({}, '', window.location.pathname + window.location.hash);
    return user;
  }
  if (q.has('error')) {
    window.history.replaceState({}, '', window.location.pathname);
    throw new Error(q.get('error_description') || q.get('error') || 'sign-in failed');
  }
  const user = await um.getUser();
  return user && !user.expired ? user : null;
}

export async function signOut(um: UserManager, c: ConsoleConfig): Promise<void> {
  if (c.logoutUrl) {
    await um.removeUser();
    window.location.assign(c.logoutUrl);
    return;
  }
  await um.signoutRedirect();
}
