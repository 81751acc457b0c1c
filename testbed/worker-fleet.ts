/**
 * Worker processes split by task queue, started with `gleaner worker --queues …` exactly as an
 * operator starts them, plus what a fault harness needs: SIGKILL one and start its replacement,
 * and each process's peak RSS (VmHWM, sampled from /proc while it lives, since it dies with it).
 * A member that exits on its own (a worker started while Postgres is away fails its migration check)
 * is started again after a second, as a process supervisor (systemd, `restart: unless-stopped`) does.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { spawnGleaner } from './gleaner-process';

export interface FleetMember {
  /** Stable name across restarts, e.g. `fetch-1`. */
  name: string;
  args: string[];
  child: ChildProcess;
  restarts: number;
  /** Highest VmHWM seen across every incarnation, in bytes. */
  peakRssBytes: number;
  stderrTail: string;
  /** Resolves once the current incarnation says it is polling (or exits). */
  ready: Promise<void>;
  /** The current incarnation has said it is polling and has not exited. */
  polling: boolean;
}

export interface WorkerFleet {
  members: FleetMember[];
  /** SIGKILLs the member, waits for it to exit, starts a replacement with the same arguments. */
  killAndRestart(member: FleetMember): Promise<void>;
  /** Resolves when every member's current incarnation is polling. */
  allReady(): Promise<void>;
  /** Peak RSS per member name, in MiB. */
  peakRssMiB(): Record<string, number>;
  stop(): Promise<void>;
}

export interface WorkerFleetOptions {
  /**
   * A folder for each member's memory samples (`GLEANER_MEMORY_SAMPLES`, infra/memory-sampler.ts), one
   * `<name>.jsonl` per member, appended to across restarts. @default no sampling
   */
  memorySamplesDir?: string;
}

/** `spec` maps a member name to its gleaner arguments, e.g. `{ 'fetch-1': ['worker', '--queues', 'fetch'] }`. */
export function startWorkerFleet(
  spec: Record<string, string[]>,
  sharedEnv: Record<string, string | undefined>,
  options: WorkerFleetOptions = {},
): WorkerFleet {
  const { memorySamplesDir } = options;
  const envOf = (name: string): Record<string, string | undefined> =>
    memorySamplesDir
      ? { ...sharedEnv, GLEANER_MEMORY_SAMPLES: path.join(memorySamplesDir, `${name}.jsonl`) }
      : sharedEnv;
  const members: FleetMember[] = Object.entries(spec).map(([name, args]) => ({
    name,
    args,
    child: launch(args, envOf(name)),
    restarts: 0,
    peakRssBytes: 0,
    stderrTail: '',
    ready: Promise.resolve(),
    polling: false,
  }));
  let stopping = false;
  const supervise = (member: FleetMember) => {
    const child = member.child;
    child.once('exit', () => {
      if (stopping || member.child !== child) return;
      setTimeout(() => {
        if (stopping || member.child !== child) return;
        member.child = launch(member.args, envOf(member.name));
        member.restarts++;
        watchStderr(member);
        supervise(member);
      }, 1_000);
    });
  };
  for (const member of members) {
    watchStderr(member);
    supervise(member);
  }
  const sampler = setInterval(() => {
    for (const member of members) sampleRss(member);
  }, 500);
  sampler.unref();

  return {
    members,
    async killAndRestart(member) {
      sampleRss(member);
      // The supervisor's own restart waits a second and sees the new child: no double start.
      await killAndWait(member.child, 'SIGKILL');
      member.child = launch(member.args, envOf(member.name));
      member.restarts++;
      watchStderr(member);
      supervise(member);
    },
    async allReady() {
      await Promise.all(members.map((member) => member.ready));
    },
    peakRssMiB() {
      for (const member of members) sampleRss(member);
      return Object.fromEntries(members.map((m) => [m.name, Math.round(m.peakRssBytes / 2 ** 20)]));
    },
    async stop() {
      stopping = true;
      clearInterval(sampler);
      for (const member of members) sampleRss(member);
      await Promise.all(members.map((member) => killAndWait(member.child, 'SIGTERM', 15_000)));
    },
  };
}

function launch(args: string[], env: Record<string, string | undefined>): ChildProcess {
  return spawnGleaner(args, env);
}

/** Tracks the tail of stderr and readiness: `gleaner worker` and `gleaner api` announce themselves there. */
function watchStderr(member: FleetMember): void {
  const child = member.child;
  let seen = '';
  member.polling = false;
  member.ready = new Promise((resolve) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      member.stderrTail = (member.stderrTail + text).slice(-4000);
      seen = (seen + text).slice(-500);
      if (/polling|listening|API on|http:\/\//.test(seen)) {
        if (member.child === child) member.polling = true;
        resolve();
      }
    });
    child.once('exit', () => {
      if (member.child === child) member.polling = false;
      resolve();
    });
  });
  child.stdout?.resume();
}

function sampleRss(member: FleetMember): void {
  const pid = member.child.pid;
  if (pid === undefined || member.child.exitCode !== null) return;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
    member.peakRssBytes = Math.max(member.peakRssBytes, kib * 1024);
  } catch {
    // The process exited between the check and the read.
  }
}

function killAndWait(child: ChildProcess, signal: NodeJS.Signals, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill(signal);
  });
}
