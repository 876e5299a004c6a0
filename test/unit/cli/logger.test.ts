import { expect } from 'chai';
import { Writable } from 'node:stream';
import { createLogger, logTo, scrubSecrets, type LoggerOptions } from '../../../src/cli/logger.js';
import { parseLogOptions } from '../../../src/cli/log-options.js';

function capture(opts: Omit<LoggerOptions, 'destination'> = {}) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ ...opts, destination }), lines };
}

describe('logger (pino)', () => {
  it('writes one JSON object per line with level name, RFC 3339 time and message', () => {
    const { logger, lines } = capture();
    logTo(logger)('scaled MachineDeployment default/small to 3');
    logTo(logger, 'error')('watch: connection reset');
    expect(lines).to.have.length(2);
    const [a, b] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(a).to.include({ level: 'info', msg: 'scaled MachineDeployment default/small to 3' });
    expect(new Date(a!.time as string).toISOString()).to.equal(a!.time);
    expect(b).to.include({ level: 'error', msg: 'watch: connection reset' });
  });

  it('carries kind, namespace and name for a line about one object', () => {
    const { logger, lines } = capture();
    logTo(logger)('scaled to 3', { kind: 'MachineDeployment', namespace: 'capi', name: 'md-0' });
    logTo(logger)('taint', { kind: 'Node', name: 'n1' });
    expect(JSON.parse(lines[0]!)).to.include({ kind: 'MachineDeployment', namespace: 'capi', name: 'md-0', msg: 'scaled to 3' });
    const node = JSON.parse(lines[1]!) as Record<string, unknown>;
    expect(node).to.include({ kind: 'Node', name: 'n1' });
    expect(node).to.not.have.property('namespace');
  });

  it('honours the level', () => {
    const { logger, lines } = capture({ level: 'warn' });
    logTo(logger, 'debug')('d');
    logTo(logger)('i');
    logTo(logger, 'warn')('w');
    logTo(logger, 'error')('e');
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).to.deep.equal(['w', 'e']);
    const silent = capture({ level: 'silent' });
    logTo(silent.logger, 'error')('e');
    expect(silent.lines).to.deep.equal([]);
    const debug = capture({ level: 'debug' });
    logTo(debug.logger, 'debug')('d');
    expect(debug.lines).to.have.length(1);
  });

  it('redacts credentials in messages and fields', () => {
    const { logger, lines } = capture();
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----';
    logger.info({ token: 'abc123', nested: { password: 'hunter2' } }, `call failed: Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.sig token=s3cr3t ${pem}`);
    const line = lines[0]!;
    for (const secret of ['abc123', 'hunter2', 'eyJhbGciOiJSUzI1NiJ9', 's3cr3t', 'MIIEowIBAAKCAQEA']) expect(line).to.not.include(secret);
    const rec = JSON.parse(line) as { token: string; nested: { password: string }; msg: string };
    expect(rec.token).to.equal('[redacted]');
    expect(rec.nested.password).to.equal('[redacted]');
    expect(rec.msg).to.include('call failed').and.include('Bearer [redacted]');
  });

  it('leaves ordinary text alone', () => {
    const text = 'scaled MachineDeployment default/small from 2 to 3 (pods: 4, keyed by zone)';
    expect(scrubSecrets(text)).to.equal(text);
  });

  it('text format: one human line per record, the object in brackets', () => {
    const { logger, lines } = capture({ format: 'text' });
    logTo(logger, 'warn')('not removing', { kind: 'Machine', namespace: 'ns', name: 'm1' });
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^\d{4}-\d\d-\d\dT[\d:.]+Z WARN {2}not removing \[Machine ns\/m1\]$/);
  });

  it('--log-level and --log-format are checked with a one-line usage error', () => {
    expect(parseLogOptions({}, 'controller', 'json')).to.deep.equal({ level: 'info', format: 'json' });
    expect(parseLogOptions({ 'log-level': 'debug', 'log-format': 'text' }, 'controller', 'json')).to.deep.equal({ level: 'debug', format: 'text' });
    expect(() => parseLogOptions({ 'log-level': 'verbose' }, 'controller', 'json')).to.throw(/^controller: --log-level must be one of trace, debug, info, warn, error, fatal, silent, got "verbose"$/);
    expect(() => parseLogOptions({ 'log-format': 'xml' }, 'controller', 'json')).to.throw(/--log-format must be json or text/);
  });
});
