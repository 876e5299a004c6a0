/**
 * Writes src/cluster/crd-fields.ts: the fields of the CRDs Headroom ships (NodePool, and
 * the CapacityBuffer and ProvisioningRequest CRDs of Cluster Autoscaler), per served
 * version, from their openAPIV3Schema, for the unknown-field check of `headroom plan -f`
 * (src/cluster/known-fields.ts). Run after changing a CRD:
 *
 *   node --import tsx scripts/crd-fields.ts
 *
 * test/unit/cluster/known-fields.test.ts fails while the file is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { fieldsFromOpenApi } from '../src/cluster/known-fields.js';

const REPO = join(fileURLToPath(import.meta.url), '..', '..');
export const CRD_FILES = [
  'charts/headroom/crds/headroom.dev_nodepools.yaml',
  'charts/headroom/files/autoscaling.x-k8s.io/autoscaling.x-k8s.io_capacitybuffers.yaml',
  'charts/headroom/files/autoscaling.x-k8s.io/autoscaling.x-k8s.io_provisioningrequests.yaml',
];
export const CRD_FIELDS_FILE = 'src/cluster/crd-fields.ts';

interface Crd {
  spec: { group: string; names: { kind: string }; versions: Array<{ name: string; served: boolean; schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }> };
}

/** The text of src/cluster/crd-fields.ts for the CRDs as they are in the repository. */
export function crdFieldsSource(): string {
  const entries: string[] = [];
  for (const file of CRD_FILES) {
    for (const doc of parseAllDocuments(readFileSync(join(REPO, file), 'utf8'))) {
      const crd = doc.toJS() as Crd | null;
      if (!crd) continue;
      for (const v of crd.spec.versions) {
        if (!v.served) continue;
        const { apiVersion: _a, kind: _k, metadata: _m, status: _s, ...rest } = v.schema.openAPIV3Schema.properties;
        const fields = fieldsFromOpenApi({ type: 'object', properties: rest });
        entries.push(`  '${crd.spec.group}/${v.name}/${crd.spec.names.kind}': ${JSON.stringify(fields)},`);
      }
    }
  }
  return [
    '// Written by scripts/crd-fields.ts from the CRDs in charts/headroom: do not edit by hand.',
    "import type { KnownFields } from './known-fields.js';",
    '',
    '/** The fields of each served CRD version (below metadata and apart from status), by `apiVersion/kind`. */',
    'export const CRD_FIELDS: Record<string, { fields: Record<string, KnownFields> }> = {',
    ...entries,
    '};',
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) writeFileSync(join(REPO, CRD_FIELDS_FILE), crdFieldsSource());
