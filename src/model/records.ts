/** Stored shapes of the foundation's documents (dates are Date on write, ISO strings on read). */
export type Stamp = string | Date;

export interface UserDoc {
  _id: string;
  [key: string]: unknown;
  login: string;
  loginKey: string;
  email?: string;
  emailKey?: string;
  name: string;
  passwordHash: string;
  groupIds: string[];
  status: 'active' | 'disabled';
  tokenVersion: number;
  initialPassword?: boolean;
  lastLoginAt?: Stamp | null;
  createdAt: Stamp;
  updatedAt: Stamp;
}

export interface GroupDoc {
  _id: string;
  [key: string]: unknown;
  name: string;
  nameKey: string;
  description: string;
  permissions: string[];
  isSystem: boolean;
  createdAt: Stamp;
  updatedAt: Stamp;
}

export interface ApiKeyDoc {
  _id: string;
  [key: string]: unknown;
  keyId: string;
  keyHash: string;
  name: string;
  permissions: string[];
  expiresAt: Stamp | null;
  lastUsedAt: Stamp | null;
  createdBy: string | null;
  version: number;
  createdAt: Stamp;
  updatedAt: Stamp;
}

export interface LogDoc {
  _id: string;
  [key: string]: unknown;
  action: string;
  message: string;
  source: string;
  /** Who called a dynamic endpoint (http, test, mcp, cron); endpoint calls only. */
  via?: string;
  ip: string | null;
  userId: string | null;
  method: string | null;
  path: string | null;
  statusCode: number | null;
  createdAt: Stamp;
}
