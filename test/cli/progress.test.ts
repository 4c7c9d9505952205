import { describe, expect, it } from 'vitest';
import { plainProgress, renderProgress, startProgress } from '../../src/cli/progress.ts';

describe('progress', () => {
  it('draws a bar from records when their total is known, else from bytes', () => {
    expect(renderProgress('importing', { bytes: 5 * 1024 * 1024, totalBytes: 20 * 1024 * 1024, records: 250_000, totalRecords: 1_000_000 })).toBe(
      'importing [######------------------]  25%  5.0 MB / 20.0 MB  250,000 / 1,000,000 records',
    );
    expect(renderProgress('sending', { bytes: 10 * 1024, totalBytes: 20 * 1024 })).toBe('sending [############------------]  50%  10.0 KB / 20.0 KB');
    expect(renderProgress('exporting', { bytes: 2048, records: 12 })).toBe('exporting  2.0 KB  12 records');
    expect(renderProgress('importing', { bytes: 1, totalBytes: 2 }, 20)).toHaveLength(20);
  });

  it('writes plain lines at most every ten seconds when stderr is not a terminal, and nothing when disabled', () => {
    let clock = 0;
    const written: string[] = [];
    const stream = { isTTY: false, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    const progress = startProgress({ label: 'importing', stream, enabled: true, now: () => clock });
    progress.update({ bytes: 1024, totalBytes: 4096, records: 10 });
    clock = 10_000;
    progress.update({ bytes: 2048 });
    clock = 15_000;
    progress.update({ bytes: 3072 });
    progress.done();
    expect(written).toEqual(['importing: 50%, 2.0 KB of 4.0 KB, 10 records\n']);
    expect(plainProgress('exporting', { bytes: 0 })).toBe('exporting: 0 B');

    const quiet = startProgress({ label: 'x', stream, enabled: false });
    quiet.update({ bytes: 1 });
    quiet.done();
    expect(written).toHaveLength(1);
  });
});
