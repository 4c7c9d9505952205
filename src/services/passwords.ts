import bcrypt from 'bcryptjs';

/**
 * bcrypt hashes. bcrypt reads at most 72 bytes, so longer passwords are refused rather than
 * silently truncated (see the password schema).
 */
export class Passwords {
  private readonly rounds: number;
  // Compared against when a login does not exist, so that both cases take the same time.
  private readonly dummyHash: string;

  constructor(rounds: number) {
    this.rounds = rounds;
    this.dummyHash = bcrypt.hashSync('dyn-dummy-password', rounds);
  }

  hash(password: string): Promise<string> {
    return bcrypt.hash(password, this.rounds);
  }

  verify(password: string, hash: string | undefined): Promise<boolean> {
    return bcrypt.compare(password, hash ?? this.dummyHash).then((ok) => ok && hash !== undefined);
  }
}

export const PASSWORD_SCHEMA = { type: 'string', minLength: 8, maxLength: 72 } as const;
