import type { HttpMethod } from '../model/endpoint.ts';

/**
 * Definitions describing the platform's own public routes, seeded with isSystem: they appear in
 * the endpoint list (and later in OpenAPI) while their logic stays platform code.
 */
export interface SystemEndpoint {
  name: string;
  description: string;
  path: string;
  method: HttpMethod;
  schema: Record<string, unknown>;
}

const text = (description: string, required = true) => ({ type: 'string', required, description });

export const SYSTEM_ENDPOINTS: readonly SystemEndpoint[] = [
  {
    name: 'Login',
    description: 'Exchange a login and password for an access token and a refresh token.',
    path: '/api/auth/login',
    method: 'POST',
    schema: { login: text('The login'), password: text('The password'), cookie: { type: 'boolean', description: 'Also set session cookies' } },
  },
  {
    name: 'Refresh tokens',
    description: 'Exchange a refresh token for a new token pair; the used refresh token stops working.',
    path: '/api/auth/refresh',
    method: 'POST',
    schema: { refreshToken: text('The refresh token') },
  },
  {
    name: 'Logout',
    description: "End every session of the signed-in user.",
    path: '/api/auth/logout',
    method: 'POST',
    schema: { refreshToken: text('A refresh token, when no access token is sent', false) },
  },
  {
    name: 'Register',
    description: 'Create an account (only when the registrationEnabled setting is on).',
    path: '/api/auth/register',
    method: 'POST',
    schema: { login: text('The login'), email: text('The email address'), password: text('The password'), name: text('The display name') },
  },
  { name: 'Health', description: 'Liveness check.', path: '/api/health', method: 'GET', schema: {} },
  { name: 'CSRF token', description: 'A CSRF token for cookie sessions (double submit).', path: '/api/csrf-token', method: 'GET', schema: {} },
];
