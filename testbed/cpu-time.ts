/**
 * CPU milliseconds this process has used so far. Bounds on synchronous work are stated in CPU
 * time: unlike wall time it does not grow when other jobs crowd the machine, so a bound that
 * holds on an idle machine holds on a loaded CI run too.
 */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
