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

// A formatter of magnitudes that also writes negative values (differences).
function signedMagnitude(format) {
  return (value) => {
    if (value === null || value === undefined) return 'unknown';
    const v = Number(value);
    return v < 0 ? '-' + format(-v) : format(v);
  };
}

export const ns = signedMagnitude((v) => {
  if (v >= 1e9) return (v / 1e9).toFixed(2) + ' s';
  if (v >= 1e6) return (v / 1e6).toFixed(2) + ' ms';
  if (v >= 1e3) return (v / 1e3).toFixed(1) + ' us';
  return v + ' ns';
});

export const bytes = signedMagnitude((v) => {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let unit = 0;
  while (v >= 1024 && unit < units.length - 1) { v /= 1024; unit++; }
  return (unit === 0 || Number.isInteger(v) ? v : v.toFixed(1)) + ' ' + units[unit];
});

export function gbps(value) {
  return value === null || value === undefined ? '-' : Number(value).toFixed(2) + ' GB/s';
}

function plain(cell) {
  if (cell === null || cell === undefined) return '';
  return typeof cell === 'number' && !Number.isInteger(cell) ? cell.toFixed(2) : String(cell);
}

// What a column of the analyzer's tables holds, from its name: `gpu_ns`,
// `time_ns_diff`, `edge_bytes_a`, `compute_pct`, `mean_gbps` (diff's
// columns end in _a, _b and _diff: B minus A).
const words = { gpu: 'GPU', pct: '%', '1pct': '1%', gbps: 'GB/s', a: 'A', b: 'B', diff: 'B - A' };
export function columnLabel(name) {
  const parts = name.split('_');
  return parts.map((part, i) => (part === 'ns' ? (parts[i - 1] === 'time' ? '' : 'time') : words[part] ?? part))
    .filter(Boolean).join(' ');
}

export function columnFormat(name) {
  const parts = name.split('_');
  let format = null;
  if (parts.includes('ns')) format = ns;
  else if (parts.includes('bytes')) format = bytes;
  else if (parts.includes('gbps')) format = gbps;
  else if (parts.includes('pct')) format = (v) => (v === null ? '' : Number(v).toFixed(1) + '%');
  if (!format || parts[parts.length - 1] !== 'diff') return format;
  return (v) => (v > 0 ? '+' : '') + format(v);
}

function compare(x, y) {
  if (x === y) return 0;
  if (x === null || x === undefined) return 1;
  if (y === null || y === undefined) return -1;
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  return String(x).localeCompare(String(y), undefined, { numeric: true });
}

// A table from column headings and rows of cells; `format` maps a heading to
// a formatter. Clicking a heading sorts by it (again: the other way); rows
// sort by their values, not their text.
export function table(columns, rows, format = {}) {
  const body = el('tbody');
  const fill = (ordered) => body.replaceChildren(...ordered.map((row) => el('tr', {}, row.map((cell, i) => {
    const f = format[columns[i]];
    return el('td', { class: typeof cell === 'number' ? 'num' : '', text: f && cell !== null ? f(cell) : plain(cell) });
  }))));
  const headings = columns.map((c, i) => {
    const th = el('th', { text: c, title: 'sort by this column', 'aria-sort': 'none' });
    th.addEventListener('click', () => {
      const descending = th.getAttribute('aria-sort') !== 'descending';
      for (const other of headings) other.setAttribute('aria-sort', 'none');
      th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      fill([...rows].sort((x, y) => (descending ? -1 : 1) * compare(x[i], y[i])));
    });
    return th;
  });
  fill(rows);
  // Wide tables (diff's) scroll sideways inside the page's width.
  return el('div', { class: 'table-wrap' },
    el('table', { class: 'sortable' }, el('thead', {}, el('tr', {}, headings)), body));
}

// A table of the analyzer's (columns named as columnLabel reads them), in
// human units.
export function dataTable(columns, rows) {
  const labels = columns.map(columnLabel);
  const format = {};
  columns.forEach((c, i) => { const f = columnFormat(c); if (f) format[labels[i]] = f; });
  return table(labels, rows, format);
}

export function section(id, title, ...children) {
  return el('section', { id }, el('h2', { text: title }), ...children);
}

export function empty(text) {
  return el('p', { class: 'empty', text });
}
