import { createContext, useContext } from 'react';
import type { Api } from './api';
import type { Role } from './auth';

/** What every page gets: the API, the signed-in role, how to show a failure, navigation. */
export interface Session {
  api: Api;
  role: Role;
  username: string;
  fail: (e: unknown) => void;
  go: (page: string, arg?: string) => void;
}

export const Ctx = createContext<Session>(null as unknown as Session);
export const useSession = () => useContext(Ctx);
