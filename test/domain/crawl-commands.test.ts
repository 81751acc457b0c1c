import { describe, expect, it } from 'vitest';
import {
  COMMANDS_PER_TASK,
  type CrawlCommand,
  chainsByTarget,
  chunkCommands,
  commandBytes,
  MAX_COMMANDS_PER_TASK,
  SIGNAL_BYTES,
  TASK_PAYLOAD_BYTES,
} from '../../domain/crawl-commands';

const finish = (target: string): CrawlCommand => ({ kind: 'finish', target });
const start = (target: string): CrawlCommand => ({
  kind: 'start',
  target,
  origin: target,
  items: [{ url: `${target}/`, depth: 0 }],
  startPaused: false,
  initialQuota: 0,
});

describe('commandBytes', () => {
  it('counts the spec in a start, the items in a batch and a flat size for other signals', () => {
    const items = [{ url: 'http://a.test/x', depth: 1 }];
    expect(commandBytes(start('http://a.test'), 5000)).toBe(
      5000 + JSON.stringify([{ url: 'http://a.test/', depth: 0 }]).length,
    );
    expect(commandBytes({ kind: 'enqueue', target: 't', seq: 1, items }, 5000)).toBe(
      JSON.stringify(items).length,
    );
    expect(commandBytes({ kind: 'quota', target: 't', granted: 3, exhausted: false }, 5000)).toBe(
      SIGNAL_BYTES,
    );
  });
});

describe('chunkCommands', () => {
  it('cuts fixed chunks of COMMANDS_PER_TASK unpacked', () => {
    const commands = Array.from({ length: 40 }, (_, i) => finish(`o${i}`));
    expect(chunkCommands(commands, false, 0).map((chunk) => chunk.length)).toEqual([
      COMMANDS_PER_TASK,
      COMMANDS_PER_TASK,
      40 - 2 * COMMANDS_PER_TASK,
    ]);
  });

  it('packs up to MAX_COMMANDS_PER_TASK small commands into one task', () => {
    const commands = Array.from({ length: 300 }, (_, i) => finish(`o${i}`));
    expect(chunkCommands(commands, true, 0).map((chunk) => chunk.length)).toEqual([
      MAX_COMMANDS_PER_TASK,
      MAX_COMMANDS_PER_TASK,
      300 - 2 * MAX_COMMANDS_PER_TASK,
    ]);
  });

  it('closes a packed task before its payload passes TASK_PAYLOAD_BYTES (starts carry the spec)', () => {
    const specBytes = 300_000;
    const commands = Array.from({ length: 7 }, (_, i) => start(`o${i}`));
    const chunks = chunkCommands(commands, true, specBytes);
    expect(chunks.map((chunk) => chunk.length)).toEqual([3, 3, 1]);
    for (const chunk of chunks) {
      const bytes = chunk.reduce((sum, command) => sum + commandBytes(command, specBytes), 0);
      expect(bytes).toBeLessThanOrEqual(TASK_PAYLOAD_BYTES);
    }
  });

  it('still sends a single command larger than the limit, alone', () => {
    expect(chunkCommands([start('a'), start('b')], true, 2 * TASK_PAYLOAD_BYTES)).toHaveLength(2);
  });

  it('keeps every command, in order', () => {
    const commands = Array.from({ length: 50 }, (_, i) => finish(`o${i % 7}`));
    expect(chunkCommands(commands, false, 0).flat()).toEqual(commands);
    expect(chunkCommands(commands, true, 0).flat()).toEqual(commands);
  });
});

describe('chainsByTarget', () => {
  it("groups a task's commands per origin, each chain in the order routed, chains in first-seen order", () => {
    const enqueue = (target: string, seq: number): CrawlCommand => ({
      kind: 'enqueue',
      target,
      seq,
      items: [],
    });
    const chains = chainsByTarget([
      enqueue('b', 1),
      enqueue('a', 1),
      enqueue('b', 2),
      finish('a'),
      enqueue('b', 3),
    ]);
    expect(chains).toEqual([
      [enqueue('b', 1), enqueue('b', 2), enqueue('b', 3)],
      [enqueue('a', 1), finish('a')],
    ]);
  });
});
