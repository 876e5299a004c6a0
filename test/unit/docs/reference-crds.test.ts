import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { firstColumnCodes, REPO, readRepoFile, section, sorted } from './doc-tables.js';

interface Schema {
  properties?: Record<string, Schema>;
  items?: Schema;
}
interface Crd {
  spec: { names: { kind: string }; versions: Array<{ name: string; storage: boolean; schema: { openAPIV3Schema: Schema } }> };
}

/** Every field path of a schema: `spec.a`, `spec.list[].b`; list items' paths carry `[]`. */
export function fieldPaths(schema: Schema, prefix = '', arrays = true): string[] {
  const out: string[] = [];
  for (const [k, child] of Object.entries(schema.properties ?? {})) {
    const path = prefix ? `${prefix}.${k}` : k;
    out.push(path);
    out.push(...fieldPaths(child, path, arrays));
    if (child.items) out.push(...fieldPaths(child.items, arrays ? `${path}[]` : path, arrays));
  }
  return out;
}

function storedSchema(path: string): Schema {
  const crd = parse(readRepoFile(path)) as Crd;
  const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0]!;
  return version.schema.openAPIV3Schema;
}

describe('docs/reference.md: CRD fields', () => {
  const reference = readRepoFile('docs/reference.md');

  it('lists exactly the fields of every CRD the chart owns (charts/headroom/crds)', () => {
    const crds = readdirSync(join(REPO, 'charts', 'headroom', 'crds')).filter((f) => f.endsWith('.yaml'));
    expect(crds.length).to.be.greaterThan(0);
    for (const file of crds) {
      const crd = parse(readRepoFile(`charts/headroom/crds/${file}`)) as Crd;
      const kind = crd.spec.names.kind;
      const heading = reference.split('\n').find((l) => l.startsWith(`## ${kind} (`));
      expect(heading, `docs/reference.md has no "## ${kind} (group/version)" section`).to.not.equal(undefined);
      const fields = fieldPaths(storedSchema(`charts/headroom/crds/${file}`)).filter((p) => !['apiVersion', 'kind', 'metadata'].includes(p));
      const documented = firstColumnCodes(section(reference, heading!.slice(3)));
      expect(sorted(documented), `${kind} fields in docs/reference.md vs ${file}`).to.deep.equal(sorted(fields));
    }
  });

  for (const [kind, file] of [
    ['CapacityBuffer', 'charts/headroom/files/autoscaling.x-k8s.io/autoscaling.x-k8s.io_capacitybuffers.yaml'],
    ['ProvisioningRequest', 'charts/headroom/files/autoscaling.x-k8s.io/autoscaling.x-k8s.io_provisioningrequests.yaml'],
  ] as const) {
    it(`names only fields the upstream ${kind} CRD has`, () => {
      const fields = new Set(fieldPaths(storedSchema(file), '', false));
      const documented = firstColumnCodes(section(reference, `${kind} fields`));
      expect(documented.length).to.be.greaterThan(3);
      expect(documented.filter((f) => !fields.has(f)), `${kind} fields in docs/reference.md not in ${file}`).to.deep.equal([]);
    });
  }

  it('walks nested objects and list items', () => {
    const schema: Schema = { properties: { spec: { properties: { a: {}, list: { items: { properties: { b: {} } } } } } } };
    expect(fieldPaths(schema)).to.deep.equal(['spec', 'spec.a', 'spec.list', 'spec.list[].b']);
    expect(fieldPaths(schema, '', false)).to.deep.equal(['spec', 'spec.a', 'spec.list', 'spec.list.b']);
  });
});
