/**
 * The values table of charts/headroom/README.md, made from charts/headroom/values.yaml:
 * one row per leaf value (a scalar, a list or an empty map; maps with keys are walked),
 * its default as JSON, and the description from its `# --` comment (helm-docs'
 * convention). `node --import tsx scripts/chart-values.ts --write` rewrites the table
 * between the README's markers; test/unit/docs/chart-readme.test.ts checks that it
 * matches values.yaml.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isScalar, parseDocument, type Node, type Pair } from 'yaml';

export interface ChartValue {
  /** Dotted path, e.g. controller.prediction.enabled. */
  key: string;
  /** The default, as JSON. */
  default: string;
  description: string;
}

export const TABLE_BEGIN = '<!-- values-table:begin (scripts/chart-values.ts --write) -->';
export const TABLE_END = '<!-- values-table:end -->';

/** The `# --` part of a comment block, joined into one line. */
function describe(comment: string | null | undefined): string {
  if (!comment) return '';
  const lines = comment.split('\n');
  const at = lines.findIndex((l) => l.trimStart().startsWith('--'));
  if (at < 0) return '';
  return lines.slice(at).map((l) => l.trim().replace(/^--\s*/, '')).join(' ').trim();
}

export function chartValues(valuesYaml: string): ChartValue[] {
  const doc = parseDocument(valuesYaml);
  const out: ChartValue[] = [];
  // A leaf without its own `# --` comment is described by its nearest map's
  // (e.g. securityContext.runAsUser by securityContext's).
  const walk = (node: Node | null, prefix: string, inherited: string, firstComment?: string | null): void => {
    if (!isMap(node)) return;
    node.items.forEach((pair: Pair, i) => {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const path = prefix ? `${prefix}.${key}` : key;
      // The comment before a map's first key is kept on the map (or the document) itself.
      const own = describe((pair.key as Node | null)?.commentBefore ?? (i === 0 ? firstComment : undefined));
      const value = pair.value as Node | null;
      if (isMap(value) && value.items.length > 0) {
        walk(value, path, own || inherited, value.commentBefore);
        return;
      }
      const js: unknown = value === null ? null : (value as Node).toJSON();
      out.push({ key: path, default: JSON.stringify(js), description: own || inherited });
    });
  };
  walk(doc.contents as Node, '', '', doc.commentBefore?.split('\n\n').at(-1));
  return out;
}

const escapeCell = (s: string) => s.replace(/\|/g, '\\|').replace(/</g, '&lt;');

export function valuesTable(values: ChartValue[]): string {
  return [
    '| key | default | description |',
    '| --- | --- | --- |',
    ...values.map((v) => `| \`${v.key}\` | \`${escapeCell(v.default)}\` | ${escapeCell(v.description)} |`),
  ].join('\n');
}

const CHART = join(dirname(fileURLToPath(import.meta.url)), '..', 'charts', 'headroom');

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const values = chartValues(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
  const table = valuesTable(values);
  if (process.argv.includes('--write')) {
    const path = join(CHART, 'README.md');
    const readme = readFileSync(path, 'utf8');
    const a = readme.indexOf(TABLE_BEGIN);
    const b = readme.indexOf(TABLE_END);
    if (a < 0 || b < a) throw new Error(`${path}: the values-table markers are missing`);
    writeFileSync(path, `${readme.slice(0, a + TABLE_BEGIN.length)}\n${table}\n${readme.slice(b)}`);
  } else {
    console.log(table);
  }
}
