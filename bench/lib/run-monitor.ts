/**
 * Watches the processes of one crawl while it runs: CPU per role over the crawl's window (from the
 * first request the site server sees to the end the caller marks), peak RSS per role, and the
 * machine's busy cores over the same window (to show how much other jobs took).
 */
import os from 'node:os';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import type { RequestLogEntry } from '../../testbed/site-server';
import { allProcesses, machineCpuMs, PeakRssTracker, type ProcStat, treeCpuMs } from './proc-stats';

/** Picks a role's processes out of one /proc listing. */
export type RoleSelector = (all: Map<number, ProcStat>) => ProcStat[];

// Each sample lists /proc; the site server shares this event loop, so not more often than this.
const SAMPLE_MS = 250;

interface Snapshot {
  atMs: number;
  cpuMs: Record<string, number>;
  machineBusyMs: number;
  benchCpuMs: number;
}

export interface RunWindow {
  /** CPU ms per role between the first request and the end. */
  cpuMs: Record<string, number>;
  /** CPU ms per role before the first request (start-up, for processes spawned with the monitor). */
  startCpuMs: Record<string, number>;
  /** Core-ms the whole machine was busy in the window (all processes, /proc/stat). */
  machineBusyMs: number;
  /** CPU ms of this bench process (site server) in the window. */
  benchCpuMs: number;
  windowMs: number;
  /** p99 event-loop delay of this process, which serves the site: high means late server timestamps. */
  benchEventLoopP99Ms: number;
  peakRssMiB: Record<string, number>;
  loadStart: number[];
  loadEnd: number[];
}

export class RunMonitor {
  private readonly rss = new PeakRssTracker();
  private readonly timer: NodeJS.Timeout;
  private baseline: Snapshot | undefined;
  private end: Snapshot | undefined;
  private readonly loadStart = os.loadavg();
  private readonly loopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });

  constructor(
    private readonly roles: Record<string, RoleSelector>,
    private readonly log: RequestLogEntry[],
    private readonly logStart: number,
  ) {
    this.timer = setInterval(() => this.tick(), SAMPLE_MS);
    this.loopDelay.enable();
  }

  /** Whether the site server has seen the crawl's first request. */
  get started(): boolean {
    return this.baseline !== undefined;
  }

  /** Marks the end of the crawl: call it while the processes still live. */
  finish(): void {
    if (this.end) return;
    this.end = this.snapshot();
    clearInterval(this.timer);
    this.loopDelay.disable();
  }

  result(): RunWindow {
    this.finish();
    const end = this.end as Snapshot;
    const start = this.baseline ?? end;
    const cpuMs = Object.fromEntries(
      Object.keys(this.roles).map((role) => [role, (end.cpuMs[role] ?? 0) - (start.cpuMs[role] ?? 0)]),
    );
    return {
      cpuMs,
      startCpuMs: { ...start.cpuMs },
      machineBusyMs: end.machineBusyMs - start.machineBusyMs,
      benchCpuMs: end.benchCpuMs - start.benchCpuMs,
      windowMs: end.atMs - start.atMs,
      benchEventLoopP99Ms: Math.round(this.loopDelay.percentile(99) / 1e6),
      peakRssMiB: this.rss.mib(),
      loadStart: this.loadStart,
      loadEnd: os.loadavg(),
    };
  }

  private tick(): void {
    const snapshot = this.snapshot();
    if (!this.baseline && this.log.length > this.logStart) this.baseline = snapshot;
  }

  private snapshot(): Snapshot {
    const all = Object.keys(this.roles).length > 0 ? allProcesses() : new Map<number, ProcStat>();
    const cpuMs: Record<string, number> = {};
    for (const [role, select] of Object.entries(this.roles)) {
      const processes = select(all);
      cpuMs[role] = treeCpuMs(processes);
      this.rss.sample(
        role,
        processes.map((p) => p.pid),
      );
    }
    const { user, system } = process.cpuUsage();
    return {
      atMs: Date.now(),
      cpuMs,
      machineBusyMs: machineCpuMs().busyMs,
      benchCpuMs: (user + system) / 1000,
    };
  }
}
