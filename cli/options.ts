/** Parsers for command-line values: each rejects bad input with a message naming the flag. */
import { InvalidArgumentError } from 'commander';
import { canonicalizeUrl, originOf } from '../domain/url';
import { UsageError } from './errors';

export function integerOption(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    // `-1` is a whole number too: what it breaks is the floor, so that is what the message names.
    if (/^-\d+$/.test(value.trim()))
      throw new InvalidArgumentError(`${name} must be at least ${min}, got ${value.trim()}`);
    if (!/^\d+$/.test(value.trim()))
      throw new InvalidArgumentError(`${name} must be a whole number, got "${value}"`);
    const parsed = Number.parseInt(value, 10);
    if (parsed < min) throw new InvalidArgumentError(`${name} must be at least ${min}, got ${parsed}`);
    if (parsed > max) throw new InvalidArgumentError(`${name} must be at most ${max}, got ${parsed}`);
    return parsed;
  };
}

/** The largest TCP port: past it `listen` throws, after the whole stack has been started for nothing. */
export const MAX_PORT = 65_535;

export function numberOption(name: string, min: number) {
  return (value: string): number => {
    const parsed = Number(value.trim());
    if (value.trim() === '' || !Number.isFinite(parsed))
      throw new InvalidArgumentError(`${name} must be a number, got "${value}"`);
    if (parsed < min) throw new InvalidArgumentError(`${name} must be at least ${min}, got ${parsed}`);
    return parsed;
  };
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function listOption(value: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  ];
}

/** `--origin O` of pause, resume and cancel: any http(s) URL of the origin, as scheme://host:port. */
export function originOption(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const url = canonicalizeUrl(value);
  if (!url) throw new UsageError(`not a valid http(s) origin: ${value}`);
  return originOf(url);
}
