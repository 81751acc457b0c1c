/**
 * What the kernel says about a running browser: every process descended from Chromium's browser
 * process (zygotes, renderers, utilities), with its user ids, seccomp mode, namespaces and
 * environment, read from /proc. The evidence that the sandbox is on and that no secret is inherited.
 * A child's /proc/<pid>/environ is no such evidence: Chromium writes its process titles over that
 * memory (setproctitle) after copying the environment elsewhere, so `memoryContains` reads the
 * process's own writable memory instead.
 */
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from 'node:fs';

export interface BrowserProcess {
  pid: number;
  /** The raw command line (Chromium rewrites its own, so arguments may be space-joined). */
  commandLine: string;
  isRenderer: boolean;
  /** Real, effective, saved and filesystem uid. */
  uids: number[];
  /** 0 none, 1 strict, 2 filter (seccomp-bpf). */
  seccomp: number;
  noNewPrivs: boolean;
  userNamespace: string;
  /** NAME=value entries. */
  environment: string[];
}

/** The process `rootPid` and all its descendants still alive (processes that exit meanwhile are skipped). */
export function browserProcesses(rootPid: number): BrowserProcess[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the parenthesised command: state, ppid, ...
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z') parentOf.set(Number(name), Number(fields[1]));
    } catch {
      // Gone already.
    }
  }
  const tree = [rootPid];
  for (let i = 0; i < tree.length; i++)
    for (const [pid, ppid] of parentOf) if (ppid === tree[i]) tree.push(pid);
  const found: BrowserProcess[] = [];
  for (const pid of tree) {
    try {
      found.push(describeProcess(pid));
    } catch (error) {
      if (
        (error as NodeJS.ErrnoException).code !== 'ENOENT' &&
        (error as NodeJS.ErrnoException).code !== 'ESRCH'
      )
        throw error;
    }
  }
  return found;
}

function describeProcess(pid: number): BrowserProcess {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => status.match(new RegExp(`^${name}:\\s*(.*)$`, 'm'))?.[1] ?? '';
  const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  return {
    pid,
    commandLine,
    isRenderer: commandLine.includes('--type=renderer'),
    uids: field('Uid').split(/\s+/).map(Number),
    seccomp: Number(field('Seccomp')),
    noNewPrivs: field('NoNewPrivs') === '1',
    userNamespace: readlinkSync(`/proc/${pid}/ns/user`),
    environment: readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean),
  };
}

/** Which of `needles` occur anywhere in the private writable memory of `pid` (read as root or as its owner). */
export function memoryContains(
  pid: number,
  needles: readonly string[],
  maxRegionBytes = 256 * 1024 * 1024,
): string[] {
  const found = new Set<string>();
  const patterns = needles.map((needle) => ({ needle, bytes: Buffer.from(needle) }));
  const longest = Math.max(...patterns.map((p) => p.bytes.length));
  const maps = readFileSync(`/proc/${pid}/maps`, 'utf8');
  const fd = openSync(`/proc/${pid}/mem`, 'r');
  const chunk = Buffer.alloc(4 * 1024 * 1024 + longest);
  try {
    for (const line of maps.split('\n')) {
      const [range, perms, , , , name] = line.split(/\s+/);
      if (!range || !perms?.startsWith('rw') || name === '[vvar]' || name === '[vsyscall]') continue;
      const [start, end] = range.split('-').map((hex) => Number.parseInt(hex, 16)) as [number, number];
      if (end - start > maxRegionBytes) continue;
      // Chunks overlap by the longest needle so a match across a boundary is still seen.
      for (let at = start; at < end; at += chunk.length - longest) {
        let read: number;
        try {
          read = readSync(fd, chunk, 0, Math.min(chunk.length, end - at), at);
        } catch {
          break; // A region that cannot be read (guard pages, unmapped meanwhile).
        }
        const view = chunk.subarray(0, read);
        for (const { needle, bytes } of patterns) if (view.includes(bytes)) found.add(needle);
        if (read < chunk.length) break;
      }
    }
  } finally {
    closeSync(fd);
  }
  return [...found];
}
