/** Counts live processes by process group, from /proc: the evidence that no browser leaked. */
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of live (non-zombie) processes whose process group is one of `groups`. */
export function processesInGroups(groups: readonly number[]): number[] {
  const wanted = new Set(groups);
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the parenthesised command: state, ppid, pgrp, ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') continue;
    if (wanted.has(Number(fields[2]))) found.push(Number(name));
  }
  return found;
}

/** Pids of browser watchdogs (see activities/render/process-watchdog.ts) watching one of `groups`. */
export function watchdogsFor(groups: readonly number[]): number[] {
  const wanted = new Set(groups.map(String));
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const at = args.indexOf('gleaner-browser-watchdog');
    if (at >= 0 && wanted.has(args[at + 2] ?? '')) found.push(Number(name));
  }
  return found;
}

/** Waits until no process of `groups` and no watchdog of them is left; returns what is left at the deadline. */
export async function waitForNoProcesses(groups: readonly number[], timeoutMs: number): Promise<number[]> {
  const started = Date.now();
  for (;;) {
    const left = [...processesInGroups(groups), ...watchdogsFor(groups)];
    if (left.length === 0 || Date.now() - started > timeoutMs) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
