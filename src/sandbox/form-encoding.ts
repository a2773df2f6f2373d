/**
 * Stripe-style `application/x-www-form-urlencoded` bodies with bracket notation
 * (`metadata[order_id]=1`, `expand[]=charge`) parsed into plain nested values.
 */

/** A parsed form value: a string, a list of strings, or a map of strings. */
export type FormValue = string | string[] | Map<string, string>;

/** The outcome of parsing a form body. */
export type FormParseResult =
  | {
      readonly kind: 'parsed';
      readonly fields: Map<string, FormValue>;
      readonly pairs: readonly [string, string][];
    }
  | { readonly kind: 'malformed'; readonly message: string; readonly param: string | undefined };

const keyPattern = /^([A-Za-z0-9_.-]+)(?:\[([^[\]]*)\])?$/;

/** Splits a query string or form body into decoded pairs; `undefined` on bad percent-encoding. */
export function decodePairs(text: string): [string, string][] | undefined {
  const pairs: [string, string][] = [];
  if (text.length === 0) return pairs;
  for (const part of text.split('&')) {
    if (part.length === 0) continue;
    const equals = part.indexOf('=');
    const rawKey = equals === -1 ? part : part.slice(0, equals);
    const rawValue = equals === -1 ? '' : part.slice(equals + 1);
    try {
      pairs.push([
        decodeURIComponent(rawKey.replace(/\+/g, ' ')),
        decodeURIComponent(rawValue.replace(/\+/g, ' ')),
      ]);
    } catch {
      return undefined;
    }
  }
  return pairs;
}

/**
 * Parses bracket notation one level deep, which is all the sandbox's operations accept.
 * Mixing shapes for one name (`a=1&a[b]=2`) or nesting deeper is reported as malformed.
 */
export function parseForm(text: string): FormParseResult {
  const pairs = decodePairs(text);
  if (pairs === undefined) {
    return {
      kind: 'malformed',
      message: 'Invalid percent-encoding in the request body',
      param: undefined,
    };
  }
  return parseFormPairs(pairs);
}

/** Like {@link parseForm}, for pairs that are already decoded (a query string). */
export function parseFormPairs(pairs: readonly (readonly [string, string])[]): FormParseResult {
  const fields = new Map<string, FormValue>();
  for (const [key, value] of pairs) {
    const match = keyPattern.exec(key);
    if (match === null) {
      return {
        kind: 'malformed',
        message: `Invalid parameter name: ${JSON.stringify(key)}`,
        param: key,
      };
    }
    const name = match[1] ?? '';
    const subKey = match[2];
    const existing = fields.get(name);
    if (subKey === undefined) {
      if (existing !== undefined && typeof existing !== 'string') {
        return {
          kind: 'malformed',
          message: `Invalid value for ${name}: mixed shapes`,
          param: name,
        };
      }
      fields.set(name, value);
    } else if (subKey === '') {
      if (existing === undefined) fields.set(name, [value]);
      else if (Array.isArray(existing)) existing.push(value);
      else
        return {
          kind: 'malformed',
          message: `Invalid value for ${name}: mixed shapes`,
          param: name,
        };
    } else {
      if (existing === undefined) fields.set(name, new Map([[subKey, value]]));
      else if (existing instanceof Map) existing.set(subKey, value);
      else
        return {
          kind: 'malformed',
          message: `Invalid value for ${name}: mixed shapes`,
          param: name,
        };
    }
  }
  return {
    kind: 'parsed',
    fields,
    pairs: pairs.map(([key, value]) => [key, value] as [string, string]),
  };
}
