/**
 * Reads the lists the docs keep (markdown tables whose first column names a flag, an
 * annotation, a field or a value in backticks), so the drift tests can compare them
 * with what the code and the chart really have.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export function readRepoFile(path: string): string {
  return readFileSync(join(REPO, path), 'utf8');
}

/**
 * The lines of the section under the heading whose text is `heading` (any level), up
 * to the next heading of the same or a higher level. Throws when it is missing, so a
 * renamed heading fails the test rather than comparing nothing.
 */
export function section(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /^#{1,6} /.test(l) && l.replace(/^#+ /, '').trim() === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((l) => {
    const m = /^(#+) /.exec(l);
    return m !== null && m[1]!.length <= level;
  });
  return end < 0 ? rest : rest.slice(0, end);
}

/** The cells of each table row in `lines` (header and separator rows skipped). */
export function tableRows(lines: string[]): string[][] {
  const rows: string[][] = [];
  let header = true;
  for (const line of lines) {
    if (!line.startsWith('|')) {
      header = true;
      continue;
    }
    // Split on pipes not escaped as \|.
    const cells = line.slice(1, line.endsWith('|') ? -1 : undefined).split(/(?<!\\)\|/).map((c) => c.trim());
    if (header) {
      header = false; // the header row; the separator follows
      continue;
    }
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
    rows.push(cells);
  }
  return rows;
}

/** The backticked words of the first cell of every row of every table in `lines`. */
export function firstColumnCodes(lines: string[]): string[] {
  return tableRows(lines).flatMap((cells) => [...(cells[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
}

export function sorted(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}
