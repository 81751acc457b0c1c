/**
 * CPU time and peak memory of processes, read from Linux /proc. A process tree's CPU counts every
 * live member's own time plus the time of children it has already reaped (cutime/cstime), so a
 * Postgres backend that exited, or the Temporal server reaped by the gleaner process, is not lost.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const TICKS_PER_SECOND = 100;
const MS_PER_TICK = 1000 / TICKS_PER_SECOND;

export interface ProcStat {
  pid: number;
  ppid: number;
  /** Process group (a browser launched detached leads its own). */
  pgrp: number;
  comm: string;
  /** utime + stime + cutime + cstime, in ms. */
  cpuMs: number;
}

export function readProcStat(pid: number): ProcStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const close = stat.lastIndexOf(')');
  const comm = stat.slice(stat.indexOf('(') + 1, close);
  // Fields after the command, 0-based: state, ppid, pgrp, ..., utime (11), stime (12), cutime (13), cstime (14).
  const fields = stat.slice(close + 2).split(' ');
  if (fields[0] === 'Z') return undefined;
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
  return { pid, ppid: Number(fields[1]), pgrp: Number(fields[2]), comm, cpuMs: ticks * MS_PER_TICK };
}

/** CPU ms of one process (with its reaped children); 0 once it is gone. */
export function processCpuMs(pid: number): number {
  return readProcStat(pid)?.cpuMs ?? 0;
}

/** Every live process, by pid. */
export function allProcesses(): Map<number, ProcStat> {
  const found = new Map<number, ProcStat>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProcStat(Number(name));
    if (stat) found.set(stat.pid, stat);
  }
  return found;
}

/** The live processes of the tree rooted at `root` (itself included), from one /proc listing. */
export function processTree(root: number, all: Map<number, ProcStat> = allProcesses()): ProcStat[] {
  const children = new Map<number, ProcStat[]>();
  for (const stat of all.values()) {
    const list = children.get(stat.ppid) ?? [];
    list.push(stat);
    children.set(stat.ppid, list);
  }
  const rootStat = all.get(root);
  if (!rootStat) return [];
  const tree: ProcStat[] = [];
  const queue = [rootStat];
  while (queue.length > 0) {
    const next = queue.shift() as ProcStat;
    tree.push(next);
    queue.push(...(children.get(next.pid) ?? []));
  }
  return tree;
}

export function treeCpuMs(tree: readonly ProcStat[]): number {
  return tree.reduce((sum, stat) => sum + stat.cpuMs, 0);
}

/**
 * A native Postgres: its postmaster (from `postmaster.pid` in the data directory) and the backends
 * under it. Backends that exited count through the postmaster's reaped-children time.
 */
export function postgresProcesses(dataDir: string | undefined): ProcStat[] {
  if (!dataDir) return [];
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return [];
  }
  return processTree(postmaster);
}

/** Time all cores spent busy, and in all, since boot, in ms (/proc/stat; idle and iowait are not busy). */
export function machineCpuMs(): { busyMs: number; totalMs: number } {
  let line: string;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  } catch {
    return { busyMs: 0, totalMs: 0 }; // not Linux
  }
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
  return { busyMs: busy * MS_PER_TICK, totalMs: (busy + (idle ?? 0) + (iowait ?? 0)) * MS_PER_TICK };
}

/** Time a process's threads spent runnable but waiting for a core, in ns (schedstat, field 2). */
export function runQueueWaitNs(pid: number): number {
  let total = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1] ?? 0);
      } catch {
        // thread gone
      }
    }
  } catch {
    // process gone, or not Linux
  }
  return total;
}

/**
 * Resident memory of a process now, in bytes: RSS counts shared pages in every process that maps
 * them, PSS splits them between those processes. Zeros once it is gone.
 */
export function residentBytes(pid: number): { rss: number; pss: number } {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kB = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0) * 1024;
    return { rss: kB('Rss'), pss: kB('Pss') };
  } catch {
    return { rss: 0, pss: 0 };
  }
}

/** Peak resident set size of a process (VmHWM), in bytes; 0 once it is gone. */
export function peakRssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/**
 * Remembers the highest VmHWM seen under each label while the processes live, since the number
 * dies with the process. Several processes under one label (Postgres backends) keep the largest.
 */
export class PeakRssTracker {
  private readonly peaks = new Map<string, number>();

  sample(label: string, pids: Iterable<number>): void {
    for (const pid of pids) {
      const bytes = peakRssBytes(pid);
      if (bytes > (this.peaks.get(label) ?? 0)) this.peaks.set(label, bytes);
    }
  }

  /** Peak RSS in MiB per label. */
  mib(): Record<string, number> {
    return Object.fromEntries(
      [...this.peaks.entries()].map(([label, bytes]) => [label, Math.round(bytes / 2 ** 20)]),
    );
  }
}
