/**
 * Growth checks for parsers on untrusted input: time a parser on an input of `bytes` and of
 * `factor × bytes` (the fastest of a few interleaved runs each) and require the ratio to stay under a
 * bound that linear work passes comfortably and quadratic work cannot (×8 in size is ×8 linear,
 * ×64 quadratic; the bound is ×24), and the larger run to stay under a generous time per KB, which
 * catches anything catastrophic. Timings on a loaded two-core machine jitter, so a failed
 * measurement is repeated (up to three times) before it counts: super-linear work fails every time.
 */
import { expect } from 'vitest';

export interface GrowthOptions {
  /** Size of the smaller input, in characters. */
  bytes: number;
  /** How much larger the second input is. @default 8 */
  factor?: number;
  /** Largest accepted time ratio between the two inputs. @default 24 (linear ≈ 8, quadratic ≈ 64) */
  maxRatio?: number;
  /** Largest accepted time per KB of the larger input. @default 5 */
  maxMsPerKb?: number;
  /** Timed runs per size; the fastest counts. @default 3 */
  runs?: number;
  /** Times below this are read as this much, so that a sub-millisecond run cannot inflate the ratio. @default 1 */
  floorMs?: number;
}

export interface GrowthMeasure {
  smallChars: number;
  largeChars: number;
  smallMs: number;
  largeMs: number;
  ratio: number;
  msPerKb: number;
}

/** `unit` repeated (with a prefix and suffix) to about `chars` characters. */
export function repeatTo(chars: number, unit: string, prefix = '', suffix = ''): string {
  return prefix + unit.repeat(Math.max(1, Math.ceil(chars / Math.max(1, unit.length)))) + suffix;
}

function fastest(run: () => unknown, runs: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    run();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

export function measureGrowth<T>(
  parse: (input: T) => unknown,
  build: (chars: number) => T,
  size: (input: T) => number,
  options: GrowthOptions,
): GrowthMeasure {
  const factor = options.factor ?? 8;
  const runs = options.runs ?? 3;
  const floorMs = options.floorMs ?? 1;
  const small = build(options.bytes);
  const large = build(options.bytes * factor);
  parse(small); // warm-up: compile the parser's hot paths before timing
  let smallMs = Number.POSITIVE_INFINITY;
  let largeMs = Number.POSITIVE_INFINITY;
  // Interleaved, so a burst of load from elsewhere falls on both sizes alike.
  const largeChars = size(large);
  // A run far over the time-per-KB bound has answered already: more runs would only cost minutes.
  const hopelessMs = 4 * (options.maxMsPerKb ?? 5) * (largeChars / 1024);
  for (let i = 0; i < runs && (i === 0 || largeMs <= hopelessMs); i++) {
    smallMs = Math.min(
      smallMs,
      fastest(() => parse(small), 1),
    );
    largeMs = Math.min(
      largeMs,
      fastest(() => parse(large), 1),
    );
  }
  return {
    smallChars: size(small),
    largeChars,
    smallMs,
    largeMs,
    ratio: Math.max(largeMs, floorMs) / Math.max(smallMs, floorMs),
    msPerKb: largeMs / (largeChars / 1024),
  };
}

/** Asserts linear growth of `parse` on inputs `build` makes; retries a failed measurement twice. */
export function expectLinear<T>(
  label: string,
  parse: (input: T) => unknown,
  build: (chars: number) => T,
  options: GrowthOptions,
  size: (input: T) => number = (input) => String(input).length,
): GrowthMeasure {
  const maxRatio = options.maxRatio ?? 24;
  const maxMsPerKb = options.maxMsPerKb ?? 5;
  let measure = measureGrowth(parse, build, size, options);
  const failed = (m: GrowthMeasure) => m.ratio > maxRatio || m.msPerKb > maxMsPerKb;
  for (let attempt = 1; attempt < 3 && failed(measure) && measure.msPerKb <= 4 * maxMsPerKb; attempt++)
    measure = measureGrowth(parse, build, size, options);
  const shown = `${label}: ${measure.smallChars} chars ${measure.smallMs.toFixed(1)} ms, ${measure.largeChars} chars ${measure.largeMs.toFixed(1)} ms (×${measure.ratio.toFixed(1)}, ${measure.msPerKb.toFixed(3)} ms/KB)`;
  expect(measure.ratio, shown).toBeLessThanOrEqual(maxRatio);
  expect(measure.msPerKb, shown).toBeLessThanOrEqual(maxMsPerKb);
  return measure;
}
