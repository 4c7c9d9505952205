import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';

/**
 * JWTs (HS256). Access and refresh tokens are signed with different secrets and carry a `typ`
 * claim, so one can never be used as the other. `tv` is the user's token version at issue.
 */
export interface AccessClaims {
  userId: string;
  tokenVersion: number;
}

export interface RefreshClaims extends AccessClaims {
  sessionId: string;
}

export class TokenError extends Error {}

const ALGORITHM = 'HS256';

export class Tokens {
  private readonly accessKey: Uint8Array;
  private readonly refreshKey: Uint8Array;

  constructor(secrets: { access: string; refresh: string }) {
    this.accessKey = new TextEncoder().encode(secrets.access);
    this.refreshKey = new TextEncoder().encode(secrets.refresh);
  }

  signAccess(claims: AccessClaims, ttlSeconds: number): Promise<string> {
    return new SignJWT({ typ: 'access', tv: claims.tokenVersion })
      .setProtectedHeader({ alg: ALGORITHM })
      .setSubject(claims.userId)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(this.accessKey);
  }

  signRefresh(claims: RefreshClaims, expiresAt: Date): Promise<string> {
    return new SignJWT({ typ: 'refresh', tv: claims.tokenVersion })
      .setProtectedHeader({ alg: ALGORITHM })
      .setSubject(claims.userId)
      .setJti(claims.sessionId)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.refreshKey);
  }

  async verifyAccess(token: string): Promise<AccessClaims> {
    const payload = await this.verify(token, this.accessKey, 'access');
    return { userId: payload.sub as string, tokenVersion: payload.tv as number };
  }

  async verifyRefresh(token: string): Promise<RefreshClaims> {
    const payload = await this.verify(token, this.refreshKey, 'refresh');
    if (typeof payload.jti !== 'string') throw new TokenError('malformed token');
    return { userId: payload.sub as string, tokenVersion: payload.tv as number, sessionId: payload.jti };
  }

  private async verify(token: string, key: Uint8Array, type: 'access' | 'refresh') {
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: [ALGORITHM] });
      if (payload.typ !== type || typeof payload.sub !== 'string' || typeof payload.tv !== 'number') throw new TokenError('wrong token type');
      return payload;
    } catch (error) {
      if (error instanceof TokenError) throw error;
      if (error instanceof joseErrors.JWTExpired) throw new TokenError('token expired');
      throw new TokenError('invalid token');
    }
  }
}
