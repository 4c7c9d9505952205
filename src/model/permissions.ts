export const PERMISSIONS = ['manage_users', 'manage_api', 'view', 'view_logs'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}
