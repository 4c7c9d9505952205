import { describe, expect, it } from 'vitest';
import { isSecretHeader, keepSecretHeaders, maskSecretHeaders, SECRET_MASK } from '../../src/model/secret-headers.ts';

describe('credential headers', () => {
  it('are told by name, in any letter case', () => {
    for (const name of ['Authorization', 'proxy-authorization', 'Cookie', 'X-Api-Key', 'X-API-KEY', 'X-Auth-Token', 'Token', 'X-Client-Secret', 'X-Password', 'X-Hub-Signature', 'X-Credentials', 'X-Session-Id']) {
      expect(isSecretHeader(name), name).toBe(true);
    }
    for (const name of ['Accept', 'X-Team', 'X-Request-Id', 'User-Agent', 'Content-Language', 'X-Source']) expect(isSecretHeader(name), name).toBe(false);
  });

  it('are masked for display, placeholders and other headers left as they are, and the object kept when nothing is masked', () => {
    const plain = { 'X-Team': 'ops' };
    expect(maskSecretHeaders(plain)).toBe(plain);
    expect(maskSecretHeaders({ Authorization: 'Bearer t', 'X-Team': 'ops' })).toEqual({ Authorization: SECRET_MASK, 'X-Team': 'ops' });
    const placeholder = { 'X-Api-Key': '${env:DYN_KEY}', Authorization: 'Bearer t' };
    expect(maskSecretHeaders(placeholder, (value) => value.startsWith('${'))).toEqual({ 'X-Api-Key': '${env:DYN_KEY}', Authorization: SECRET_MASK });
  });

  it('keep the stored value where (secret) is sent (name in any case), and refuse (secret) with nothing stored', () => {
    const stored = { authorization: 'Bearer old', 'X-Api-Key': 'k' };
    expect(keepSecretHeaders({ Authorization: SECRET_MASK, 'X-Team': 'ops' }, stored, 'headers')).toEqual({ Authorization: 'Bearer old', 'X-Team': 'ops' });
    expect(keepSecretHeaders({ Authorization: 'Bearer new' }, stored, 'headers')).toEqual({ Authorization: 'Bearer new' });
    // Not a credential's name: "(secret)" is the value it says.
    expect(keepSecretHeaders({ 'X-Team': SECRET_MASK }, stored, 'headers')).toEqual({ 'X-Team': SECRET_MASK });
    expect(() => keepSecretHeaders({ 'X-Auth-Token': SECRET_MASK }, stored, 'action.headers')).toThrow(/^Invalid request body: action\.headers\.X-Auth-Token: \(secret\) keeps the value stored/);
    expect(() => keepSecretHeaders({ Authorization: SECRET_MASK }, undefined, 'headers')).toThrow(/none is stored/);
  });
});
