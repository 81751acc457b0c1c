/**
 * The commands the crawl's state transitions call for (`crawl-state.ts`), as plain data, and how
 * they are grouped into workflow tasks: `workflows/crawl-effects.ts` turns each into a child start or
 * a signal. No I/O.
 */
import type { ControlCommand } from './crawl-messages';
import type { FrontierItem } from './frontier';
import { packByBudget } from './pack-by-budget';

/** A command to one origin's workflow (`target`, its workflow id). */
export type CrawlCommand =
  | {
      kind: 'start';
      target: string;
      origin: string;
      /** The origin's first batch. */
      items: FrontierItem[];
      startPaused: boolean;
      /** Pages of quota granted with the start (0: the origin asks before its first fetch). */
      initialQuota: number;
      /** The crawl's first origin (`crawl-opening-batch-v1`): its first page batch is small. */
      opening?: true;
      /** Its first request waits this long after the start (`crawl-start-stagger-v1`). */
      startAfterMs?: number;
    }
  | { kind: 'enqueue'; target: string; seq: number; items: FrontierItem[] }
  | { kind: 'quota'; target: string; granted: number; exhausted: boolean }
  | { kind: 'control'; target: string; action: ControlCommand['action']; reason?: string }
  | { kind: 'finish'; target: string };

/**
 * Commands per workflow task at most, unpacked. A child's start carries the whole crawl spec (seeds
 * and host lists included: ~80 KB for 1,000 seeds), and a task's completion must stay well under
 * Temporal's 4 MB request limit.
 */
export const COMMANDS_PER_TASK = 16;
/**
 * Packed (`crawl-quota-first-v1`), a task's commands are bounded by their payload instead: up to this
 * many bytes (a quarter of the 4 MB limit) and MAX_COMMANDS_PER_TASK commands. Every task costs a
 * round trip through the server (a child start resolves when the child has started), and with 1,000
 * small origins the crawl spent its time on those round trips while origins waited for their quota.
 */
export const TASK_PAYLOAD_BYTES = 1_000_000;
export const MAX_COMMANDS_PER_TASK = 128;
/** A signal's payload besides its items: a grant, a finish, a seq number. */
export const SIGNAL_BYTES = 200;

/** About how many bytes of payload a command carries: a start carries the spec (`specBytes`) too. */
export function commandBytes(command: CrawlCommand, specBytes: number): number {
  if (command.kind === 'start') return specBytes + JSON.stringify(command.items).length;
  if (command.kind === 'enqueue') return JSON.stringify(command.items).length;
  return SIGNAL_BYTES;
}

/** Commands split into workflow tasks: fixed chunks of COMMANDS_PER_TASK, or packed by payload. */
export function chunkCommands(
  commands: readonly CrawlCommand[],
  packed: boolean,
  specBytes: number,
): CrawlCommand[][] {
  return packByBudget(commands, {
    maxCount: packed ? MAX_COMMANDS_PER_TASK : COMMANDS_PER_TASK,
    maxCost: packed ? TASK_PAYLOAD_BYTES : Number.POSITIVE_INFINITY,
    cost: (command) => commandBytes(command, specBytes),
  });
}

/**
 * A task's commands as one chain per target, in first-seen order: chains run side by side, each
 * one command after another, so every origin sees its batches in the order they were routed.
 */
export function chainsByTarget(chunk: readonly CrawlCommand[]): CrawlCommand[][] {
  const chains = new Map<string, CrawlCommand[]>();
  for (const command of chunk) {
    const chain = chains.get(command.target);
    if (chain) chain.push(command);
    else chains.set(command.target, [command]);
  }
  return [...chains.values()];
}
