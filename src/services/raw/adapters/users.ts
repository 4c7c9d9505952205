// Raw `users`: writes go through UsersService (password hashing, unique login and email, group
// checks, nobody granting what they lack, last-administrator protection, session revocation).
// A password can be given on create only; the hash and token material can never be set.
import type { UsersService } from '../../users.ts';
import { asActor, CREATE_ONLY, editable, LIVE, MANAGED, SECRET, STAMPS, type RawAdapter } from '../adapter.ts';

export function usersAdapter(users: UsersService): RawAdapter {
  return {
    name: 'users',
    searchFields: ['name', 'login', 'email'],
    sort: { createdAt: 1 },
    fields: {
      login: editable(),
      email: editable(''),
      name: editable(''),
      groupIds: editable([]),
      status: editable('active'),
      password: CREATE_ONLY,
      passwordHash: SECRET,
      refreshToken: SECRET,
      refreshTokens: SECRET,
      loginKey: MANAGED,
      emailKey: MANAGED,
      tokenVersion: MANAGED,
      initialPassword: MANAGED,
      lastLoginAt: LIVE,
      ...STAMPS,
    },
    label: (doc) => String(doc.login),
    create: (input, actor) => users.create(input, { actor: asActor(actor) }),
    replace: (current, changes, actor) => users.update(current._id, changes, asActor(actor)),
    delete: (current, actor) => users.delete(current._id, asActor(actor)),
  };
}
