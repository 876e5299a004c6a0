/**
 * Cluster Autoscaler's per-group options, the `cluster.x-k8s.io/autoscaling-options-*`
 * annotations of its clusterapi provider, as Headroom reads them: Go durations (or
 * plain seconds) and fractions in [0, 1]. One that does not parse is never silently
 * accepted: `plan` fails naming the annotation, and the controller reports it on the
 * group (a Warning Event) and keeps the pool's setting for that option. Pure.
 */

export const AUTOSCALING_OPTIONS_PREFIX = 'cluster.x-k8s.io/autoscaling-options-';

/** Every option key Cluster Autoscaler defines, and the value it takes. */
export const AUTOSCALING_OPTION_KINDS: Readonly<Record<string, 'duration' | 'fraction'>> = {
  scaledownunneededtime: 'duration',
  scaledownunreadytime: 'duration',
  maxnodeprovisiontime: 'duration',
  scaledownutilizationthreshold: 'fraction',
  scaledowngpuutilizationthreshold: 'fraction',
};

/** A Go duration (`15m`, `1h30m`, `90s`) or plain seconds, in ms; undefined when unreadable. */
export function parseOptionDuration(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const s = raw.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  let matched = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * unit[m[2]!]!;
    matched = re.lastIndex;
  }
  return matched === s.length && matched > 0 ? total : undefined;
}

/** A fraction in [0, 1] (`0.5`, `.5`, `1`); undefined when unreadable or out of range. */
export function parseOptionFraction(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\s*\d*\.?\d+\s*$/.test(raw)) return undefined;
  const v = Number(raw);
  return v >= 0 && v <= 1 ? v : undefined;
}

/** Each `autoscaling-options-*` annotation that does not parse (or is no option), with why. */
export function autoscalingOptionProblems(annotations: Readonly<Record<string, string>>): Array<{ annotation: string; problem: string }> {
  const out: Array<{ annotation: string; problem: string }> = [];
  for (const [key, raw] of Object.entries(annotations)) {
    if (!key.startsWith(AUTOSCALING_OPTIONS_PREFIX)) continue;
    const option = key.slice(AUTOSCALING_OPTIONS_PREFIX.length);
    const kind = AUTOSCALING_OPTION_KINDS[option];
    if (kind === undefined) {
      out.push({ annotation: key, problem: `unknown option (Cluster Autoscaler's are ${Object.keys(AUTOSCALING_OPTION_KINDS).join(', ')})` });
    } else if (kind === 'duration' && parseOptionDuration(raw) === undefined) {
      out.push({ annotation: key, problem: `invalid duration ${JSON.stringify(raw)} (a Go duration such as 10m or 1h30m, or seconds)` });
    } else if (kind === 'fraction' && parseOptionFraction(raw) === undefined) {
      out.push({ annotation: key, problem: `invalid value ${JSON.stringify(raw)} (a fraction from 0 to 1, such as 0.5)` });
    }
  }
  return out;
}
