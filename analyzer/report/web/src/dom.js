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

// A formatter of magnitudes that also writes negative values (differences);
// `digits` (optional) is how many decimals to write.
function signedMagnitude(format) {
  return (value, digits) => {
    if (value === null || value === undefined) return 'unknown';
    const v = Number(value);
    return v < 0 ? '-' + format(-v, digits) : format(v, digits);
  };
}

export const ns = signedMagnitude((v, digits) => {
  if (v >= 1e9) return (v / 1e9).toFixed(digits ?? 2) + ' s';
  if (v >= 1e6) return (v / 1e6).toFixed(digits ?? 2) + ' ms';
  if (v >= 1e3) return (v / 1e3).toFixed(digits ?? 1) + ' us';
  return (digits === undefined ? Math.round(v) : v.toFixed(digits)) + ' ns';
});

export const bytes = signedMagnitude((v, digits) => {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let unit = 0;
  while (v >= 1024 && unit < units.length - 1) { v /= 1024; unit++; }
  return (unit === 0 || Number.isInteger(v) ? v : v.toFixed(digits ?? 1)) + ' ' + units[unit];
});

export function gbps(value, digits) {
  return value === null || value === undefined ? '-' : Number(value).toFixed(digits ?? 2) + ' GB/s';
}

export const fixed = (value, digits) => Number(value).toFixed(digits ?? 1);

// A tick callback writing an axis's labels with `format(value, digits)`, as
// few decimals as keep every label distinct (ticks 0.05 apart written with
// one decimal would read 0.1, 0.1).
export function distinctTicks(format) {
  let key = null;
  let labels = [];
  return (value, index, ticks) => {
    const now = ticks.map((t) => t.value).join();
    if (now !== key) {
      key = now;
      for (let digits = 0; digits <= 6; digits++) {
        labels = ticks.map((t) => format(t.value, digits));
        if (new Set(labels).size === labels.length) break;
      }
    }
    return labels[index];
  };
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

// Cells longer than this (kernel names) may break anywhere, so the table
// fits the page; shorter ones break only between words.
const kLongCell = 40;

// A table from column headings and rows of cells; `format` maps a heading to
// a formatter. Clicking a heading sorts by it (again: the other way); rows
// sort by their values, not their text.
export function table(columns, rows, format = {}) {
  const body = el('tbody');
  const fill = (ordered) => body.replaceChildren(...ordered.map((row) => el('tr', {}, row.map((cell, i) => {
    const f = format[columns[i]];
    const text = f && cell !== null ? f(cell) : plain(cell);
    return el('td', { class: typeof cell === 'number' ? 'num' : text.length > kLongCell ? 'long' : '', text });
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

// The sections below the first screen, each a <details> closed by default
// (the page opens short) whose body `build()` (an array of nodes) makes on
// first opening, so its plots are drawn at their size; `shown()` runs
// after, once the body is in the page (the graph's layout needs its box).
export const collapsibles = [];
export function collapsible(id, title, blurb, build, { open = false, shown = null } = {}) {
  const details = el('details', { class: 'section', id },
    el('summary', {}, el('h2', { text: title }), blurb ? el('span', { class: 'blurb', text: blurb }) : null));
  let built = false;
  const fill = () => {
    if (built) return;
    built = true;
    details.append(el('div', { class: 'body' }, build()));
    if (shown) shown();
  };
  details.addEventListener('toggle', () => { if (details.open) fill(); });
  collapsibles.push({ details, fill });
  if (open) details.open = true;
  return details;
}

export function empty(text) {
  return el('p', { class: 'empty', text });
}
