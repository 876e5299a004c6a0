import { expect } from 'chai';
import { checkShape, validateObjectShape } from '../../../src/api/object-shape.js';
import { ObjectValidationError } from '../../../src/api/validation-error.js';

describe('object shapes', () => {
  it('accepts absent fields and well-typed values', () => {
    expect(checkShape({ a: 'x', b: [1, 2], c: { k: 'v' } }, { fields: { a: 'string', b: { list: 'number' }, c: { map: 'string' }, d: 'string' } }, '')).to.equal(undefined);
    expect(checkShape(null, 'string', 'x')).to.equal(undefined);
  });

  it('names the path of the first problem', () => {
    const shape = { fields: { spec: { fields: { containers: { list: { fields: { ports: { list: { fields: { hostPort: 'number' as const } } } } } } } } } };
    expect(checkShape({ spec: { containers: [{}, { ports: [{ hostPort: '80' }] }] } }, shape, '')).to.deep.equal(['spec.containers[1].ports[0].hostPort', 'must be a number, got "80"']);
    expect(checkShape({ spec: { containers: [null] } }, shape, '')).to.deep.equal(['spec.containers[0]', 'must not be null']);
    expect(checkShape({ spec: [] }, shape, 'obj')).to.deep.equal(['obj.spec', 'must be an object, got a list']);
    expect(checkShape({ m: { a: 'x', b: 2 } }, { fields: { m: { map: 'string' } } }, '')).to.deep.equal(['m.b', 'must be a string, got 2']);
    expect(checkShape({ q: { cpu: {} } }, { fields: { q: { map: 'quantity' } } }, '')).to.deep.equal(['q.cpu', 'must be a quantity, got an object']);
  });

  it('validates core objects and throws naming object and field', () => {
    expect(() => validateObjectShape({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [{ name: 'c', ports: 8080 }] } } as never))
      .to.throw(ObjectValidationError, 'Pod ns/p: spec.containers[0].ports: must be a list, got 8080');
    expect(() => validateObjectShape({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, status: { conditions: {} } } as never))
      .to.throw(ObjectValidationError, 'Node n: status.conditions: must be a list, got an object');
    expect(() => validateObjectShape({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', ownerReferences: [{ kind: 3 }] } } as never))
      .to.throw(ObjectValidationError, 'Pod default/p: metadata.ownerReferences[0].kind: must be a string, got 3');
    expect(() => validateObjectShape({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'In', values: 'a' }] }] } } } } } as never))
      .to.throw(ObjectValidationError, /spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms\[0\].matchExpressions\[0\].values: must be a list/);
    // Kinds without a shape pass.
    expect(() => validateObjectShape({ apiVersion: 'v1', kind: 'ConfigMap', metadata: 5 } as never)).to.not.throw();
  });
});
