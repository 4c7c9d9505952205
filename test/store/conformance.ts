import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { COLLECTIONS } from '../../src/store/collections.ts';
import {
  DuplicateKeyError,
  InvalidFilterError,
  type Collection,
  type Doc,
  type Filter,
  type JsonView,
  type Search,
  type SortSpec,
  type Store,
  type Update,
} from '../../src/store/types.ts';

/**
 * The storage contract of src/store/types.ts, written once and run against every adapter
 * (test/store/embedded-store.test.ts, test/store/mongo-store.test.ts). A behaviour that only one
 * adapter has does not belong here.
 */
export interface OpenedStore {
  store: Store;
  cleanup: () => Promise<void>;
}

const HEX_ID = /^[0-9a-f]{24}$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Fixed, sortable ids, so that "_id order" is known in advance. They start with a letter on purpose. */
const id = (n: number): string => `a${n.toString(16).padStart(23, '0')}`;

const HOUR = 60 * 60 * 1000;
const past = (): Date => new Date(Date.now() - HOUR);
const future = (): Date => new Date(Date.now() + HOUR);

export function describeStoreConformance(label: string, open: () => Promise<OpenedStore>): void {
  describe(`${label} store conformance`, () => {
    let opened: OpenedStore;
    let store: Store;
    const logs = (): Collection => store.collection('logs');

    beforeAll(async () => {
      opened = await open();
      store = opened.store;
    });

    afterAll(async () => {
      await opened?.cleanup();
    });

    beforeEach(async () => {
      for (const spec of COLLECTIONS) await store.collection(spec.name).deleteMany({});
      await store.sweepExpired();
    });

    const names = (docs: Doc[]): unknown[] => docs.map((d) => d.name);

    describe('inserting', () => {
      it('insertOne assigns a 24-character hex _id when none is given', async () => {
        const doc = await logs().insertOne({ name: 'first' });
        expect(doc._id).toMatch(HEX_ID);
        expect(await logs().findById(doc._id)).toEqual({ _id: doc._id, name: 'first' });
      });

      it('insertOne assigns a different _id to every document', async () => {
        const docs = await Promise.all(Array.from({ length: 20 }, (_, i) => logs().insertOne({ i })));
        expect(new Set(docs.map((d) => d._id)).size).toBe(20);
      });

      it('insertOne keeps an _id it is given', async () => {
        const doc = await logs().insertOne({ _id: id(7), name: 'given' });
        expect(doc._id).toBe(id(7));
        expect(await logs().findById(id(7))).toEqual({ _id: id(7), name: 'given' });
      });

      it('insertOne returns the document as it is read back', async () => {
        const when = new Date('2024-05-06T07:08:09.010Z');
        const doc = await logs().insertOne({ name: 'x', when, nested: { when, list: [when, 1, 'a', true, null] } });
        expect(doc).toEqual(await logs().findById(doc._id));
      });

      it('insertMany assigns ids and returns the documents in the given order', async () => {
        const docs = await logs().insertMany([{ name: 'a' }, { _id: id(2), name: 'b' }, { name: 'c' }]);
        expect(names(docs)).toEqual(['a', 'b', 'c']);
        expect(docs[1]?._id).toBe(id(2));
        for (const doc of docs) expect(doc._id).toMatch(HEX_ID);
        expect(await logs().count({})).toBe(3);
      });

      it('insertMany of nothing returns an empty list', async () => {
        expect(await logs().insertMany([])).toEqual([]);
      });
    });

    describe('dates', () => {
      const when = new Date('2024-02-03T04:05:06.789Z');
      const iso = when.toISOString();

      it('dates written as Date are read back as ISO 8601 strings, wherever they are in the document', async () => {
        const doc = await logs().insertOne({ when, data: { when }, list: [when] });
        const expected = { _id: doc._id, when: iso, data: { when: iso }, list: [iso] };
        expect(doc).toEqual(expected);
        expect(await logs().findById(doc._id)).toEqual(expected);
        expect(await logs().findOne({ _id: doc._id })).toEqual(expected);
        expect(await logs().find({})).toEqual([expected]);
        expect((await logs().findPage({}, { page: 1, limit: 10 })).items).toEqual([expected]);
        expect((await logs().find({}))[0]?.when).toMatch(ISO_DATE);
      });

      it('dates written by an update are read back as ISO 8601 strings', async () => {
        const doc = await logs().insertOne({ name: 'x' });
        const updated = await logs().updateOne({ _id: doc._id }, { $set: { when, 'data.when': when } });
        expect(updated).toEqual({ _id: doc._id, name: 'x', when: iso, data: { when: iso } });
        expect(await logs().findById(doc._id)).toEqual(updated);
      });

      it('an upserted document reads its dates back as ISO 8601 strings', async () => {
        const doc = await logs().updateOne({ name: 'new' }, { $set: { when } }, { upsert: true });
        expect(doc?.when).toBe(iso);
      });

      it('a deleted document is returned with ISO 8601 date strings', async () => {
        const doc = await logs().insertOne({ name: 'x', when });
        expect(await logs().deleteOne({ _id: doc._id })).toEqual({ _id: doc._id, name: 'x', when: iso });
      });
    });

    describe('reading', () => {
      beforeEach(async () => {
        // Inserted out of _id order on purpose.
        await logs().insertMany([
          { _id: id(3), name: 'c', rank: 1 },
          { _id: id(1), name: 'a', rank: 2 },
          { _id: id(2), name: 'b', rank: 1 },
          { _id: id(4), name: 'd', rank: 2 },
          { _id: id(5), name: 'e' },
        ]);
      });

      it('findById returns the document with that id', async () => {
        expect(await logs().findById(id(2))).toEqual({ _id: id(2), name: 'b', rank: 1 });
      });

      it('findById returns null for an unknown id', async () => {
        expect(await logs().findById(id(99))).toBeNull();
      });

      it('findOne returns null when nothing matches', async () => {
        expect(await logs().findOne({ name: 'zzz' })).toBeNull();
      });

      it('findOne returns the first match in _id order when no sort is given', async () => {
        expect((await logs().findOne({ rank: 2 }))?._id).toBe(id(1));
      });

      it('findOne returns the first match in the given sort order', async () => {
        expect((await logs().findOne({ rank: { $exists: true } }, { sort: { name: -1 } }))?._id).toBe(id(4));
      });

      it('find returns every match in _id order when no sort is given', async () => {
        expect(names(await logs().find({}))).toEqual(['a', 'b', 'c', 'd', 'e']);
      });

      const sorts: Array<[string, SortSpec, string[]]> = [
        ['ascending by a field, ties broken by _id, missing values first', { rank: 1 }, ['e', 'b', 'c', 'a', 'd']],
        ['descending by a field, ties broken by ascending _id, missing values last', { rank: -1 }, ['a', 'd', 'b', 'c', 'e']],
        ['by several fields in order', { rank: 1, name: -1 }, ['e', 'c', 'b', 'd', 'a']],
        ['ascending by _id', { _id: 1 }, ['a', 'b', 'c', 'd', 'e']],
        ['descending by _id', { _id: -1 }, ['e', 'd', 'c', 'b', 'a']],
        ['descending by a string field', { name: -1 }, ['e', 'd', 'c', 'b', 'a']],
      ];
      for (const [description, sort, expected] of sorts) {
        it(`find sorts ${description}`, async () => {
          expect(names(await logs().find({}, { sort }))).toEqual(expected);
        });
      }

      it('find sorts by a nested field', async () => {
        await logs().deleteMany({});
        await logs().insertMany([{ name: 'x', data: { at: 2 } }, { name: 'y', data: { at: 3 } }, { name: 'z', data: { at: 1 } }]);
        expect(names(await logs().find({}, { sort: { 'data.at': 1 } }))).toEqual(['z', 'x', 'y']);
        expect(names(await logs().find({}, { sort: { 'data.at': -1 } }))).toEqual(['y', 'x', 'z']);
      });

      const windows: Array<[string, { skip?: number; limit?: number }, string[]]> = [
        ['limit returns at most that many', { limit: 2 }, ['a', 'b']],
        ['skip leaves out that many from the start', { skip: 3 }, ['d', 'e']],
        ['skip and limit together return a window', { skip: 1, limit: 2 }, ['b', 'c']],
        ['a limit larger than the result returns everything left', { skip: 2, limit: 50 }, ['c', 'd', 'e']],
        ['a skip past the end returns nothing', { skip: 10 }, []],
      ];
      for (const [description, window, expected] of windows) {
        it(`find: ${description}`, async () => {
          expect(names(await logs().find({}, window))).toEqual(expected);
        });
      }

      it('find applies skip and limit after sorting', async () => {
        expect(names(await logs().find({}, { sort: { name: -1 }, skip: 1, limit: 2 }))).toEqual(['d', 'c']);
      });

      it('findPage returns the requested page and the total of all matches', async () => {
        const sort = { name: 1 } as const;
        expect(await logs().findPage({}, { page: 1, limit: 2, sort })).toMatchObject({ total: 5 });
        expect(names((await logs().findPage({}, { page: 1, limit: 2, sort })).items)).toEqual(['a', 'b']);
        expect(names((await logs().findPage({}, { page: 2, limit: 2, sort })).items)).toEqual(['c', 'd']);
        expect(names((await logs().findPage({}, { page: 3, limit: 2, sort })).items)).toEqual(['e']);
      });

      it('findPage past the last page returns no items but the full total', async () => {
        expect(await logs().findPage({}, { page: 4, limit: 2 })).toEqual({ items: [], total: 5 });
      });

      it('findPage counts only the documents matching the filter', async () => {
        const page = await logs().findPage({ rank: 1 }, { page: 1, limit: 1, sort: { name: -1 } });
        expect(page.total).toBe(2);
        expect(names(page.items)).toEqual(['c']);
      });

      it('findPage of an empty result is empty with a total of 0', async () => {
        expect(await logs().findPage({ name: 'zzz' }, { page: 1, limit: 10 })).toEqual({ items: [], total: 0 });
      });

      it('count returns how many documents match', async () => {
        expect(await logs().count({})).toBe(5);
        expect(await logs().count({ rank: 2 })).toBe(2);
        expect(await logs().count({ name: 'zzz' })).toBe(0);
      });
    });

    describe('search', () => {
      const docs = [
        { name: 'Alice Smith', email: 'alice@example.com', note: 'bob' },
        { name: 'BOB JONES', email: 'bj@example.org' },
        { name: '100% sure', email: 'pct@example.com' },
        { name: '100 percent', email: 'plain@example.com' },
        { name: 'snake_case', email: 'snake@example.com' },
        { name: 'snakeXcase', email: 'x@example.com' },
        { name: 'a.*b (regex) [x] ^$ +? {1} |', email: 'meta@example.com' },
        { name: 'back\\slash', email: 'bs@example.com' },
        { name: 'count', email: 'c@example.com', count: 100 },
      ];
      const fields = ['name', 'email'];
      const reference = (term: string): string[] =>
        docs
          .filter((d) => fields.some((f) => String((d as Record<string, unknown>)[f]).toLowerCase().includes(term.toLowerCase())))
          .map((d) => d.name);

      beforeEach(async () => {
        await logs().insertMany(docs);
      });

      const terms: Array<[string, string]> = [
        ['matches case-insensitively', 'smith'],
        ['matches upper-case terms against lower-case text', 'ALICE'],
        ['matches in any of the named fields', 'example.org'],
        ['treats % literally', '100%'],
        ['treats _ literally', 'snake_'],
        ['treats . and * literally', 'a.*b'],
        ['treats parentheses literally', '(regex)'],
        ['treats square brackets literally', '[x]'],
        ['treats ^ and $ literally', '^$'],
        ['treats + ? { } | literally', '+? {1} |'],
        ['treats a backslash literally', 'k\\s'],
        ['finds nothing when no field contains the term', 'nobody'],
      ];
      for (const [description, term] of terms) {
        it(`search ${description} ("${term}")`, async () => {
          const search: Search = { term, fields };
          const expected = reference(term);
          expect(names(await logs().find({}, { search }))).toEqual(expected);
          expect(await logs().count({}, search)).toBe(expected.length);
          expect((await logs().findPage({}, { page: 1, limit: 100, search })).total).toBe(expected.length);
        });
      }

      it('search looks only at the named fields', async () => {
        expect(names(await logs().find({}, { search: { term: 'bob', fields: ['name'] } }))).toEqual(['BOB JONES']);
      });

      it('search with an empty term matches everything', async () => {
        expect(await logs().count({}, { term: '', fields })).toBe(docs.length);
      });

      it('search over no fields matches nothing', async () => {
        expect(await logs().find({}, { search: { term: 'a', fields: [] } })).toEqual([]);
        expect(await logs().count({}, { term: 'a', fields: [] })).toBe(0);
      });

      it('search is combined with the filter (both must hold)', async () => {
        const found = await logs().find({ email: { $ne: 'pct@example.com' } }, { search: { term: '100', fields } });
        expect(names(found)).toEqual(['100 percent']);
      });

      it('search respects sort, skip and limit', async () => {
        // Strings sort by code point: 'X' (0x58) comes before '_' (0x5f).
        expect(names(await logs().find({}, { search: { term: 'snake', fields }, sort: { name: 1 } }))).toEqual(['snakeXcase', 'snake_case']);
        expect(names(await logs().find({}, { search: { term: 'snake', fields }, sort: { name: -1 }, skip: 1, limit: 1 }))).toEqual(['snakeXcase']);
      });

      const badFields = ['__proto__', 'a.$b', '$where', "name') OR 1=1 --", ''];
      for (const field of badFields) {
        it(`search over an invalid field name ${JSON.stringify(field)} throws InvalidFilterError`, async () => {
          await expect(logs().find({}, { search: { term: 'a', fields: [field] } })).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(logs().count({}, { term: 'a', fields: [field] })).rejects.toBeInstanceOf(InvalidFilterError);
        });
      }
    });

    describe('filter operators', () => {
      // _id order: alpha < beta < gamma < delta, so expected results are listed in that order.
      beforeEach(async () => {
        await logs().insertMany([
          {
            _id: id(1),
            name: 'alpha',
            n: 1,
            score: 10,
            label: 'b',
            tags: ['x', 'y'],
            when: new Date('2024-01-01T00:00:00.000Z'),
            data: { name: 'Ann', level: 1 },
            flag: true,
            opt: null,
          },
          {
            _id: id(2),
            name: 'beta',
            n: 2,
            score: '10',
            label: 'a',
            tags: ['y'],
            when: new Date('2024-06-01T00:00:00.000Z'),
            data: { name: 'Bob', level: 2 },
            flag: false,
          },
          { _id: id(3), name: 'gamma', n: 3, tags: [null], when: new Date('2025-01-01T00:00:00.000Z'), data: { name: 'Cid' }, opt: 'set' },
          { _id: id(4), name: 'delta', n: 10, score: 5, label: 'c', tags: 'x', data: 'plain', flag: 1 },
        ]);
      });

      const cases: Array<[string, Filter, string[]]> = [
        ['an empty filter matches everything', {}, ['alpha', 'beta', 'gamma', 'delta']],
        ['equality on a string matches that string', { name: 'beta' }, ['beta']],
        ['$eq on a string matches that string', { name: { $eq: 'beta' } }, ['beta']],
        ['equality on a number matches that number', { n: 2 }, ['beta']],
        ['equality on a number does not match the same digits as a string', { score: 10 }, ['alpha']],
        ['equality on a string does not match the same digits as a number', { score: '10' }, ['beta']],
        ['equality on true matches true only, not the number 1', { flag: true }, ['alpha']],
        ['equality on false matches false only', { flag: false }, ['beta']],
        ['equality on the number 1 does not match true', { flag: 1 }, ['delta']],
        ['equality on a Date matches that date', { when: new Date('2024-06-01T00:00:00.000Z') }, ['beta']],
        ['$eq on a Date matches that date', { when: { $eq: new Date('2024-06-01T00:00:00.000Z') } }, ['beta']],
        ['equality on null matches null and missing fields', { opt: null }, ['alpha', 'beta', 'delta']],
        ['$eq null matches null and missing fields', { opt: { $eq: null } }, ['alpha', 'beta', 'delta']],
        ['several fields must all match', { name: 'alpha', n: 2 }, []],
        ['equality on _id matches that document', { _id: id(2) }, ['beta']],
        ['$ne matches other values and missing fields', { score: { $ne: 10 } }, ['beta', 'gamma', 'delta']],
        ['$ne null matches fields that are present and not null', { opt: { $ne: null } }, ['gamma']],
        ['$ne true does not exclude the number 1', { flag: { $ne: true } }, ['beta', 'gamma', 'delta']],
        ['$gt on numbers', { n: { $gt: 2 } }, ['gamma', 'delta']],
        ['$gte on numbers', { n: { $gte: 2 } }, ['beta', 'gamma', 'delta']],
        ['$lt on numbers', { n: { $lt: 3 } }, ['alpha', 'beta']],
        ['$lte on numbers', { n: { $lte: 3 } }, ['alpha', 'beta', 'gamma']],
        ['$gt and $lt together give a range', { n: { $gt: 1, $lt: 10 } }, ['beta', 'gamma']],
        ['$gt on a number does not match a string field', { score: { $gt: 5 } }, ['alpha']],
        ['$gte on a string does not match a number field', { score: { $gte: '0' } }, ['beta']],
        ['$lt on a string does not match number fields', { n: { $lt: 'zzz' } }, []],
        ['$gt on strings compares them in order', { label: { $gt: 'a' } }, ['alpha', 'delta']],
        ['$lt on strings compares them in order', { name: { $lt: 'c' } }, ['alpha', 'beta']],
        ['$gt on a number does not match _id', { _id: { $gt: 5 } }, []],
        ['$gt on strings works on _id', { _id: { $gt: id(2) } }, ['gamma', 'delta']],
        ['$gt on a Date', { when: { $gt: new Date('2024-03-01T00:00:00.000Z') } }, ['beta', 'gamma']],
        ['$lte on a Date includes that date', { when: { $lte: new Date('2024-06-01T00:00:00.000Z') } }, ['alpha', 'beta']],
        ['$gte and $lt on Dates give a range', { when: { $gte: new Date('2024-01-01T00:00:00.000Z'), $lt: new Date('2025-01-01T00:00:00.000Z') } }, ['alpha', 'beta']],
        ['$in matches any listed value', { name: { $in: ['alpha', 'gamma', 'zzz'] } }, ['alpha', 'gamma']],
        ['$in compares like types only', { score: { $in: [10] } }, ['alpha']],
        ['$in with true does not match the number 1', { flag: { $in: [true] } }, ['alpha']],
        ['$in with null also matches missing fields', { score: { $in: [10, null] } }, ['alpha', 'gamma']],
        ['$in with only null matches null and missing fields', { opt: { $in: [null] } }, ['alpha', 'beta', 'delta']],
        ['$in with an empty list matches nothing', { score: { $in: [] } }, []],
        ['$in with Dates', { when: { $in: [new Date('2024-01-01T00:00:00.000Z')] } }, ['alpha']],
        ['$in on _id', { _id: { $in: [id(1), id(3)] } }, ['alpha', 'gamma']],
        ['$nin excludes the listed values and keeps missing fields', { score: { $nin: [10] } }, ['beta', 'gamma', 'delta']],
        ['$nin with null also excludes missing fields', { score: { $nin: [10, null] } }, ['beta', 'delta']],
        ['$nin with an empty list matches everything', { score: { $nin: [] } }, ['alpha', 'beta', 'gamma', 'delta']],
        ['$nin with true keeps the number 1', { flag: { $nin: [true] } }, ['beta', 'gamma', 'delta']],
        ['$exists true matches present fields', { score: { $exists: true } }, ['alpha', 'beta', 'delta']],
        ['$exists false matches missing fields', { score: { $exists: false } }, ['gamma']],
        ['$exists true treats null as absent', { opt: { $exists: true } }, ['gamma']],
        ['$exists false treats null as absent', { opt: { $exists: false } }, ['alpha', 'beta', 'delta']],
        ['$has matches arrays containing the value', { tags: { $has: 'y' } }, ['alpha', 'beta']],
        ['$has does not match a scalar field equal to the value', { tags: { $has: 'x' } }, ['alpha']],
        ['$has matches nothing when no array contains the value', { tags: { $has: 'z' } }, []],
        ['$has null matches arrays containing null', { tags: { $has: null } }, ['gamma']],
        ['$and requires every filter', { $and: [{ n: { $gt: 1 } }, { n: { $lt: 10 } }] }, ['beta', 'gamma']],
        ['$or requires any filter', { $or: [{ name: 'alpha' }, { n: 10 }] }, ['alpha', 'delta']],
        ['$or and $and nest', { $or: [{ name: 'gamma' }, { $and: [{ n: { $gte: 2 } }, { tags: { $has: 'y' } }] }] }, ['beta', 'gamma']],
        ['$or combines with sibling fields', { n: { $lt: 3 }, $or: [{ name: 'beta' }, { name: 'gamma' }] }, ['beta']],
        ['a dotted path matches a nested field', { 'data.name': 'Bob' }, ['beta']],
        ['a dotted path works with $gte', { 'data.level': { $gte: 1 } }, ['alpha', 'beta']],
        ['a dotted path works with $in', { 'data.name': { $in: ['Ann', 'Cid'] } }, ['alpha', 'gamma']],
        ['a dotted path into a non-object is missing', { 'data.name': { $exists: false } }, ['delta']],
        ['a dotted path into a non-object equals null', { 'data.level': null }, ['gamma', 'delta']],
      ];
      for (const [description, filter, expected] of cases) {
        it(`${description}: ${JSON.stringify(filter)}`, async () => {
          expect(names(await logs().find(filter))).toEqual(expected);
          expect(await logs().count(filter)).toBe(expected.length);
        });
      }

      it('an operator object whose operators are all supported is accepted', async () => {
        await expect(logs().find({ login: { $ne: null } })).resolves.toEqual([]);
      });

      const invalid: Array<[string, () => Filter]> = [
        ['$where', () => ({ $where: 'this.n > 1' })],
        ['$expr', () => ({ $expr: { $gt: ['$n', 1] } })],
        ['an unknown top-level operator', () => ({ $foo: 1 })],
        ['$nor', () => ({ $nor: [{ n: 1 }] })],
        ['$regex', () => ({ name: { $regex: '^a' } })],
        ['$not', () => ({ name: { $not: { $eq: 'a' } } })],
        ['$elemMatch', () => ({ tags: { $elemMatch: { $eq: 'x' } } })],
        ['an unknown operator as an equality value', () => ({ login: { $bogus: 1 } })],
        ['an unknown operator next to a known one', () => ({ n: { $gt: 1, $bogus: 1 } })],
        ['an empty operator object', () => ({ n: {} })],
        ['an object as an equality value', () => ({ data: { name: 'Ann' } })],
        ['an array as an equality value', () => ({ tags: ['x', 'y'] })],
        ['undefined as an equality value', () => ({ n: undefined })],
        ['NaN', () => ({ n: Number.NaN })],
        ['Infinity in $gt', () => ({ n: { $gt: Number.POSITIVE_INFINITY } })],
        ['$gt null', () => ({ n: { $gt: null } })],
        ['$lt true', () => ({ n: { $lt: true } })],
        ['$in with a non-list', () => ({ n: { $in: 1 } })],
        ['$in with an object in the list', () => ({ n: { $in: [{ a: 1 }] } })],
        ['$exists with a non-boolean', () => ({ n: { $exists: 1 } })],
        ['$and with an empty list', () => ({ $and: [] })],
        ['$or with a non-list', () => ({ $or: { n: 1 } })],
        ['$or containing an unsupported operator', () => ({ $or: [{ n: 1 }, { $where: 'true' }] })],
        ['the field name __proto__', () => JSON.parse('{"__proto__": 1}') as Filter],
        ['the field name constructor', () => ({ constructor: 1 })],
        ['a dotted path with a $ segment', () => ({ 'a.$b': 1 })],
        ['a field name starting with $', () => ({ $x: 1 })],
        ['an empty path segment', () => ({ 'a..b': 1 })],
        ['a field name with a quote', () => ({ "a') OR 1=1 --": 1 })],
      ];
      for (const [description, filter] of invalid) {
        it(`a filter with ${description} throws InvalidFilterError`, async () => {
          const c = logs();
          await expect(c.find(filter())).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(c.findOne(filter())).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(c.count(filter())).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(c.findPage(filter(), { page: 1, limit: 10 })).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(c.updateOne(filter(), { $set: { hit: true } })).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(c.updateOne(filter(), { $set: { hit: true } }, { upsert: true })).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(c.updateMany(filter(), { $set: { hit: true } })).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(c.deleteOne(filter())).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(c.deleteMany(filter())).rejects.toBeInstanceOf(InvalidFilterError);
          expect(await c.count({})).toBe(4);
          expect(await c.count({ hit: true })).toBe(0);
        });
      }

      const invalidSorts: Array<[string, SortSpec]> = [
        ['an invalid field name', JSON.parse('{"__proto__": 1}') as SortSpec],
        ['a $ field name', { $natural: 1 }],
        ['a direction other than 1 or -1', { n: 0 as 1 }],
      ];
      for (const [description, sort] of invalidSorts) {
        it(`a sort with ${description} throws InvalidFilterError`, async () => {
          await expect(logs().find({}, { sort })).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(logs().findOne({}, { sort })).rejects.toBeInstanceOf(InvalidFilterError);
        });
      }
    });

    describe('updating', () => {
      it('incrementEach adds each amount to the field of its document, skipping unknown ids', async () => {
        const a = await logs().insertOne({ name: 'a', n: 1 });
        const b = await logs().insertOne({ name: 'b' });
        const unknown = 'f'.repeat(24);
        await logs().incrementEach('n', new Map([[a._id, 2], [b._id, 5], [unknown, 1]]));
        expect(await logs().findById(a._id)).toEqual({ _id: a._id, name: 'a', n: 3 });
        expect(await logs().findById(b._id)).toEqual({ _id: b._id, name: 'b', n: 5 });
        expect(await logs().count({})).toBe(2);
        await logs().incrementEach('n', new Map());
        expect((await logs().findById(a._id))?.n).toBe(3);
      });

      it('updateOne with $set returns the document as it is after the update', async () => {
        const doc = await logs().insertOne({ name: 'a', n: 1 });
        const updated = await logs().updateOne({ _id: doc._id }, { $set: { name: 'b', extra: [1, 2] } });
        expect(updated).toEqual({ _id: doc._id, name: 'b', n: 1, extra: [1, 2] });
        expect(await logs().findById(doc._id)).toEqual(updated);
      });

      it('$set on a dotted path sets a nested field and keeps its siblings', async () => {
        const doc = await logs().insertOne({ data: { a: 1, b: 2 } });
        expect(await logs().updateOne({ _id: doc._id }, { $set: { 'data.a': 10, 'data.c.d': 'deep' } })).toEqual({
          _id: doc._id,
          data: { a: 10, b: 2, c: { d: 'deep' } },
        });
      });

      it('$set can set a field to null', async () => {
        const doc = await logs().insertOne({ name: 'a' });
        expect(await logs().updateOne({ _id: doc._id }, { $set: { name: null } })).toEqual({ _id: doc._id, name: null });
      });

      it('$unset removes fields, including nested ones, and ignores missing ones', async () => {
        const doc = await logs().insertOne({ name: 'a', gone: 1, data: { keep: 1, drop: 2 } });
        const updated = await logs().updateOne({ _id: doc._id }, { $unset: ['gone', 'data.drop', 'never', 'nothing.here'] });
        expect(updated).toEqual({ _id: doc._id, name: 'a', data: { keep: 1 } });
        expect(await logs().findById(doc._id)).toEqual(updated);
      });

      it('$inc adds to a number, starts a missing field from 0 and works on dotted paths', async () => {
        const doc = await logs().insertOne({ n: 5, data: { hits: 1 } });
        const updated = await logs().updateOne({ _id: doc._id }, { $inc: { n: -2, fresh: 3, 'data.hits': 1, 'data.misses': 1.5 } });
        expect(updated).toEqual({ _id: doc._id, n: 3, fresh: 3, data: { hits: 2, misses: 1.5 } });
      });

      it('$set, $unset and $inc can be combined', async () => {
        const doc = await logs().insertOne({ a: 1, b: 2, c: 3 });
        expect(await logs().updateOne({ _id: doc._id }, { $set: { a: 'one' }, $unset: ['b'], $inc: { c: 1 } })).toEqual({
          _id: doc._id,
          a: 'one',
          c: 4,
        });
      });

      it('$inc on a non-numeric field rejects and leaves the document unchanged', async () => {
        const doc = await logs().insertOne({ name: 'a', n: 1 });
        await expect(logs().updateOne({ _id: doc._id }, { $inc: { name: 1 } })).rejects.toThrow();
        expect(await logs().findById(doc._id)).toEqual(doc);
      });

      it('an update without operators matches and changes nothing', async () => {
        const doc = await logs().insertOne({ name: 'a', n: 1 });
        expect(await logs().updateOne({ _id: doc._id }, {})).toEqual(doc);
        expect(await logs().updateOne({ _id: doc._id }, { $set: {}, $unset: [], $inc: {} })).toEqual(doc);
        expect(await logs().updateMany({ name: 'a' }, {})).toBe(1);
        expect(await logs().find({})).toEqual([doc]);
      });

      it('updateOne returns null and inserts nothing when nothing matched', async () => {
        await logs().insertOne({ name: 'a' });
        expect(await logs().updateOne({ name: 'zzz' }, { $set: { n: 1 } })).toBeNull();
        expect(await logs().count({})).toBe(1);
        expect(await logs().count({ n: 1 })).toBe(0);
      });

      it('updateOne changes only the first match in _id order', async () => {
        await logs().insertMany([
          { _id: id(2), name: 'x' },
          { _id: id(1), name: 'x' },
        ]);
        expect((await logs().updateOne({ name: 'x' }, { $set: { hit: true } }))?._id).toBe(id(1));
        expect((await logs().find({ hit: true })).map((d) => d._id)).toEqual([id(1)]);
      });

      it('an upsert that matches nothing creates a document from the filter equality fields and the update', async () => {
        const doc = await logs().updateOne(
          { name: 'new', kind: { $eq: 'k' }, n: { $gt: 5 }, tags: { $has: 'x' } },
          { $set: { extra: true }, $inc: { hits: 1 } },
          { upsert: true },
        );
        expect(doc).toEqual({ _id: expect.stringMatching(HEX_ID), name: 'new', kind: 'k', extra: true, hits: 1 });
        expect(await logs().findById(doc?._id as string)).toEqual(doc);
      });

      it('an upsert copies dotted equality fields into nested objects', async () => {
        const doc = await logs().updateOne({ 'data.name': 'n' }, { $set: { 'data.level': 1 } }, { upsert: true });
        expect(doc).toEqual({ _id: expect.stringMatching(HEX_ID), data: { name: 'n', level: 1 } });
      });

      it('an upsert keeps an _id given as an equality in the filter', async () => {
        const doc = await logs().updateOne({ _id: id(9) }, { $set: { name: 'nine' } }, { upsert: true });
        expect(doc).toEqual({ _id: id(9), name: 'nine' });
        expect(await logs().findById(id(9))).toEqual(doc);
      });

      it('an upsert that matches updates the existing document instead of creating one', async () => {
        const first = await logs().updateOne({ name: 'k' }, { $inc: { n: 1 } }, { upsert: true });
        const second = await logs().updateOne({ name: 'k' }, { $inc: { n: 1 } }, { upsert: true });
        expect(second).toEqual({ _id: first?._id, name: 'k', n: 2 });
        expect(await logs().count({})).toBe(1);
      });

      it('updateMany updates every match and returns how many matched', async () => {
        await logs().insertMany([
          { name: 'a', group: 1 },
          { name: 'b', group: 1 },
          { name: 'c', group: 2 },
        ]);
        expect(await logs().updateMany({ group: 1 }, { $set: { seen: true }, $inc: { n: 1 } })).toBe(2);
        expect(names(await logs().find({ seen: true, n: 1 }))).toEqual(['a', 'b']);
        expect(await logs().count({ seen: { $exists: false } })).toBe(1);
      });

      it('updateMany counts matches even when the update changes nothing', async () => {
        await logs().insertMany([{ name: 'a' }, { name: 'a' }]);
        expect(await logs().updateMany({ name: 'a' }, { $set: { name: 'a' } })).toBe(2);
      });

      it('updateMany returns 0 when nothing matched', async () => {
        expect(await logs().updateMany({ name: 'zzz' }, { $set: { n: 1 } })).toBe(0);
      });

      const invalidUpdates: Array<[string, Update]> = [
        ['an unsupported operator', { $push: { tags: 'x' } } as unknown as Update],
        ['$rename', { $rename: { a: 'b' } } as unknown as Update],
        ['an invalid $set field', { $set: { 'a.$b': 1 } }],
        ['a $set of __proto__', { $set: JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown> }],
        ['a $set of _id', { $set: { _id: id(5) } }],
        ['an $unset of _id', { $unset: ['_id'] }],
        ['an $inc of _id', { $inc: { _id: 1 } }],
        ['an invalid $unset field', { $unset: ['$x'] }],
        ['a non-numeric $inc', { $inc: { n: '1' as unknown as number } }],
        ['a non-finite $inc', { $inc: { n: Number.NaN } }],
      ];
      for (const [description, update] of invalidUpdates) {
        it(`an update with ${description} throws InvalidFilterError and changes nothing`, async () => {
          const doc = await logs().insertOne({ name: 'a', n: 1 });
          await expect(logs().updateOne({ _id: doc._id }, update)).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(logs().updateOne({ name: 'zzz' }, update, { upsert: true })).rejects.toBeInstanceOf(InvalidFilterError);
          await expect(logs().updateMany({}, update)).rejects.toBeInstanceOf(InvalidFilterError);
          expect(await logs().find({})).toEqual([doc]);
        });
      }
    });

    describe('scanning and staged moves', () => {
      const VIEW: JsonView = { spread: 'data', tail: ['createdAt', 'updatedAt', 'expiresAt'], fields: ['resourcePath'] };
      const record = (n: number, path: string, at: string, extra: Record<string, unknown> = {}) => ({
        _id: id(n),
        endpointId: 'e',
        resourcePath: path,
        data: { n },
        createdAt: new Date(at),
        updatedAt: new Date(at),
        expiresAt: null,
        ...extra,
      });

      it('scanJson reads every match in (orderBy…, _id) order, a page at a time, without expired documents', async () => {
        const records = store.collection('endpointdatas');
        await records.insertMany([
          record(5, '/b', '2026-01-01T00:00:00Z'),
          record(4, '/a', '2026-01-02T00:00:00Z'),
          record(3, '/a', '2026-01-01T00:00:00Z'),
          record(2, '/a', '2026-01-01T00:00:00Z'),
          record(1, '/b', '2026-01-01T00:00:00Z', { expiresAt: past() }),
        ]);
        const pages: string[][] = [];
        for await (const page of records.scanJson({}, VIEW, { orderBy: ['resourcePath', 'createdAt'], batchSize: 2 })) pages.push(page.map((row) => `${row.fields.resourcePath as string} ${row.fields._id}`));
        expect(pages).toEqual([
          [`/a ${id(2)}`, `/a ${id(3)}`],
          [`/a ${id(4)}`, `/b ${id(5)}`],
        ]);
        const rows = [];
        for await (const page of records.scanJson({ resourcePath: '/a' }, VIEW, { orderBy: ['resourcePath', 'createdAt'] })) rows.push(...page);
        expect(rows.map((row) => JSON.parse(row.json))).toEqual([
          { _id: id(2), n: 2, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' },
          { _id: id(3), n: 3, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' },
          { _id: id(4), n: 4, createdAt: '2026-01-02T00:00:00.000Z', updatedAt: '2026-01-02T00:00:00.000Z' },
        ]);
      });

      it('moveStaged moves a stage in (merge: by id; replace: the only documents), remaps a field, recounts, and deletes the stage', async () => {
        const records = store.collection('endpointdatas');
        const staging = store.collection('importrecords');
        await records.insertMany([record(1, '/a', '2026-01-01T00:00:00Z'), record(2, '/a', '2026-01-01T00:00:00Z')]);
        const staged = (stageId: string, n: number, owner: string) => {
          const { _id, ...fields } = record(n, '/a', '2026-02-01T00:00:00Z', { endpointId: owner, data: { n, staged: true } });
          return { ...fields, stageId, targetId: _id, stagedAt: new Date() };
        };
        await staging.insertMany([staged('s1', 2, 'POST /a'), staged('s1', 3, 'GET /a'), staged('other', 9, 'x')]);
        const recounts = [{ collection: 'recordcounts', key: { resourcePath: '/a' }, field: 'count', of: { collection: 'endpointdatas', filter: { resourcePath: '/a' } } }];
        expect(await store.moveStaged({ from: 'importrecords', stageId: 's1', to: 'endpointdatas', replace: false, remap: { field: 'endpointId', values: { 'POST /a': 'e-post' } }, recounts })).toBe(2);
        expect(await store.collection('recordcounts').findOne({ resourcePath: '/a' })).toMatchObject({ count: 3 });
        const merged = await records.find({}, { sort: { _id: 1 } });
        expect(merged.map((doc) => [doc._id, doc.endpointId, doc.data])).toEqual([
          [id(1), 'e', { n: 1 }],
          [id(2), 'e-post', { n: 2, staged: true }],
          [id(3), 'GET /a', { n: 3, staged: true }],
        ]);
        expect(merged[1]).toEqual({ _id: id(2), endpointId: 'e-post', resourcePath: '/a', data: { n: 2, staged: true }, createdAt: '2026-02-01T00:00:00.000Z', updatedAt: '2026-02-01T00:00:00.000Z', expiresAt: null });
        expect(await staging.count({ stageId: 's1' })).toBe(0);

        expect(await store.moveStaged({ from: 'importrecords', stageId: 'other', to: 'endpointdatas', replace: true })).toBe(1);
        expect((await records.find({})).map((doc) => doc._id)).toEqual([id(9)]);
        expect(await staging.count({})).toBe(0);
      });
    });

    describe('deleting', () => {
      beforeEach(async () => {
        await logs().insertMany([
          { _id: id(3), name: 'c', group: 1 },
          { _id: id(1), name: 'a', group: 1 },
          { _id: id(2), name: 'b', group: 2 },
        ]);
      });

      it('deleteOne removes and returns the first match in _id order', async () => {
        expect(await logs().deleteOne({ group: 1 })).toEqual({ _id: id(1), name: 'a', group: 1 });
        expect(names(await logs().find({}))).toEqual(['b', 'c']);
      });

      it('deleteOne returns null and removes nothing when nothing matched', async () => {
        expect(await logs().deleteOne({ name: 'zzz' })).toBeNull();
        expect(await logs().count({})).toBe(3);
      });

      it('deleteMany removes every match and returns how many', async () => {
        expect(await logs().deleteMany({ group: 1 })).toBe(2);
        expect(names(await logs().find({}))).toEqual(['b']);
      });

      it('deleteMany returns 0 when nothing matched', async () => {
        expect(await logs().deleteMany({ name: 'zzz' })).toBe(0);
        expect(await logs().count({})).toBe(3);
      });

      it('deleteMany with an empty filter removes everything', async () => {
        expect(await logs().deleteMany({})).toBe(3);
        expect(await logs().count({})).toBe(0);
      });
    });

    describe('unique indexes', () => {
      it('a second user with the same loginKey throws DuplicateKeyError naming loginKey', async () => {
        await store.collection('users').insertOne({ loginKey: 'ann', emailKey: 'ann@x' });
        const error = await store
          .collection('users')
          .insertOne({ loginKey: 'ann', emailKey: 'other@x' })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(error).toMatchObject({ collection: 'users', fields: ['loginKey'] });
        expect(await store.collection('users').count({})).toBe(1);
      });

      it('two users that both lack loginKey and emailKey do not conflict', async () => {
        await store.collection('users').insertOne({ name: 'one' });
        await store.collection('users').insertOne({ name: 'two' });
        expect(await store.collection('users').count({})).toBe(2);
      });

      it('a compound unique index conflicts only when every field is equal', async () => {
        const endpoints = store.collection('endpoints');
        await endpoints.insertOne({ path: '/a', method: 'GET' });
        await endpoints.insertOne({ path: '/a', method: 'POST' });
        await endpoints.insertOne({ path: '/b', method: 'GET' });
        const error = await endpoints.insertOne({ path: '/a', method: 'GET' }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(error).toMatchObject({ collection: 'endpoints', fields: ['path', 'method'] });
        expect(await endpoints.count({})).toBe(3);
      });

      it('an update that would duplicate a unique value throws DuplicateKeyError and changes nothing', async () => {
        const users = store.collection('users');
        await users.insertOne({ loginKey: 'ann' });
        const bob = await users.insertOne({ loginKey: 'bob' });
        const error = await users.updateOne({ _id: bob._id }, { $set: { loginKey: 'ann' } }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(error).toMatchObject({ fields: ['loginKey'] });
        expect(await users.findById(bob._id)).toEqual(bob);
      });

      it('an upsert that would duplicate a unique value throws DuplicateKeyError', async () => {
        const users = store.collection('users');
        await users.insertOne({ loginKey: 'ann', active: false });
        await expect(users.updateOne({ loginKey: 'ann', active: true }, { $set: { n: 1 } }, { upsert: true })).rejects.toBeInstanceOf(
          DuplicateKeyError,
        );
        expect(await users.count({})).toBe(1);
      });

      it('a duplicate _id throws DuplicateKeyError naming _id', async () => {
        await logs().insertOne({ _id: id(1) });
        const error = await logs()
          .insertOne({ _id: id(1) })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(error).toMatchObject({ collection: 'logs', fields: ['_id'] });
      });

      it('insertMany with a duplicate unique value throws DuplicateKeyError naming the field', async () => {
        const error = await store
          .collection('users')
          .insertMany([{ loginKey: 'x' }, { loginKey: 'x' }])
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(error).toMatchObject({ collection: 'users', fields: ['loginKey'] });
      });

      it('a unique value can be reused once the document holding it is deleted', async () => {
        const users = store.collection('users');
        await users.insertOne({ loginKey: 'ann' });
        await users.deleteOne({ loginKey: 'ann' });
        await expect(users.insertOne({ loginKey: 'ann' })).resolves.toMatchObject({ loginKey: 'ann' });
      });
    });

    for (const ttlName of ['sessions', 'endpointdatas']) {
      describe(`TTL collection ${ttlName}`, () => {
        const ttl = (): Collection => store.collection(ttlName);
        let expired: Doc;

        beforeEach(async () => {
          expired = await ttl().insertOne({ _id: id(1), name: 'expired', group: 1, expiresAt: past() });
          await ttl().insertOne({ _id: id(2), name: 'live', group: 1, expiresAt: future() });
          await ttl().insertOne({ _id: id(3), name: 'forever', group: 1 });
        });

        it('find never returns a document whose expiresAt has passed', async () => {
          expect(names(await ttl().find({}))).toEqual(['live', 'forever']);
          expect(names(await ttl().find({ name: 'expired' }))).toEqual([]);
        });

        it('findOne and findById never return an expired document', async () => {
          expect(await ttl().findOne({ name: 'expired' })).toBeNull();
          expect(await ttl().findById(expired._id)).toBeNull();
          expect((await ttl().findById(id(2)))?.name).toBe('live');
        });

        it('findPage items and total and count leave out expired documents', async () => {
          expect(await ttl().count({})).toBe(2);
          expect(await ttl().count({ group: 1 }, { term: 'e', fields: ['name'] })).toBe(2);
          const page = await ttl().findPage({ group: 1 }, { page: 1, limit: 10 });
          expect(page.total).toBe(2);
          expect(names(page.items)).toEqual(['live', 'forever']);
        });

        it('updateOne and deleteOne do not touch an expired document', async () => {
          expect(await ttl().updateOne({ name: 'expired' }, { $set: { hit: true } })).toBeNull();
          expect(await ttl().updateMany({ group: 1 }, { $set: { hit: true } })).toBe(2);
          expect(await ttl().deleteOne({ name: 'expired' })).toBeNull();
        });

        it('deleteMany counts only documents that have not expired', async () => {
          expect(await ttl().deleteMany({ group: 1 })).toBe(2);
          expect(await ttl().count({})).toBe(0);
        });

        it('sweepExpired removes expired documents and returns how many', async () => {
          expect(await store.sweepExpired()).toBe(1);
          expect(await store.sweepExpired()).toBe(0);
          expect(names(await ttl().find({}))).toEqual(['live', 'forever']);
        });

        it('an expired document does not hide a live one with the same values', async () => {
          await ttl().insertOne({ name: 'expired', group: 2, expiresAt: future() });
          expect(names(await ttl().find({ name: 'expired' }))).toEqual(['expired']);
        });
      });
    }

    it('sweepExpired removes expired documents from every TTL collection', async () => {
      await store.collection('sessions').insertMany([{ expiresAt: past() }, { expiresAt: past() }, { expiresAt: future() }]);
      await store.collection('endpointdatas').insertOne({ expiresAt: past() });
      expect(await store.sweepExpired()).toBe(3);
      expect(await store.collection('sessions').count({})).toBe(1);
    });

    it('findOne by a unique field finds by value, compares like types and skips an expired document', async () => {
      const settings = store.collection('systemsettings');
      await settings.insertOne({ key: 'site', v: 1 });
      await settings.insertOne({ key: [1], v: 2 });
      await settings.insertOne({ key: '[2]', v: 3 });
      expect((await settings.findOne({ key: 'site' }))?.v).toBe(1);
      expect(await settings.findOne({ key: '[1]' })).toBeNull();
      expect((await settings.findOne({ key: '[2]' }))?.v).toBe(3);
      expect(await settings.findOne({ key: 'nope' })).toBeNull();
      const sessions = store.collection('sessions');
      await sessions.insertOne({ tokenHash: 'old', expiresAt: past() });
      await sessions.insertOne({ tokenHash: 'new', expiresAt: future() });
      expect(await sessions.findOne({ tokenHash: 'old' })).toBeNull();
      expect((await sessions.findOne({ tokenHash: 'new' }))?.tokenHash).toBe('new');
    });

    it('a collection without TTL returns documents whose expiresAt has passed and sweepExpired leaves them', async () => {
      const attempts = store.collection('loginattempts');
      await attempts.insertOne({ loginKey: 'ann', expiresAt: past() });
      expect(await store.sweepExpired()).toBe(0);
      expect(await attempts.count({})).toBe(1);
      expect(await attempts.findOne({ loginKey: 'ann' })).not.toBeNull();
    });

    describe('documents with fields in columns (endpointdatas)', () => {
      // The embedded store keeps resourcePath, endpointId, createdAt, updatedAt and expiresAt of a
      // record in text columns and `data` in a JSON column; none of that may be visible here.
      const records = (): Collection => store.collection('endpointdatas');
      const day = (n: number): Date => new Date(Date.UTC(2024, 0, n, 12));
      const VIEW: JsonView = { spread: 'data', tail: ['createdAt', 'updatedAt', 'expiresAt'] };
      const ids = (docs: Array<{ _id: string }>): string[] => docs.map((d) => d._id);
      /** The document as every read returns it: dates as ISO strings, null kept, missing kept missing. */
      const asRead = (doc: Record<string, unknown>): Doc => JSON.parse(JSON.stringify(doc)) as Doc;
      /** The client view of a record as read: `{_id, ...data, createdAt, updatedAt, expiresAt when set}`. */
      const shown = (doc: Doc): Record<string, unknown> => {
        const out: Record<string, unknown> = { _id: doc._id, ...(doc.data as Record<string, unknown> | undefined) };
        for (const field of VIEW.tail) if (doc[field] !== undefined && doc[field] !== null) out[field] = doc[field];
        return out;
      };
      /** A view that also returns fields beside the text. */
      const WITH_FIELDS: JsonView = { ...VIEW, fields: ['resourcePath', 'endpointId', 'expiresAt'] };
      /** JsonRow.fields for WITH_FIELDS: `_id` and those fields, null when missing. */
      const fieldsOf = (doc: Doc): Doc => ({
        _id: doc._id,
        resourcePath: doc.resourcePath ?? null,
        endpointId: doc.endpointId ?? null,
        expiresAt: doc.expiresAt ?? null,
      });

      // _id order is 1..6; createdAt order is 2, 3, 1, 4, 5. Record 6 has expired.
      let seeded: Array<Record<string, unknown> & { _id: string }>;
      const expected = (n: number): Doc => asRead(seeded[n - 1] as Doc);
      const live = (...ns: number[]): string[] => ns.map(id);

      beforeEach(async () => {
        seeded = [
          {
            _id: id(1),
            endpointId: 'e1',
            resourcePath: '/books',
            data: { title: 'Dune', price: 10, active: true, tags: ['x', 'y'], meta: { sku: 'D-1' }, note: 'n' },
            expiresAt: null,
            createdAt: day(3),
            updatedAt: day(3),
          },
          {
            _id: id(2),
            endpointId: 'e1',
            resourcePath: '/books',
            data: { title: 'Emma', price: 25.5, active: false, tags: ['y'], meta: { sku: 'E-2' }, note: null },
            expiresAt: future(),
            createdAt: day(1),
            updatedAt: day(5),
          },
          {
            // No expiresAt at all; price is a string and tags a scalar, for type bracketing.
            _id: id(3),
            endpointId: 'e2',
            resourcePath: '/films',
            data: { title: 'Heat', price: '10', active: 1, tags: 'x', meta: 'D-1' },
            createdAt: day(2),
            updatedAt: day(2),
          },
          {
            _id: id(4),
            endpointId: 'e2',
            resourcePath: '/films',
            data: { title: 'Jaws', price: 10, tags: [], meta: { sku: 'J-4' } },
            expiresAt: null,
            createdAt: day(4),
            updatedAt: day(4),
          },
          { _id: id(5), endpointId: 'e3', resourcePath: '/empty', data: {}, expiresAt: null, createdAt: day(5), updatedAt: day(6) },
          {
            _id: id(6),
            endpointId: 'e1',
            resourcePath: '/books',
            data: { title: 'Dune', price: 10, active: true, tags: ['x', 'y'], meta: { sku: 'D-1' } },
            expiresAt: past(),
            createdAt: day(0),
            updatedAt: day(0),
          },
        ];
        await records().insertMany(seeded);
      });

      describe('reading back', () => {
        it('findById returns each record exactly as written (dates as ISO strings, null kept, missing kept missing)', async () => {
          for (const n of [1, 2, 3, 4, 5]) expect(await records().findById(id(n))).toStrictEqual(expected(n));
          const nullExpiry = await records().findById(id(1));
          expect(nullExpiry?.expiresAt).toBeNull();
          expect(nullExpiry?.createdAt).toMatch(ISO_DATE);
          expect((await records().findById(id(2)))?.expiresAt).toMatch(ISO_DATE);
          expect(await records().findById(id(3))).not.toHaveProperty('expiresAt');
          expect((await records().findById(id(5)))?.data).toStrictEqual({});
        });

        it('find returns the records exactly as written', async () => {
          expect(await records().find({})).toStrictEqual([1, 2, 3, 4, 5].map(expected));
          expect(await records().find({ resourcePath: '/films' })).toStrictEqual([expected(3), expected(4)]);
          expect(await records().findOne({ endpointId: 'e3' })).toStrictEqual(expected(5));
          expect((await records().findPage({ resourcePath: '/books' }, { page: 1, limit: 10 })).items).toStrictEqual([expected(1), expected(2)]);
        });

        it('insertOne returns the record as it is read back, with or without expiresAt, data or columns', async () => {
          const full = await records().insertOne({
            endpointId: 'e9',
            resourcePath: '/new',
            data: { title: 'New', when: day(7), list: [day(8), 1, 'a', null, { deep: true }] },
            expiresAt: null,
            createdAt: day(7),
            updatedAt: day(7),
          });
          expect(full).toStrictEqual({
            _id: expect.stringMatching(HEX_ID),
            endpointId: 'e9',
            resourcePath: '/new',
            data: { title: 'New', when: day(7).toISOString(), list: [day(8).toISOString(), 1, 'a', null, { deep: true }] },
            expiresAt: null,
            createdAt: day(7).toISOString(),
            updatedAt: day(7).toISOString(),
          });
          expect(await records().findById(full._id)).toStrictEqual(full);

          const bare = await records().insertOne({ resourcePath: '/new', other: { a: 1 }, extra: 'x' });
          expect(bare).toStrictEqual({ _id: bare._id, resourcePath: '/new', other: { a: 1 }, extra: 'x' });
          expect(await records().findById(bare._id)).toStrictEqual(bare);

          const nulls = await records().insertOne({ resourcePath: null, endpointId: null, data: null, createdAt: null, updatedAt: null });
          expect(await records().findById(nulls._id)).toStrictEqual({
            _id: nulls._id,
            resourcePath: null,
            endpointId: null,
            data: null,
            createdAt: null,
            updatedAt: null,
          });
        });

        it('a record written with ISO 8601 strings as dates is filtered and sorted by them', async () => {
          await records().deleteMany({});
          await records().insertMany([
            { _id: id(11), resourcePath: '/s', createdAt: '2024-03-01T00:00:00.000Z', data: { n: 1 } },
            { _id: id(12), resourcePath: '/s', createdAt: '2024-01-01T00:00:00.000Z', data: { n: 2 } },
            { _id: id(13), resourcePath: '/s', createdAt: '2024-02-01T00:00:00.000Z', data: { n: 3 } },
          ]);
          expect(ids(await records().find({ createdAt: { $gt: '2024-01-15T00:00:00.000Z' } }))).toEqual([id(11), id(13)]);
          expect(ids(await records().find({ createdAt: { $lt: '2024-02-01T00:00:00.000Z' } }))).toEqual([id(12)]);
          expect(ids(await records().find({ createdAt: { $gte: '2024-02-01T00:00:00.000Z', $lte: '2024-03-01T00:00:00.000Z' } }))).toEqual([id(11), id(13)]);
          expect(ids(await records().find({ createdAt: '2024-01-01T00:00:00.000Z' }))).toEqual([id(12)]);
          expect(ids(await records().find({ resourcePath: '/s' }, { sort: { createdAt: -1 } }))).toEqual([id(11), id(13), id(12)]);
        });
      });

      describe('filters', () => {
        const cases: Array<[string, Filter, number[]]> = [
          ['an empty filter matches every live record', {}, [1, 2, 3, 4, 5]],
          ['equality on a column', { resourcePath: '/books' }, [1, 2]],
          ['$eq on a column', { endpointId: { $eq: 'e2' } }, [3, 4]],
          ['$in on a column', { resourcePath: { $in: ['/films', '/nope'] } }, [3, 4]],
          ['$ne on a column', { resourcePath: { $ne: '/books' } }, [3, 4, 5]],
          ['$nin on a column', { resourcePath: { $nin: ['/books', '/empty'] } }, [3, 4]],
          ['a number does not equal a string column', { resourcePath: 5 }, []],
          ['$gt on a date column with a Date', { createdAt: { $gt: day(2) } }, [1, 4, 5]],
          ['$lt on a date column with a Date', { createdAt: { $lt: day(3) } }, [2, 3]],
          ['$gte and $lte on a date column give a range', { createdAt: { $gte: day(2), $lte: day(4) } }, [1, 3, 4]],
          ['equality on a date column with a Date', { createdAt: day(4) }, [4]],
          ['$in on a date column with Dates', { updatedAt: { $in: [day(5), day(6)] } }, [2, 5]],
          ['expiresAt null matches null and missing', { expiresAt: null }, [1, 3, 4, 5]],
          ['expiresAt $exists true', { expiresAt: { $exists: true } }, [2]],
          ['expiresAt $exists false', { expiresAt: { $exists: false } }, [1, 3, 4, 5]],
          ['expiresAt $ne null', { expiresAt: { $ne: null } }, [2]],
          ['$gt on expiresAt', { expiresAt: { $gt: new Date() } }, [2]],
          ['a dotted path into a column holding a string is missing', { 'resourcePath.x': { $exists: false } }, [1, 2, 3, 4, 5]],
          ['a dotted path into a column holding a string equals null', { 'resourcePath.x': null }, [1, 2, 3, 4, 5]],
          ['equality on a member of the JSON column', { 'data.title': 'Emma' }, [2]],
          ['$in on a member', { 'data.title': { $in: ['Dune', 'Jaws', 'Zzz'] } }, [1, 4]],
          ['$ne on a member keeps records without it', { 'data.title': { $ne: 'Dune' } }, [2, 3, 4, 5]],
          ['$nin on a member keeps records without it', { 'data.title': { $nin: ['Dune', 'Heat'] } }, [2, 4, 5]],
          ['$gt on a numeric member does not match a string', { 'data.price': { $gt: 9 } }, [1, 2, 4]],
          ['$lte on a numeric member', { 'data.price': { $lte: 10 } }, [1, 4]],
          ['$gt and $lt on a member give a range', { 'data.price': { $gt: 10, $lt: 30 } }, [2]],
          ['equality on a number does not match the same digits as a string', { 'data.price': 10 }, [1, 4]],
          ['equality on a string does not match the same digits as a number', { 'data.price': '10' }, [3]],
          ['$gte on a string matches strings only', { 'data.price': { $gte: '0' } }, [3]],
          ['$in compares like types only', { 'data.price': { $in: [25.5, '10'] } }, [2, 3]],
          ['true matches true only, not the number 1', { 'data.active': true }, [1]],
          ['false matches false only', { 'data.active': false }, [2]],
          ['the number 1 does not match true', { 'data.active': 1 }, [3]],
          ['$ne true keeps false, 1 and missing', { 'data.active': { $ne: true } }, [2, 3, 4, 5]],
          ['$has on a member array', { 'data.tags': { $has: 'x' } }, [1]],
          ['$has matches every array holding the value', { 'data.tags': { $has: 'y' } }, [1, 2]],
          ['a nested member', { 'data.meta.sku': 'D-1' }, [1]],
          ['$exists on a nested member (a path through a string is missing)', { 'data.meta.sku': { $exists: true } }, [1, 2, 4]],
          ['$gt on a nested member', { 'data.meta.sku': { $gt: 'E' } }, [2, 4]],
          ['a member no record has equals null everywhere', { 'data.missing': null }, [1, 2, 3, 4, 5]],
          ['null matches a null member and a missing one', { 'data.note': null }, [2, 3, 4, 5]],
          ['$exists true on a member treats null as absent', { 'data.note': { $exists: true } }, [1]],
          ['$exists false on a member', { 'data.title': { $exists: false } }, [5]],
          ['$exists true on the JSON column (an empty object counts)', { data: { $exists: true } }, [1, 2, 3, 4, 5]],
          ['$exists false on the JSON column', { data: { $exists: false } }, []],
          ['a column and a member together', { resourcePath: '/books', 'data.active': false }, [2]],
          ['$or over a column and a member', { $or: [{ resourcePath: '/empty' }, { 'data.price': { $gt: 20 } }] }, [2, 5]],
          ['$or over a nested member and a column', { $or: [{ 'data.meta.sku': 'J-4' }, { endpointId: 'e3' }] }, [4, 5]],
          ['$and over a date column and a member', { $and: [{ createdAt: { $lt: day(4) } }, { 'data.price': { $gte: 10 } }] }, [1, 2]],
          ['$or with sibling column fields', { endpointId: 'e1', $or: [{ 'data.title': 'Emma' }, { 'data.title': 'Heat' }] }, [2]],
          ['$in on _id leaves out an expired record', { _id: { $in: [id(2), id(6)] } }, [2]],
        ];
        for (const [description, filter, expectedIds] of cases) {
          it(`${description}: ${JSON.stringify(filter)}`, async () => {
            expect(ids(await records().find(filter))).toEqual(live(...expectedIds));
            expect(await records().count(filter)).toBe(expectedIds.length);
          });
        }

        it('search looks into columns and members of the JSON column', async () => {
          const search: Search = { term: 'FILM', fields: ['resourcePath', 'data.title'] };
          expect(ids(await records().find({}, { search }))).toEqual(live(3, 4));
          expect(await records().count({}, { term: 'dun', fields: ['resourcePath', 'data.title'] })).toBe(1);
          expect((await records().findPage({ endpointId: 'e1' }, { page: 1, limit: 10, search: { term: 'm', fields: ['data.title'] } })).total).toBe(1);
        });
      });

      describe('sorting and paging', () => {
        const sorts: Array<[string, Filter, SortSpec, number[]]> = [
          ['ascending by a date column', {}, { createdAt: 1 }, [2, 3, 1, 4, 5]],
          ['descending by a date column', {}, { createdAt: -1 }, [5, 4, 1, 3, 2]],
          ['by a column, ties broken by _id', {}, { resourcePath: 1 }, [1, 2, 5, 3, 4]],
          ['descending by a column, ties broken by ascending _id', {}, { endpointId: -1 }, [5, 3, 4, 1, 2]],
          ['by a column and then a date column descending', {}, { resourcePath: 1, createdAt: -1 }, [1, 2, 5, 4, 3]],
          ['ascending by a numeric member, missing first, ties by _id', { _id: { $ne: id(3) } }, { 'data.price': 1 }, [5, 1, 4, 2]],
          ['descending by a numeric member, missing last, ties by ascending _id', { _id: { $ne: id(3) } }, { 'data.price': -1 }, [2, 1, 4, 5]],
          ['by a string member', {}, { 'data.title': -1 }, [4, 3, 2, 1, 5]],
          ['by a nested member', { 'data.meta.sku': { $exists: true } }, { 'data.meta.sku': -1 }, [4, 2, 1]],
        ];
        for (const [description, filter, sort, expectedIds] of sorts) {
          it(`find sorts ${description}: ${JSON.stringify(sort)}`, async () => {
            expect(ids(await records().find(filter, { sort }))).toEqual(live(...expectedIds));
          });
        }

        it('skip and limit apply after sorting', async () => {
          expect(ids(await records().find({}, { sort: { createdAt: 1 }, skip: 1, limit: 2 }))).toEqual(live(3, 1));
          expect(ids(await records().find({ _id: { $ne: id(3) } }, { sort: { 'data.price': -1 }, limit: 2 }))).toEqual(live(2, 1));
          expect(ids(await records().find({ resourcePath: '/books' }, { skip: 1 }))).toEqual(live(2));
          expect(ids(await records().find({}, { skip: 5 }))).toEqual([]);
        });

        it('count and findPage totals count live records only', async () => {
          expect(await records().count({})).toBe(5);
          expect(await records().count({ resourcePath: '/books' })).toBe(2);
          expect(await records().count({ 'data.title': 'Dune' })).toBe(1);
          const page = await records().findPage({ resourcePath: { $ne: '/empty' } }, { page: 2, limit: 2, sort: { createdAt: 1 } });
          expect(page.total).toBe(4);
          expect(page.items).toStrictEqual([expected(1), expected(4)]);
          const byPrice = await records().findPage({ 'data.price': { $gte: 10 } }, { page: 1, limit: 1, sort: { 'data.price': -1 } });
          expect(byPrice).toStrictEqual({ items: [expected(2)], total: 3 });
        });
      });

      describe('field indexes (syncFieldIndexes)', () => {
        const price = { scope: '/books', field: 'data.price', kind: 'number', unique: false } as const;
        const sku = { scope: '/books', field: 'data.meta', kind: 'text', unique: true } as const;
        const title = { scope: '/films', field: 'data.title', kind: 'text', unique: true } as const;
        const sorted = (specs: unknown[]): string[] => specs.map((spec) => JSON.stringify(spec)).sort();
        beforeEach(async () => {
          await store.syncFieldIndexes('endpointdatas', []);
        });
        afterAll(async () => {
          await store.syncFieldIndexes('endpointdatas', []);
        });

        it('creates the wanted indexes, lists them, changes nothing when run again, and drops the others', async () => {
          await store.syncFieldIndexes('endpointdatas', [price, title]);
          expect(sorted(await store.listFieldIndexes('endpointdatas'))).toEqual(sorted([price, title]));
          await store.syncFieldIndexes('endpointdatas', [price, title]);
          expect(sorted(await store.listFieldIndexes('endpointdatas'))).toEqual(sorted([price, title]));
          await store.syncFieldIndexes('endpointdatas', [title]);
          expect(await store.listFieldIndexes('endpointdatas')).toEqual([title]);
        });

        it('keep creates without dropping; scopes leave the indexes of other scopes alone', async () => {
          await store.syncFieldIndexes('endpointdatas', [title]);
          await store.syncFieldIndexes('endpointdatas', [price], { keep: true });
          expect(sorted(await store.listFieldIndexes('endpointdatas'))).toEqual(sorted([price, title]));
          await store.syncFieldIndexes('endpointdatas', [], { scopes: ['/books'] });
          expect(await store.listFieldIndexes('endpointdatas')).toEqual([title]);
        });

        it('filters, sorts and counts give the same results with an index as without', async () => {
          const queries: Array<[Filter, SortSpec]> = [
            [{ resourcePath: '/books', 'data.price': { $gte: 10 } }, { createdAt: 1, _id: 1 }],
            [{ resourcePath: '/books', 'data.price': { $lt: 20 } }, { createdAt: -1, _id: -1 }],
            [{ resourcePath: '/books', 'data.price': 10 }, { createdAt: 1, _id: 1 }],
            [{ resourcePath: '/books', 'data.price': { $in: [10, 25.5] } }, { 'data.price': -1, createdAt: -1, _id: -1 }],
            [{ resourcePath: '/books' }, { 'data.price': 1, createdAt: 1, _id: 1 }],
            [{ resourcePath: '/films', 'data.price': { $gte: 5 } }, { createdAt: 1, _id: 1 }],
          ];
          const run = async (): Promise<unknown[]> => Promise.all(queries.map(async ([filter, sort]) => [await records().find(filter, { sort }), await records().count(filter)]));
          const without = await run();
          await store.syncFieldIndexes('endpointdatas', [price, { ...price, scope: '/films' }]);
          expect(await run()).toStrictEqual(without);
        });

        it('a unique index refuses a second record of its scope with the same value, on insert and update', async () => {
          await store.syncFieldIndexes('endpointdatas', [title]);
          const film = { endpointId: 'e2', resourcePath: '/films', expiresAt: null, createdAt: day(9), updatedAt: day(9) };
          const error = await records().insertOne({ ...film, data: { title: 'Jaws' } }).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(DuplicateKeyError);
          expect((error as DuplicateKeyError).fields).toEqual(['data.title']);
          // Another path, a record without the field and another value are no duplicates.
          await records().insertOne({ ...film, resourcePath: '/books', data: { title: 'Jaws' } });
          await records().insertOne({ ...film, data: {} });
          await records().insertOne({ ...film, data: {} });
          const other = await records().insertOne({ ...film, data: { title: 'Alien' } });
          await expect(records().updateOne({ _id: other._id }, { $set: { data: { title: 'Heat' } } })).rejects.toBeInstanceOf(DuplicateKeyError);
          expect(await records().count({ resourcePath: '/films', 'data.title': 'Heat' })).toBe(1);
        });

        it('a unique index over values already repeated is not created: DuplicateKeyError with the field and the value', async () => {
          await records().insertOne({ endpointId: 'e1', resourcePath: '/books', data: { meta: 'dup' }, expiresAt: null, createdAt: day(9), updatedAt: day(9) });
          await records().insertOne({ endpointId: 'e1', resourcePath: '/books', data: { meta: 'dup' }, expiresAt: null, createdAt: day(9), updatedAt: day(9) });
          const error = await store.syncFieldIndexes('endpointdatas', [price, sku]).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(DuplicateKeyError);
          expect(error).toMatchObject({ fields: ['data.meta'], value: 'dup', scope: '/books' });
          expect((await store.listFieldIndexes('endpointdatas')).some((spec) => spec.unique)).toBe(false);
        });

        it('countUpTo counts at most the cap', async () => {
          expect(await records().countUpTo({ resourcePath: '/books' }, 10)).toBe(2);
          expect(await records().countUpTo({}, 3)).toBe(3);
        });
      });

      describe('updating and deleting', () => {
        it('$set of a member changes only that member', async () => {
          const updated = await records().updateOne({ _id: id(1) }, { $set: { 'data.title': 'Dune Messiah', 'data.meta.year': 1969 } });
          const want = expected(1);
          want.data = { ...(want.data as object), title: 'Dune Messiah', meta: { sku: 'D-1', year: 1969 } };
          expect(updated).toStrictEqual(want);
          expect(await records().findById(id(1))).toStrictEqual(want);
          expect(ids(await records().find({ 'data.title': 'Dune Messiah' }))).toEqual(live(1));
          expect(ids(await records().find({ 'data.title': 'Dune' }))).toEqual([]);
          expect(ids(await records().find({ 'data.meta.year': { $gt: 1900 } }))).toEqual(live(1));
        });

        it('$set of the whole JSON column replaces it', async () => {
          const updated = await records().updateOne({ resourcePath: '/books', 'data.title': 'Emma' }, { $set: { data: { name: 'replaced', n: 1 }, updatedAt: day(9) } });
          const want = { ...expected(2), data: { name: 'replaced', n: 1 }, updatedAt: day(9).toISOString() };
          expect(updated).toStrictEqual(want);
          expect(await records().findById(id(2))).toStrictEqual(want);
          expect(ids(await records().find({ 'data.title': 'Emma' }))).toEqual([]);
          expect(ids(await records().find({ 'data.name': 'replaced', updatedAt: { $gt: day(8) } }))).toEqual(live(2));
        });

        it('$set of a column moves the record between filters and sort positions', async () => {
          const updated = await records().updateOne({ _id: id(3) }, { $set: { resourcePath: '/books', createdAt: day(10) } });
          expect(updated).toStrictEqual({ ...expected(3), resourcePath: '/books', createdAt: day(10).toISOString() });
          expect(ids(await records().find({ resourcePath: '/books' }, { sort: { createdAt: 1 } }))).toEqual(live(2, 1, 3));
          expect(await records().count({ resourcePath: '/films' })).toBe(1);
        });

        it('$unset of a member removes it and keeps its siblings', async () => {
          const updated = await records().updateOne({ _id: id(1) }, { $unset: ['data.tags', 'data.nothing'] });
          const { tags: _tags, ...data } = expected(1).data as Record<string, unknown>;
          expect(updated).toStrictEqual({ ...expected(1), data });
          expect(await records().findById(id(1))).toStrictEqual(updated);
          expect(ids(await records().find({ 'data.tags': { $exists: false } }))).toEqual(live(1, 5));
          expect(ids(await records().find({ 'data.tags': { $has: 'x' } }))).toEqual([]);
        });

        it('$inc of a numeric member adds to it and starts a missing one from 0', async () => {
          expect((await records().updateOne({ _id: id(1) }, { $inc: { 'data.price': 1 } }))?.data).toMatchObject({ price: 11 });
          expect((await records().updateOne({ _id: id(5) }, { $inc: { 'data.price': 2.5 } }))?.data).toStrictEqual({ price: 2.5 });
          expect(ids(await records().find({ 'data.price': 11 }))).toEqual(live(1));
          expect(ids(await records().find({ 'data.price': { $lt: 5 } }))).toEqual(live(5));
          expect(await records().findById(id(1))).toStrictEqual({ ...expected(1), data: { ...(expected(1).data as object), price: 11 } });
        });

        it('$unset of a column field leaves it missing; $set to null leaves it null', async () => {
          expect(await records().updateOne({ _id: id(2) }, { $unset: ['expiresAt', 'data'] })).not.toBeNull();
          const unset = await records().findById(id(2));
          expect(unset).not.toHaveProperty('expiresAt');
          expect(unset).not.toHaveProperty('data');
          const { expiresAt: _e, data: _d, ...rest } = expected(2);
          expect(unset).toStrictEqual(rest);

          await records().updateOne({ _id: id(3) }, { $set: { expiresAt: null, endpointId: null } });
          expect(await records().findById(id(3))).toStrictEqual({ ...expected(3), expiresAt: null, endpointId: null });
          expect(ids(await records().find({ endpointId: null }))).toEqual(live(3));
          expect(ids(await records().find({ data: { $exists: false } }))).toEqual(live(2));
        });

        it('$set of expiresAt into the past hides the record; into the future shows it', async () => {
          await records().updateOne({ _id: id(1) }, { $set: { expiresAt: past() } });
          expect(await records().findById(id(1))).toBeNull();
          expect(await records().count({ resourcePath: '/books' })).toBe(1);
          const later = future();
          const updated = await records().updateOne({ _id: id(4) }, { $set: { expiresAt: later } });
          expect(updated?.expiresAt).toBe(later.toISOString());
          expect(ids(await records().find({ expiresAt: { $exists: true } }))).toEqual(live(2, 4));
        });

        it('updateMany by a column filter updates every live match', async () => {
          expect(await records().updateMany({ resourcePath: '/books' }, { $set: { 'data.seen': true }, $inc: { 'data.views': 1 } })).toBe(2);
          expect(ids(await records().find({ 'data.seen': true, 'data.views': 1 }))).toEqual(live(1, 2));
          expect((await records().findById(id(2)))?.data).toStrictEqual({ ...(expected(2).data as object), seen: true, views: 1 });
        });

        it('an upsert creates a record from column and member equalities', async () => {
          const doc = await records().updateOne({ resourcePath: '/new', 'data.slug': 's' }, { $set: { createdAt: day(9), expiresAt: null } }, { upsert: true });
          expect(doc).toStrictEqual({ _id: expect.stringMatching(HEX_ID), resourcePath: '/new', data: { slug: 's' }, createdAt: day(9).toISOString(), expiresAt: null });
          expect(await records().findById(doc?._id as string)).toStrictEqual(doc);
          expect(ids(await records().find({ 'data.slug': 's' }))).toEqual([doc?._id]);
        });

        it('deleteOne by a column filter removes and returns the first live match', async () => {
          expect(await records().deleteOne({ resourcePath: '/films' })).toStrictEqual(expected(3));
          expect(await records().deleteOne({ 'data.tags': { $has: 'y' } })).toStrictEqual(expected(1));
          expect(await records().deleteOne({ 'data.title': 'Nope' })).toBeNull();
          expect(ids(await records().find({}))).toEqual(live(2, 4, 5));
        });

        it('deleteMany by column and member filters counts only live matches', async () => {
          expect(await records().deleteMany({ createdAt: { $lt: day(3) } })).toBe(2);
          expect(ids(await records().find({}))).toEqual(live(1, 4, 5));
          expect(await records().deleteMany({ 'data.price': { $gte: 10 }, resourcePath: { $in: ['/books', '/films'] } })).toBe(2);
          expect(await records().find({})).toStrictEqual([expected(5)]);
        });
      });

      describe('expiry', () => {
        it('an expired record is returned by no read', async () => {
          expect(await records().findById(id(6))).toBeNull();
          expect(await records().findOne({ _id: id(6) })).toBeNull();
          expect(ids(await records().find({ resourcePath: '/books' }))).toEqual(live(1, 2));
          expect(ids(await records().find({ 'data.title': 'Dune' }))).toEqual(live(1));
          expect(await records().count({ endpointId: 'e1' })).toBe(2);
          expect(await records().findJsonById(id(6), VIEW)).toBeNull();
          expect((await records().findJson({ resourcePath: '/books' }, {}, VIEW)).map((row) => row.fields._id)).toEqual(live(1, 2));
          expect(await records().findJson({ _id: id(6) }, {}, VIEW)).toEqual([]);
          expect((await records().findPage({ resourcePath: '/books' }, { page: 1, limit: 10 })).total).toBe(2);
        });

        it('a page read again after a record expired leaves it out, and one read after a write has it', async () => {
          const page = { sort: { createdAt: 1, _id: 1 } as const, skip: 0, limit: 10 };
          const before = (await records().findJson({ resourcePath: '/books' }, page, VIEW)).map((row) => row.fields._id);
          expect([...before].sort()).toEqual(live(1, 2));
          const soon = await records().insertOne({ resourcePath: '/books', data: { title: 'Soon gone' }, createdAt: new Date(), expiresAt: new Date(Date.now() + 300) });
          expect((await records().findJson({ resourcePath: '/books' }, page, VIEW)).map((row) => row.fields._id)).toEqual([...before, soon._id]);
          await new Promise((resolve) => setTimeout(resolve, 400));
          expect((await records().findJson({ resourcePath: '/books' }, page, VIEW)).map((row) => row.fields._id)).toEqual(before);
        });

        it('sweepExpired removes the expired record and leaves the live ones', async () => {
          expect(await store.sweepExpired()).toBe(1);
          expect(await records().count({})).toBe(5);
          expect(await records().find({})).toStrictEqual([1, 2, 3, 4, 5].map(expected));
        });
      });

      describe('findJson and findJsonById', () => {
        it('findJson gives {_id, ...data, createdAt, updatedAt} and expiresAt only when set', async () => {
          const rows = await records().findJson({}, {}, VIEW);
          expect(rows.map((row) => JSON.parse(row.json) as unknown)).toStrictEqual([1, 2, 3, 4, 5].map((n) => shown(expected(n))));
          const [first, second, third] = rows.map((row) => JSON.parse(row.json) as Record<string, unknown>);
          expect(first).toStrictEqual({
            _id: id(1),
            title: 'Dune',
            price: 10,
            active: true,
            tags: ['x', 'y'],
            meta: { sku: 'D-1' },
            note: 'n',
            createdAt: day(3).toISOString(),
            updatedAt: day(3).toISOString(),
          });
          expect(first).not.toHaveProperty('expiresAt');
          expect(second?.expiresAt).toBe(expected(2).expiresAt);
          expect(second?.note).toBeNull(); // a null member of data is shown as null
          expect(third).not.toHaveProperty('expiresAt');
        });

        it('findJson keeps the order _id, data members, tail fields', async () => {
          const rows = await records().findJson({ _id: { $in: [id(1), id(2)] } }, {}, VIEW);
          expect(rows.map((row) => Object.keys(JSON.parse(row.json) as object))).toEqual([
            ['_id', 'title', 'price', 'active', 'tags', 'meta', 'note', 'createdAt', 'updatedAt'],
            ['_id', 'title', 'price', 'active', 'tags', 'meta', 'note', 'createdAt', 'updatedAt', 'expiresAt'],
          ]);
        });

        it('findJson rows carry _id and the fields the view names (null when missing), beside the text', async () => {
          const plain = await records().findJson({}, {}, VIEW);
          expect(plain.map((row) => row.fields)).toStrictEqual([1, 2, 3, 4, 5].map((n) => ({ _id: id(n) })));
          const rows = await records().findJson({}, {}, WITH_FIELDS);
          expect(rows.map((row) => row.fields)).toStrictEqual([1, 2, 3, 4, 5].map((n) => fieldsOf(expected(n))));
          expect(rows[0]?.fields).toStrictEqual({ _id: id(1), resourcePath: '/books', endpointId: 'e1', expiresAt: null });
          expect(rows[1]?.fields.expiresAt).toBe(expected(2).expiresAt);
          expect(rows[2]?.fields).toStrictEqual({ _id: id(3), resourcePath: '/films', endpointId: 'e2', expiresAt: null }); // missing reads as null
          // The fields beside the text do not change the text.
          expect(rows.map((row) => row.json)).toEqual(plain.map((row) => row.json));
        });

        it('findJson respects filter, sort, skip and limit', async () => {
          const rows = await records().findJson({ resourcePath: { $ne: '/empty' } }, { sort: { createdAt: -1 }, skip: 1, limit: 2 }, VIEW);
          expect(rows.map((row) => JSON.parse(row.json) as unknown)).toStrictEqual([shown(expected(1)), shown(expected(3))]);
          const byPrice = await records().findJson({ 'data.price': { $gte: 10 } }, { sort: { 'data.price': -1 } }, VIEW);
          expect(byPrice.map((row) => row.fields._id)).toEqual(live(2, 1, 4));
          const searched = await records().findJson({}, { search: { term: 'jaw', fields: ['data.title'] } }, VIEW);
          expect(searched.map((row) => row.fields._id)).toEqual(live(4));
          expect(await records().findJson({ 'data.title': 'Nope' }, {}, VIEW)).toEqual([]);
        });

        it('an empty or missing data gives just {_id, createdAt, updatedAt}', async () => {
          const [row] = await records().findJson({ resourcePath: '/empty' }, {}, VIEW);
          expect(JSON.parse(row?.json ?? 'null')).toStrictEqual({ _id: id(5), createdAt: day(5).toISOString(), updatedAt: day(6).toISOString() });
          const bare = await records().insertOne({ resourcePath: '/bare', createdAt: day(1), updatedAt: day(2) });
          const bareRow = await records().findJsonById(bare._id, VIEW);
          expect(JSON.parse(bareRow?.json ?? 'null')).toStrictEqual({ _id: bare._id, createdAt: day(1).toISOString(), updatedAt: day(2).toISOString() });
          expect((await records().findJsonById(bare._id, WITH_FIELDS))?.fields).toStrictEqual({ _id: bare._id, resourcePath: '/bare', endpointId: null, expiresAt: null });
          const nulled = await records().insertOne({ resourcePath: '/null', data: null, createdAt: day(3), updatedAt: null, expiresAt: null });
          const nulledRow = await records().findJsonById(nulled._id, { ...VIEW, fields: ['resourcePath', 'updatedAt', 'expiresAt'] });
          expect(JSON.parse(nulledRow?.json ?? 'null')).toStrictEqual({ _id: nulled._id, createdAt: day(3).toISOString() });
          expect(nulledRow?.fields).toStrictEqual({ _id: nulled._id, resourcePath: '/null', updatedAt: null, expiresAt: null });
        });

        it('findJson reflects updates to members and columns', async () => {
          await records().updateOne({ _id: id(4) }, { $set: { 'data.title': 'Jaws 2', updatedAt: day(20) }, $unset: ['data.tags'] });
          const row = await records().findJsonById(id(4), { ...VIEW, fields: ['updatedAt', 'resourcePath'] });
          expect(JSON.parse(row?.json ?? 'null')).toStrictEqual({
            _id: id(4),
            title: 'Jaws 2',
            price: 10,
            meta: { sku: 'J-4' },
            createdAt: day(4).toISOString(),
            updatedAt: day(20).toISOString(),
          });
          expect(row?.fields).toStrictEqual({ _id: id(4), updatedAt: day(20).toISOString(), resourcePath: '/films' });
        });

        it('findJsonById gives the same row as findJson, null for an unknown or expired id', async () => {
          const all = await records().findJson({}, {}, WITH_FIELDS);
          for (const [index, n] of [1, 2, 3, 4, 5].entries()) {
            const row = await records().findJsonById(id(n), WITH_FIELDS);
            expect(row).not.toBeNull();
            expect(JSON.parse(row?.json ?? 'null')).toStrictEqual(JSON.parse(all[index]?.json ?? 'null'));
            expect(row?.fields).toStrictEqual(all[index]?.fields);
          }
          expect(await records().findJsonById(id(99), WITH_FIELDS)).toBeNull();
          expect(await records().findJsonById(id(6), WITH_FIELDS)).toBeNull();
          expect(await records().findJsonById(id(6), VIEW)).toBeNull();
        });

        it('a view naming fields outside the columns gives the same shape', async () => {
          const view: JsonView = { spread: 'data', tail: ['resourcePath', 'nope', 'createdAt'], fields: ['endpointId', 'nope', 'expiresAt'] };
          await records().updateOne({ _id: id(1) }, { $set: { nope: 'here' } });
          const rows = await records().findJson({ resourcePath: '/books' }, {}, view);
          expect(rows.map((row) => JSON.parse(row.json) as unknown)).toStrictEqual([
            { _id: id(1), ...(expected(1).data as object), resourcePath: '/books', nope: 'here', createdAt: day(3).toISOString() },
            { _id: id(2), ...(expected(2).data as object), resourcePath: '/books', createdAt: day(1).toISOString() },
          ]);
          expect(rows.map((row) => row.fields)).toStrictEqual([
            { _id: id(1), endpointId: 'e1', nope: 'here', expiresAt: null },
            { _id: id(2), endpointId: 'e1', nope: null, expiresAt: expected(2).expiresAt },
          ]);
          const byId = await records().findJsonById(id(2), view);
          expect(JSON.parse(byId?.json ?? 'null')).toStrictEqual(JSON.parse(rows[1]?.json ?? ''));
          expect(byId?.fields).toStrictEqual(rows[1]?.fields);
          // A tail field outside the columns with a fields list served from columns, and the reverse.
          const mixed = await records().findJson({ _id: id(1) }, {}, { spread: 'data', tail: ['nope'], fields: ['resourcePath'] });
          expect(mixed.map((row) => [JSON.parse(row.json) as unknown, row.fields])).toStrictEqual([
            [{ _id: id(1), ...(expected(1).data as object), nope: 'here' }, { _id: id(1), resourcePath: '/books' }],
          ]);
          const other = await records().findJson({ _id: id(1) }, {}, { ...VIEW, fields: ['nope', 'data'] });
          expect(other.map((row) => [JSON.parse(row.json) as unknown, row.fields])).toStrictEqual([
            [shown(expected(1)), { _id: id(1), nope: 'here', data: expected(1).data }],
          ]);
        });

        it('on a collection without a JSON column (logs) findJson and findJsonById give the same shapes', async () => {
          const view: JsonView = { spread: 'body', tail: ['action', 'createdAt', 'note', 'absent'], fields: ['user', 'note', 'action'] };
          const when = new Date('2024-04-05T06:07:08.009Z');
          await logs().insertMany([
            { _id: id(21), action: 'create', createdAt: when, user: 'ann', note: null, body: { a: 1, nested: { b: [1, 'two', null] }, at: when } },
            { _id: id(22), action: 'delete', user: 'bob', note: 'gone', body: 'not an object' },
            { _id: id(23), user: 'cid', body: {} },
            { _id: id(24), action: 'read', createdAt: when },
          ]);
          const rows = await logs().findJson({}, { sort: { _id: 1 } }, view);
          expect(rows.map((row) => JSON.parse(row.json) as unknown)).toStrictEqual([
            { _id: id(21), a: 1, nested: { b: [1, 'two', null] }, at: when.toISOString(), action: 'create', createdAt: when.toISOString() },
            { _id: id(22), action: 'delete', note: 'gone' },
            { _id: id(23) },
            { _id: id(24), action: 'read', createdAt: when.toISOString() },
          ]);
          expect(rows.map((row) => row.fields)).toStrictEqual([
            { _id: id(21), user: 'ann', note: null, action: 'create' },
            { _id: id(22), user: 'bob', note: 'gone', action: 'delete' },
            { _id: id(23), user: 'cid', note: null, action: null },
            { _id: id(24), user: null, note: null, action: 'read' },
          ]);
          expect(Object.keys(JSON.parse(rows[0]?.json ?? '{}') as object)).toEqual(['_id', 'a', 'nested', 'at', 'action', 'createdAt']);
          const filtered = await logs().findJson({ action: { $in: ['create', 'read'] } }, { sort: { _id: -1 }, limit: 1 }, view);
          expect(filtered.map((row) => row.fields._id)).toEqual([id(24)]);
          const byId = await logs().findJsonById(id(21), view);
          expect(byId?.json && JSON.parse(byId.json)).toStrictEqual(JSON.parse(rows[0]?.json ?? ''));
          expect(byId?.fields).toStrictEqual(rows[0]?.fields);
          expect(await logs().findJsonById(id(99), view)).toBeNull();
        });

        it('on a TTL collection without columns (sessions) findJson and findJsonById leave out expired documents', async () => {
          const sessions = store.collection('sessions');
          const view: JsonView = { spread: 'payload', tail: ['expiresAt'], fields: ['tokenHash', 'expiresAt'] };
          const later = future();
          await sessions.insertMany([
            { _id: id(31), tokenHash: 'a', payload: { user: 'ann' }, expiresAt: past() },
            { _id: id(32), tokenHash: 'b', payload: { user: 'bob' }, expiresAt: later },
            { _id: id(33), tokenHash: 'c', payload: { user: 'cid' }, expiresAt: null },
          ]);
          const rows = await sessions.findJson({}, {}, view);
          expect(rows.map((row) => JSON.parse(row.json) as unknown)).toStrictEqual([
            { _id: id(32), user: 'bob', expiresAt: later.toISOString() },
            { _id: id(33), user: 'cid' },
          ]);
          expect(rows.map((row) => row.fields)).toStrictEqual([
            { _id: id(32), tokenHash: 'b', expiresAt: later.toISOString() },
            { _id: id(33), tokenHash: 'c', expiresAt: null },
          ]);
          expect(await sessions.findJsonById(id(31), view)).toBeNull();
          expect(JSON.parse((await sessions.findJsonById(id(33), view))?.json ?? 'null')).toStrictEqual({ _id: id(33), user: 'cid' });
        });
      });
    });

    describe('any JSON keys in a value (json fields)', () => {
      // `$`-prefixed, dotted, NUL-holding and `__proto__` keys, and the MongoDB adapter's own
      // wrapper key, come back as they went in: as data, never as operators or prototypes.
      const records = (): Collection => store.collection('endpointdatas');
      const VIEW: JsonView = { spread: 'data', tail: [] };
      const odd = (): Record<string, unknown> =>
        JSON.parse('{"$set":{"a.b":1,"$inc":{"n":[{"$x":null}]}},"__proto__":{"polluted":true},"constructor":{"prototype":{"y":2}},"a.b":"dot","nul\\u0000key":1,"__dynEntries":[["k",1]],"plain":{"ok":true}}') as Record<string, unknown>;
      const text = (value: unknown): string => JSON.stringify(value);

      it('insertOne, findById, find and findJson give the value back equal, on every read path', async () => {
        const value = odd();
        const inserted = await records().insertOne({ _id: id(1), resourcePath: '/odd', data: { meta: value, list: [value] } });
        expect(text(inserted.data)).toBe(text({ meta: value, list: [value] }));
        expect(text((await records().findById(id(1)))?.data)).toBe(text({ meta: value, list: [value] }));
        expect(text((await records().find({ resourcePath: '/odd' }))[0]?.data)).toBe(text({ meta: value, list: [value] }));
        expect((await records().findJsonById(id(1), VIEW))?.json).toBe(text({ _id: id(1), meta: value, list: [value] }));
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        const read = (await records().findById(id(1)))?.data as { meta: object };
        expect(Object.getPrototypeOf(read.meta)).toBe(Object.prototype);
        expect(Object.keys(read.meta)).toContain('__proto__');
      });

      it('updateOne with $set of a whole value stores it as is', async () => {
        await records().insertOne({ _id: id(2), resourcePath: '/odd', data: { meta: 1 } });
        const updated = await records().updateOne({ _id: id(2) }, { $set: { data: { meta: odd() } } });
        expect(text(updated?.data)).toBe(text({ meta: odd() }));
        expect(text((await records().findById(id(2)))?.data)).toBe(text({ meta: odd() }));
      });

      it('filters on ordinary fields beside such values keep working', async () => {
        await records().insertOne({ _id: id(3), resourcePath: '/odd', data: { meta: odd(), plain: { color: 'red' } } });
        expect((await records().find({ 'data.plain.color': 'red' })).map((d) => d._id)).toEqual([id(3)]);
        expect((await records().find({ 'data.meta': { $exists: true } })).map((d) => d._id)).toEqual([id(3)]);
      });
    });

    describe('counters changed with an insert or delete', () => {
      const counter = (inc: number, set?: Record<string, unknown>) => ({ collection: 'recordcounts', key: { resourcePath: '/c' }, inc: { count: inc }, ...(set ? { set } : {}) });
      const count = async () => (await store.collection('recordcounts').findOne({ resourcePath: '/c' }))?.count;

      it('insertOne with a counter creates the counter and then increments it', async () => {
        const records = store.collection('endpointdatas');
        await records.insertOne({ resourcePath: '/c', data: {} }, { counter: counter(1) });
        expect(await count()).toBe(1);
        await records.insertOne({ resourcePath: '/c', data: {} }, { counter: counter(1, { expiring: true }) });
        expect(await count()).toBe(2);
        expect((await store.collection('recordcounts').findOne({ resourcePath: '/c' }))?.expiring).toBe(true);
      });

      it('deleteOne changes the counter only when it deleted something', async () => {
        const records = store.collection('endpointdatas');
        const doc = await records.insertOne({ resourcePath: '/c', data: {} }, { counter: counter(1) });
        expect(await records.deleteOne({ _id: doc._id }, { counter: counter(-1) })).not.toBeNull();
        expect(await count()).toBe(0);
        expect(await records.deleteOne({ _id: doc._id }, { counter: counter(-1) })).toBeNull();
        expect(await count()).toBe(0);
      });

      it('a failed insert leaves the counter unchanged', async () => {
        const users = store.collection('users');
        await users.insertOne({ loginKey: 'dup' }, { counter: counter(1) });
        await expect(users.insertOne({ loginKey: 'dup' }, { counter: counter(1) })).rejects.toThrow(DuplicateKeyError);
        expect(await count()).toBe(1);
      });
    });

    describe('write batches (applyBatch)', () => {
      const seed = async () => {
        const endpoints = store.collection('endpoints');
        const records = store.collection('endpointdatas');
        const definition = await endpoints.insertOne({ path: '/old', method: 'GET', updatedAt: past() });
        const own = await records.insertMany([1, 2, 3].map((n) => ({ resourcePath: '/old', endpointId: definition._id, data: { n } })));
        return { endpoints, records, definition, own };
      };
      const moveTo = (definitionId: string, own: Doc[], path: string, method = 'GET') => ({
        writes: [
          { collection: 'endpoints', filter: { _id: definitionId }, update: { $set: { path, method, updatedAt: new Date() } } },
          ...own.map((r) => ({ collection: 'endpointdatas', filter: { _id: r._id }, update: { $set: { resourcePath: path } } })),
        ],
        recounts: ['/old', path].map((resourcePath) => ({ collection: 'recordcounts', key: { resourcePath }, field: 'count', of: { collection: 'endpointdatas', filter: { resourcePath } } })),
      });

      it('applies every write, then sets each counter to the count after them', async () => {
        const { endpoints, records, definition, own } = await seed();
        await records.insertOne({ resourcePath: '/old', endpointId: 'someone-else', data: {} });
        expect(await store.applyBatch(moveTo(definition._id, own, '/new'))).toBe(true);
        expect((await endpoints.findById(definition._id))?.path).toBe('/new');
        expect((await endpoints.findById(definition._id))?.updatedAt).toMatch(ISO_DATE);
        expect(await records.count({ resourcePath: '/new' })).toBe(3);
        expect(await records.count({ resourcePath: '/old' })).toBe(1);
        const counts = await store.collection('recordcounts').find({}, { sort: { resourcePath: 1 } });
        expect(counts.map((c) => [c.resourcePath, c.count])).toEqual([['/new', 3], ['/old', 1]]);
        expect(await store.finishPendingBatches()).toBe(0);
      });

      it('writes nothing and answers false when the anchor (first write) matches no document', async () => {
        const { records, own } = await seed();
        expect(await store.applyBatch(moveTo(id(999), own, '/new'))).toBe(false);
        expect(await records.count({ resourcePath: '/old' })).toBe(3);
        expect(await store.collection('recordcounts').count({})).toBe(0);
        expect(await store.finishPendingBatches()).toBe(0);
      });

      it('writes nothing when the anchor breaks a unique index', async () => {
        const { endpoints, records, definition, own } = await seed();
        await endpoints.insertOne({ path: '/taken', method: 'GET' });
        await expect(store.applyBatch(moveTo(definition._id, own, '/taken'))).rejects.toThrow(DuplicateKeyError);
        expect((await endpoints.findById(definition._id))?.path).toBe('/old');
        expect(await records.count({ resourcePath: '/old' })).toBe(3);
        expect(await store.finishPendingBatches()).toBe(0);
      });

      it('refuses $inc (a replayed batch must change nothing twice)', async () => {
        const { definition } = await seed();
        const batch = { writes: [{ collection: 'endpoints', filter: { _id: definition._id }, update: { $inc: { revision: 1 } } as Update }] };
        await expect(store.applyBatch(batch)).rejects.toThrow();
      });
    });

    it('collection() returns a collection with the given name', () => {
      expect(store.collection('users').name).toBe('users');
    });

    it('collection() of an unknown name throws', () => {
      expect(() => store.collection('nope')).toThrow(/nope/);
    });
  });

  describe(`${label} store after close()`, () => {
    it('every collection operation rejects once the store is closed', async () => {
      const { store, cleanup } = await open();
      try {
        const users = store.collection('users');
        const doc = await users.insertOne({ loginKey: 'before-close' });
        await store.close();
        const operations: Array<[string, () => Promise<unknown>]> = [
          ['insertOne', () => users.insertOne({ loginKey: 'after' })],
          ['insertMany', () => users.insertMany([{ loginKey: 'after' }])],
          ['findById', () => users.findById(doc._id)],
          ['findOne', () => users.findOne({})],
          ['find', () => users.find({})],
          ['findPage', () => users.findPage({}, { page: 1, limit: 1 })],
          ['count', () => users.count({})],
          ['updateOne', () => users.updateOne({}, { $set: { a: 1 } })],
          ['updateMany', () => users.updateMany({}, { $set: { a: 1 } })],
          ['deleteOne', () => users.deleteOne({})],
          ['deleteMany', () => users.deleteMany({})],
          ['a collection obtained after close', () => store.collection('logs').find({})],
        ];
        for (const [name, operation] of operations) {
          await expect(operation(), name).rejects.toThrow();
        }
      } finally {
        await cleanup();
      }
    });

    it('close() can be called more than once', async () => {
      const { store, cleanup } = await open();
      try {
        await store.close();
        await expect(store.close()).resolves.toBeUndefined();
      } finally {
        await cleanup();
      }
    });
  });
}
