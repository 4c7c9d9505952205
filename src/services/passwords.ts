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

  /**
   * A password longer than bcrypt reads can never have been set, so it never matches: bcrypt
   * alone would accept any text that starts with the right 72 bytes. It still costs a compare,
   * so that the answer takes as long as any other wrong password's.
   */
  verify(password: string, hash: string | undefined): Promise<boolean> {
    const fits = Buffer.byteLength(password, 'utf8') <= MAX_PASSWORD_BYTES;
    return bcrypt.compare(password, (fits ? hash : undefined) ?? this.dummyHash).then((ok) => ok && fits && hash !== undefined);
  }
}

/** What bcrypt reads of a password. */
export const MAX_PASSWORD_BYTES = 72;

export const PASSWORD_SCHEMA = { type: 'string', minLength: 8, maxLength: 72 } as const;
