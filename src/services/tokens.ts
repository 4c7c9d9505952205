import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';

/**
 * JWTs (HS256). Access and refresh tokens are signed with different secrets and carry a `typ`
 * claim, so one can never be used as the other. Both carry `sid`, the session (one login's
 * refresh-token chain) they belong to, and `tv`, the user's token version at issue. A refresh
 * token's `jti` is the session's current secret, replaced on every rotation.
 *
 * Every claim the service reads is required: a token without `exp`, `iat`, `sub`, `typ`, `tv` or
 * `sid` (or `jti` for refresh) is refused, even when its signature is right.
 */
export interface AccessClaims {
  userId: string;
  tokenVersion: number;
  sessionId: string;
}

export interface RefreshClaims extends AccessClaims {
  /** The session's current refresh secret (only its hash is stored). */
  secret: string;
}

export class TokenError extends Error {}

const ALGORITHM = 'HS256';
const ACCESS_CLAIMS = ['exp', 'iat', 'sub', 'typ', 'tv', 'sid'];
const REFRESH_CLAIMS = [...ACCESS_CLAIMS, 'jti'];

export class Tokens {
  private readonly accessKey: Uint8Array;
  private readonly refreshKey: Uint8Array;

  constructor(secrets: { access: string; refresh: string }) {
    this.accessKey = new TextEncoder().encode(secrets.access);
    this.refreshKey = new TextEncoder().encode(secrets.refresh);
  }

  signAccess(claims: AccessClaims, ttlSeconds: number): Promise<string> {
    return new SignJWT({ typ: 'access', tv: claims.tokenVersion, sid: claims.sessionId })
      .setProtectedHeader({ alg: ALGORITHM })
      .setSubject(claims.userId)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(this.accessKey);
  }

  signRefresh(claims: RefreshClaims, expiresAt: Date): Promise<string> {
    return new SignJWT({ typ: 'refresh', tv: claims.tokenVersion, sid: claims.sessionId })
      .setProtectedHeader({ alg: ALGORITHM })
      .setSubject(claims.userId)
      .setJti(claims.secret)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.refreshKey);
  }

  async verifyAccess(token: string): Promise<AccessClaims> {
    const payload = await this.verify(token, this.accessKey, 'access', ACCESS_CLAIMS);
    return { userId: payload.sub as string, tokenVersion: payload.tv as number, sessionId: payload.sid as string };
  }

  async verifyRefresh(token: string): Promise<RefreshClaims> {
    const payload = await this.verify(token, this.refreshKey, 'refresh', REFRESH_CLAIMS);
    if (typeof payload.jti !== 'string') throw new TokenError('malformed token');
    return { userId: payload.sub as string, tokenVersion: payload.tv as number, sessionId: payload.sid as string, secret: payload.jti };
  }

  private async verify(token: string, key: Uint8Array, type: 'access' | 'refresh', requiredClaims: string[]) {
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: [ALGORITHM], requiredClaims });
      if (payload.typ !== type) throw new TokenError('wrong token type');
      if (typeof payload.sub !== 'string' || typeof payload.tv !== 'number' || typeof payload.sid !== 'string') throw new TokenError('malformed token');
      return payload;
    } catch (error) {
      if (error instanceof TokenError) throw error;
      if (error instanceof joseErrors.JWTExpired) throw new TokenError('token expired');
      throw new TokenError('invalid token');
    }
  }
}
