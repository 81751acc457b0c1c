/** The HTML files of a site folder (fixtures/sites, unpacked), for the benches that read a real site. */
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** Every `.html` file under `dir`, full paths in sorted order; folders `skipDir` names are left out. */
export function htmlFiles(dir: string, skipDir: (name: string) => boolean = () => false): string[] {
  const walk = (folder: string): string[] =>
    readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) return skipDir(entry.name) ? [] : walk(full);
      return entry.name.endsWith('.html') ? [full] : [];
    });
  return walk(dir).sort();
}
