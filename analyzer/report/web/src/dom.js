// Small DOM and formatting helpers shared by the report's sections.
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function ns(value) {
  if (value === null || value === undefined) return 'unknown';
  const v = Number(value);
  if (v >= 1e9) return (v / 1e9).toFixed(2) + ' s';
  if (v >= 1e6) return (v / 1e6).toFixed(2) + ' ms';
  if (v >= 1e3) return (v / 1e3).toFixed(1) + ' us';
  return v + ' ns';
}

export function bytes(value) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(value);
  let unit = 0;
  while (v >= 1024 && unit < units.length - 1) { v /= 1024; unit++; }
  return (unit === 0 || Number.isInteger(v) ? v : v.toFixed(1)) + ' ' + units[unit];
}

export function gbps(value) {
  return value === null || value === undefined ? '-' : Number(value).toFixed(2) + ' GB/s';
}

// A table from column names and rows of cells; `format` maps a column to a formatter.
export function table(columns, rows, format = {}) {
  const head = el('tr', {}, columns.map((c) => el('th', { text: c })));
  const body = rows.map((row) => el('tr', {}, row.map((cell, i) => {
    const f = format[columns[i]];
    const plain = typeof cell === 'number' && !Number.isInteger(cell) ? cell.toFixed(2) : String(cell);
    const text = f ? f(cell) : cell === null ? '' : plain;
    return el('td', { class: typeof cell === 'number' ? 'num' : '' , text });
  })));
  return el('table', {}, el('thead', {}, head), el('tbody', {}, body));
}

export function section(id, title, ...children) {
  return el('section', { id }, el('h2', { text: title }), ...children);
}

export function empty(text) {
  return el('p', { class: 'empty', text });
}
