/**
 * Exact Kubernetes quantities for DRA's CEL `quantity` values and device capacity:
 * a bigint count of nano-units, so "1Gi" == "1073741824" and "500m" < "1" compare as
 * resource.Quantity.Cmp does. Sub-nano values round up, as Quantity does.
 */
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const QUANTITY = /^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?[0-9]+))?$/;

export class DraQuantityError extends Error {}

/** A quantity string in nano-units; throws DraQuantityError for one kube-apiserver would refuse. */
export function parseNanoQuantity(input: string): bigint {
  const m = QUANTITY.exec(input.trim());
  if (!m) throw new DraQuantityError(`invalid quantity ${JSON.stringify(input)}`);
  const [, sign, num, suffix, exp] = m;
  const [whole, frac = ''] = num!.split('.');
  let digits = BigInt(`${whole || '0'}${frac}`);
  // value = digits * 10^(-frac.length) * multiplier; in nano-units: * 10^9.
  let pow10 = 9 - frac.length;
  let pow2 = 0;
  if (suffix !== undefined && suffix in BINARY) pow2 = BINARY[suffix]!;
  else if (suffix !== undefined) pow10 += DECIMAL[suffix]!;
  else if (exp !== undefined) pow10 += Number(exp);
  if (Math.abs(pow10) > 60) throw new DraQuantityError(`quantity ${JSON.stringify(input)} is out of range`);
  digits *= 2n ** BigInt(pow2);
  if (pow10 >= 0) digits *= 10n ** BigInt(pow10);
  else {
    const d = 10n ** BigInt(-pow10);
    digits = (digits + d - 1n) / d;
  }
  return sign === '-' ? -digits : digits;
}
