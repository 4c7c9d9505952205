import { randomBytes } from 'node:crypto';

/**
 * 24-character hex ids shaped like MongoDB ObjectIds (4 bytes of seconds, 5 random bytes,
 * 3-byte counter), so both stores produce the same kind of id and ids sort roughly by creation.
 */
const processRandom = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

export function newId(): string {
  counter = (counter + 1) % 0xffffff;
  const seconds = Math.floor(Date.now() / 1000).toString(16).padStart(8, '0');
  return seconds + processRandom + counter.toString(16).padStart(6, '0');
}

/** `count` new ids, as newId would give them one by one, for about half the cost (a batch of appended documents). */
export function newIds(count: number): string[] {
  const prefix = Math.floor(Date.now() / 1000).toString(16).padStart(8, '0') + processRandom;
  const ids = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    counter = (counter + 1) % 0xffffff;
    ids[i] = prefix + counter.toString(16).padStart(6, '0');
  }
  return ids;
}

const ID_PATTERN = /^[0-9a-f]{24}$/;

export function isId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value);
}
