import type { V1LabelSelector, V1LabelSelectorRequirement, V1NodeSelectorRequirement } from '@kubernetes/client-node';

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
