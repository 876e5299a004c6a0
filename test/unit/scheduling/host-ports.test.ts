import { expect } from 'chai';
import { hostPortsConflict, podHostPorts } from '../../../src/scheduling/host-ports.js';
import { pod } from './pod-fixtures.js';

describe('host ports', () => {
  const tcp80 = { port: 80, protocol: 'TCP', hostIP: '0.0.0.0' };

  it('conflicts on the same protocol and port', () => {
    expect(hostPortsConflict([tcp80], [tcp80])).to.equal(true);
    expect(hostPortsConflict([tcp80], [{ ...tcp80, protocol: 'UDP' }])).to.equal(false);
    expect(hostPortsConflict([tcp80], [{ ...tcp80, port: 81 }])).to.equal(false);
    expect(hostPortsConflict([], [tcp80])).to.equal(false);
    expect(hostPortsConflict([tcp80], [])).to.equal(false);
  });

  it('0.0.0.0 and an empty hostIP conflict with any IP; distinct IPs do not', () => {
    const on1 = { port: 80, protocol: 'TCP', hostIP: '10.0.0.1' };
    const on2 = { port: 80, protocol: 'TCP', hostIP: '10.0.0.2' };
    expect(hostPortsConflict([on1], [on2])).to.equal(false);
    expect(hostPortsConflict([on1], [on1])).to.equal(true);
    expect(hostPortsConflict([on1], [tcp80])).to.equal(true);
    expect(hostPortsConflict([tcp80], [on2])).to.equal(true);
    expect(hostPortsConflict([{ port: 80, protocol: 'TCP', hostIP: '' }], [on2])).to.equal(true);
    expect(hostPortsConflict([on1], [{ port: 80, protocol: '', hostIP: '' }])).to.equal(true); // protocol defaults to TCP
  });

  it('port 0 never conflicts', () => {
    expect(hostPortsConflict([{ port: 0, protocol: 'TCP', hostIP: '' }], [{ port: 0, protocol: 'TCP', hostIP: '' }])).to.equal(false);
  });

  it('extracts host ports from containers and sidecars, not from classic init containers', () => {
    const p = pod('p', {
      containers: [{ name: 'a', ports: [{ containerPort: 8080, hostPort: 80 }, { containerPort: 9000 }, { containerPort: 53, hostPort: 53, protocol: 'UDP', hostIP: '10.0.0.1' }] }],
      initContainers: [
        { name: 'init', ports: [{ containerPort: 1, hostPort: 1000 }] },
        { name: 'side', restartPolicy: 'Always', ports: [{ containerPort: 2, hostPort: 2000 }] },
      ],
    });
    expect(podHostPorts(p)).to.deep.equal([
      { port: 80, protocol: 'TCP', hostIP: '0.0.0.0' },
      { port: 53, protocol: 'UDP', hostIP: '10.0.0.1' },
      { port: 2000, protocol: 'TCP', hostIP: '0.0.0.0' },
    ]);
  });
});
