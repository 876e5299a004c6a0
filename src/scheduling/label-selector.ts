import type { V1LabelSelector, V1LabelSelectorRequirement, V1NodeSelectorRequirement } from '@kubernetes/client-node';

/** A label selector, re-exported so callers need not import the client for types. */
export type LabelSelector = V1LabelSelector;

/**
 * Label selectors with Kubernetes semantics (k8s.io/apimachinery labels.Selector):
 * - a nil (null/undefined) LabelSelector matches NOTHING;
 * - an empty LabelSelector (`{}`) matches EVERYTHING;
 * - matchLabels and matchExpressions are ANDed;
 * - `NotIn` and `DoesNotExist` match objects that lack the key;
 * - an unknown operator matches nothing.
 */
export function matchesLabelSelector(selector: V1LabelSelector | undefined | null, labels: Record<string, string>): boolean {
  if (selector === undefined || selector === null) return false;
  const ml = selector.matchLabels;
  if (ml) for (const k in ml) if (labels[k] !== ml[k]) return false;
  const exprs = selector.matchExpressions;
  if (exprs) for (const e of exprs) if (!matchesLabelSelectorRequirement(e, labels)) return false;
  return true;
}

/** One matchExpressions entry of a LabelSelector (In, NotIn, Exists, DoesNotExist). */
export function matchesLabelSelectorRequirement(req: V1LabelSelectorRequirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, req.key);
  switch (req.operator) {
    case 'In': return has && (req.values ?? []).includes(labels[req.key]!);
    case 'NotIn': return !has || !(req.values ?? []).includes(labels[req.key]!);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    default: return false;
  }
}

/**
 * One NodeSelectorRequirement (node affinity matchExpressions, PV node affinity):
 * In, NotIn, Exists, DoesNotExist, and Gt/Lt, which compare the label value and the
 * single value as integers; a missing or non-integer label never matches Gt/Lt.
 */
export function matchesNodeSelectorRequirement(req: V1NodeSelectorRequirement, labels: Record<string, string>): boolean {
  switch (req.operator) {
    case 'Gt':
    case 'Lt': {
      const has = Object.prototype.hasOwnProperty.call(labels, req.key);
      if (!has || req.values?.length !== 1) return false;
      const want = parseInteger(req.values[0]!);
      const got = parseInteger(labels[req.key]!);
      if (want === undefined || got === undefined) return false;
      return req.operator === 'Gt' ? got > want : got < want;
    }
    default:
      return matchesLabelSelectorRequirement(req, labels);
  }
}

const INTEGER = /^[+-]?[0-9]+$/;

/** strconv.ParseInt(s, 10, 64) semantics, within JS number precision. */
function parseInteger(s: string): number | undefined {
  return INTEGER.test(s) ? Number(s) : undefined;
}

/**
 * A label selector in its string form (the scale subresource's status.selector,
 * `kubectl -l`): comma-separated `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`,
 * `k notin (a,b)`, all ANDed. An empty string matches everything; a term this parser
 * cannot read matches nothing.
 */
export function matchesSelectorString(selector: string, labels: Record<string, string>): boolean {
  const has = (k: string) => Object.prototype.hasOwnProperty.call(labels, k);
  const terms = selector.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  for (const raw of terms) {
    const t = raw.trim();
    if (t === '') continue;
    let m: RegExpMatchArray | null;
    if ((m = t.match(/^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const values = m[3]!.split(',').map((v) => v.trim());
      const inSet = has(m[1]!) && values.includes(labels[m[1]!]!);
      if (m[2] === 'in' ? !inSet : inSet) return false;
    } else if ((m = t.match(/^([^\s!=]+)\s*!=\s*(\S*)$/))) {
      if (has(m[1]!) && labels[m[1]!] === m[2]) return false;
    } else if ((m = t.match(/^([^\s!=]+)\s*==?\s*(\S*)$/))) {
      if (!has(m[1]!) || labels[m[1]!] !== m[2]) return false;
    } else if ((m = t.match(/^!\s*([^\s!=]+)$/))) {
      if (has(m[1]!)) return false;
    } else if ((m = t.match(/^([^\s!=]+)$/))) {
      if (!has(m[1]!)) return false;
    } else return false;
  }
  return true;
}
