// Field-by-field comparison of two JSON values; returns every difference as
// "path: expected X, got Y" so a failure names the exact field.
function show(v) {
  const s = JSON.stringify(v);
  return s !== undefined && s.length > 80 ? `${s.slice(0, 77)}...` : String(s);
}

function kind(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

export function compareJson(expected, actual, path = '$', diffs = []) {
  const ke = kind(expected);
  const ka = kind(actual);
  if (ke !== ka) {
    const shown = (k, v) => (k === 'null' ? 'null' : `${k} ${show(v)}`);
    diffs.push(`${path}: expected ${shown(ke, expected)}, got ${shown(ka, actual)}`);
    return diffs;
  }
  if (ke === 'array') {
    if (expected.length !== actual.length)
      diffs.push(`${path}: expected ${expected.length} elements, got ${actual.length}`);
    const n = Math.min(expected.length, actual.length);
    for (let i = 0; i < n; i++) {
      // Fields are easier to find by name than by index.
      const e = expected[i];
      const label = kind(e) === 'object' && 'type' in e && typeof e.name === 'string' ? `(${e.name})` : '';
      compareJson(e, actual[i], `${path}[${i}]${label}`, diffs);
    }
  } else if (ke === 'object') {
    for (const k of Object.keys(expected)) {
      if (!Object.hasOwn(actual, k)) diffs.push(`${path}.${k}: missing (expected ${show(expected[k])})`);
      else compareJson(expected[k], actual[k], `${path}.${k}`, diffs);
    }
    for (const k of Object.keys(actual))
      if (!Object.hasOwn(expected, k)) diffs.push(`${path}.${k}: unexpected (got ${show(actual[k])})`);
  } else if (expected !== actual) {
    diffs.push(`${path}: expected ${show(expected)}, got ${show(actual)}`);
  }
  return diffs;
}
