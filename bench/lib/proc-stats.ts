/**
 * CPU time and peak memory of processes, read from Linux /proc. A process tree's CPU counts every
 * live member's own time plus the time of children it has already reaped (cutime/cstime), so a
 * Postgres backend that exited, or the Temporal server reaped by the gleaner process, is not lost.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

export interface ProcStat {
  pid: number;
  ppid: number;
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
  // Fields after the command, 0-based: state, ppid, ..., utime (11), stime (12), cutime (13), cstime (14).
  const fields = stat.slice(close + 2).split(' ');
  if (fields[0] === 'Z') return undefined;
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
  return { pid, ppid: Number(fields[1]), comm, cpuMs: (ticks * 1000) / TICKS_PER_SECOND };
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
