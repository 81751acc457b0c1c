/**
 * The SDK's workflow stack-trace tracking (a V8 promise hook that captures and source-maps a stack for
 * every promise workflow code creates) is off unless GLEANER_WORKFLOW_STACK_TRACES=1: patches/
 * @temporalio+worker+*.patch, applied by `npm install`'s postinstall. Replaying the committed
 * histories took 0.67 of the CPU without it. Each case runs in a child process, because the hook,
 * once installed, stays for the life of the process.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function hookInstalled(env: Record<string, string>): boolean {
  const script = `
    const { globalHandlers } = require('@temporalio/worker/lib/workflow/vm-shared');
    globalHandlers.install();
    process.stdout.write(JSON.stringify({ installed: globalHandlers.installed, hook: globalHandlers.promiseHookInstalled }));
  `;
  const { GLEANER_WORKFLOW_STACK_TRACES: _unset, ...rest } = process.env;
  const out = execFileSync(process.execPath, ['-e', script], { env: { ...rest, ...env }, encoding: 'utf8' });
  const parsed = JSON.parse(out) as { installed: boolean; hook: boolean };
  expect(parsed.installed).toBe(true);
  return parsed.hook;
}

describe('workflow stack-trace tracking', () => {
  it('is off by default (the patch to @temporalio/worker is applied)', () => {
    expect(hookInstalled({})).toBe(false);
  });

  it('comes back with GLEANER_WORKFLOW_STACK_TRACES=1, for the UI’s stack trace query', () => {
    expect(hookInstalled({ GLEANER_WORKFLOW_STACK_TRACES: '1' })).toBe(true);
  });
});
