import { expect } from 'chai';
import { decodeState, encodeState, MAX_PARTS, stateConfigMapNames, StateTooLargeError } from '../../../src/controller/model-store.js';

describe('model state encoding (ConfigMap parts)', () => {
  it('round-trips a state through gzip parts and checks the sha256', () => {
    const state = { version: 1, workloads: { 'Deployment/a/web': { weekly: Array.from({ length: 168 }, (_, i) => i * 0.5) } } };
    const enc = encodeState(JSON.stringify(state));
    expect(enc.parts).to.have.length(1);
    expect(JSON.parse(decodeState(enc.parts, enc.sha256)!)).to.deep.equal(state);
  });

  it('splits a large state into parts below the part size and reassembles them', () => {
    // Incompressible-ish content: distinct numbers.
    const state = { xs: Array.from({ length: 20_000 }, (_, i) => Math.sin(i) * 1e6) };
    const enc = encodeState(JSON.stringify(state), 5 * 1024 * 1024, 64 * 1024);
    expect(enc.parts.length).to.be.greaterThan(1);
    for (const p of enc.parts) expect(p.length).to.be.at.most(64 * 1024);
    expect(JSON.parse(decodeState(enc.parts, enc.sha256)!)).to.deep.equal(state);
  });

  it('refuses a torn save: a missing or altered part does not decode', () => {
    const state = { xs: Array.from({ length: 20_000 }, (_, i) => Math.sin(i) * 1e6) };
    const enc = encodeState(JSON.stringify(state), 5 * 1024 * 1024, 64 * 1024);
    expect(decodeState(enc.parts.slice(0, -1), enc.sha256)).to.equal(undefined);
    const altered = enc.parts.map((p) => Buffer.from(p));
    altered[0]![10] = altered[0]![10]! ^ 0xff;
    expect(decodeState(altered, enc.sha256)).to.equal(undefined);
  });

  it('bounds the state: above the JSON byte bound or the part count it throws, never writes', () => {
    expect(() => encodeState('x'.repeat(2000), 1000)).to.throw(StateTooLargeError, /above the 1000-byte bound/);
    const state = { xs: Array.from({ length: 60_000 }, (_, i) => Math.sin(i) * 1e6) };
    expect(() => encodeState(JSON.stringify(state), 5 * 1024 * 1024, 1024)).to.throw(StateTooLargeError, /ConfigMaps/);
  });

  it('names the head and two slots of parts (what the Role grants by resourceNames)', () => {
    const names = stateConfigMapNames('headroom-model');
    expect(names).to.have.length(1 + 2 * MAX_PARTS);
    expect(names[0]).to.equal('headroom-model');
    expect(names).to.include('headroom-model-a-0').and.include(`headroom-model-b-${MAX_PARTS - 1}`);
  });
});
