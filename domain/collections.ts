/** Tiny pure helpers for plain-object maps that must survive Temporal's JSON payloads. */

/** Appends `item` to the list under `key`, creating the list on first use. */
export function pushTo<T>(map: Record<string, T[]>, key: string, item: T): void {
  const list = map[key];
  if (list) list.push(item);
  else map[key] = [item];
}
