/**
 * A server for the load tests, run in its own process so the load generator does not
 * share its event loop: `node --import tsx test/load/server-child.ts <kind> [nodes]`.
 * kind: floor (bare node:https: parse the review, answer allowed) or headroom (the
 * real app: webhook + extender). Prints one JSON line {url, caPem} once listening.
 */
import { createServer } from 'node:https';
import { DemandIntake } from '../../src/provisioning/demand-intake.js';
import { systemClock } from '../../src/provisioning/clock.js';
import { startHeadroomServer } from '../../src/server/headroom-server.js';
import { generateServingCert } from '../../src/server/serving-cert.js';
import { extenderState } from './fixtures.js';

const [kind = 'headroom', nodesArg = '0'] = process.argv.slice(2);
const tls = generateServingCert({ service: 'headroom', namespace: 'headroom-system' });

async function main(): Promise<string> {
  if (kind === 'floor') {
    const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string } };
        const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const addr = server.address();
    return `https://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }
  const state = extenderState(Number(nodesArg));
  // Room for a whole saturation run without drops skewing the work done per request.
  const intake = new DemandIntake(1_000_000);
  const server = await startHeadroomServer({
    host: '127.0.0.1', port: 0, tls, state: () => state, intake, clock: systemClock, ready: () => true,
  });
  return server.url;
}

main().then(
  (url) => process.stdout.write(`${JSON.stringify({ url, caPem: tls.caPem })}\n`),
  (err: Error) => {
    console.error(err.message);
    process.exit(1);
  },
);
// The parent closes our stdin when it is done (or dies): exit then, never linger.
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
