// MongoDB cannot hold every JSON key: `$`-prefixed names read as operators in updates, dotted
// names as paths, and a key with a NUL cannot be a BSON name. `json` field values may hold any
// of them (and `__proto__`), so on MongoDB only, an object with such a key is stored as a wrapper
// `{"__dynEntries": [[key, value], ...]}` and unwrapped on read. Any object that has the wrapper
// key itself is wrapped too, so every stored object with that key is a wrapper: the encoding is
// reversible for every JSON value. Other objects are stored as they are, so filters on ordinary
// fields keep working (list filters never look inside json values except `exists`).

const WRAPPER = '__dynEntries';

const needsWrapping = (key: string): boolean => key.startsWith('$') || key.includes('.') || key.includes('\0') || key === '__proto__' || key === WRAPPER;

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** A value as stored on MongoDB. Dates and driver types are not plain objects and pass through. */
export function encodeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(encodeKeys);
  if (!isPlainObject(value)) return value;
  const entries = Object.entries(value);
  if (entries.some(([key]) => needsWrapping(key))) return { [WRAPPER]: entries.map(([key, inner]) => [key, encodeKeys(inner)]) };
  return Object.fromEntries(entries.map(([key, inner]) => [key, encodeKeys(inner)]));
}

/** The update's `$set` values encoded (its keys are field paths, chosen by the service). */
export function encodeSet(set: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(set).map(([path, value]) => [path, encodeKeys(value)]));
}

/**
 * Unwraps one object read back (its values already decoded by the caller's walk), or returns
 * undefined when it is not a wrapper. fromEntries defines own data properties: a `__proto__`
 * key stays data.
 */
export function unwrapEntries(value: Record<string, unknown>, decode: (inner: unknown) => unknown): Record<string, unknown> | undefined {
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== WRAPPER || !Array.isArray(value[WRAPPER])) return undefined;
  return Object.fromEntries((value[WRAPPER] as Array<[string, unknown]>).map(([key, inner]) => [key, decode(inner)]));
}
