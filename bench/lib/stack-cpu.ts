/**
 * Who used the cores over a measured window: this process, the Temporal dev server, a native
 * Postgres, and the whole machine (what is left over is other jobs: a noise indicator).
 */
import os from 'node:os';
import { machineCpuMs, postgresProcesses, processCpuMs, treeCpuMs } from './proc-stats';

export interface StackCpuSnapshot {
  machine: { busyMs: number; totalMs: number };
  self: NodeJS.CpuUsage;
  temporalMs: number;
  postgresMs: number;
}

export function stackCpuSnapshot(temporalPid: number, postgresDataDir: string | undefined): StackCpuSnapshot {
  return {
    machine: machineCpuMs(),
    self: process.cpuUsage(),
    temporalMs: processCpuMs(temporalPid),
    postgresMs: treeCpuMs(postgresProcesses(postgresDataDir)),
  };
}

/** Cores busy on average over the window, machine-wide and per part. */
export interface StackCores {
  machineCores: number;
  benchProcessCores: number;
  temporalServerCores: number;
  /** Native Postgres processes (0 with PGlite, which runs inside the bench process). */
  postgresCores: number;
  /** Everything else on the machine (other users' jobs included). */
  otherCores: number;
}

export function coresBetween(before: StackCpuSnapshot, after: StackCpuSnapshot, wallMs: number): StackCores {
  const totalMs = after.machine.totalMs - before.machine.totalMs;
  const busyMs = after.machine.busyMs - before.machine.busyMs;
  const machineCores = totalMs > 0 ? (busyMs / totalMs) * os.cpus().length : 0;
  const selfUs = after.self.user - before.self.user + (after.self.system - before.self.system);
  const benchProcessCores = selfUs / 1000 / wallMs;
  const temporalServerCores = (after.temporalMs - before.temporalMs) / wallMs;
  const postgresCores = (after.postgresMs - before.postgresMs) / wallMs;
  return {
    machineCores,
    benchProcessCores,
    temporalServerCores,
    postgresCores,
    otherCores: Math.max(0, machineCores - benchProcessCores - temporalServerCores - postgresCores),
  };
}
