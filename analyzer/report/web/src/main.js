// `apptracer report`: renders the JSON the analyzer embedded in the page
// (analyzer/report/report_data.cpp) into sections. Everything runs offline:
// the libraries are bundled into this script at build time.
import { el, ns, bytes, gbps, table, dataTable, section, empty } from './dom.js';
import { charts, barChart, lineChart, transferChart, timelineChart } from './charts.js';
import { graphSection } from './graph.js';

const data = JSON.parse(document.getElementById('report-data').textContent);

function header() {
  const o = data.overview;
  return el('header', {},
    el('h1', { text: `apptracer report: ${o.trace}` }),
    el('p', { class: 'meta', text: `command: ${o.command_line || 'unknown'}` }),
    el('p', { class: 'meta', text: `host ${o.host || '?'}, trace ${o.status || '?'}, tracer ${o.tracer_version || '?'}; ` +
      (o.devices.map((d) => `GPU ${d.id} ${d.name}${d.numa_node >= 0 ? ` (NUMA node ${d.numa_node})` : ''}`).join(', ') || 'no GPU recorded') }),
    el('p', { class: 'meta', text: `savings estimated from ${data.link_model}; ${o.time_origin}` }));
}

function nav() {
  const links = [['summary', 'Summary'], ['diagnoses', 'Diagnoses'], ...(data.comparison ? [['comparison', 'Comparison']] : []),
    ['kernels', 'Top kernels'], ['transfers', 'Transfers'], ['memory', 'Memory'], ['timeline', 'Timeline'], ['nvtx', 'NVTX'],
    ['analyses', 'Analyses'], ['dvdg', 'Data flow'], ['whatif', 'What-if']];
  return el('nav', {}, links.map(([id, text]) => el('a', { href: `#${id}`, text })));
}

function diagnoses() {
  if (!data.findings.length) return section('diagnoses', 'Diagnoses', empty('No findings: nothing crossed a rule\'s threshold.'));
  const total = data.findings.reduce((sum, f) => sum + (f.saving_ns || 0), 0);
  const cards = data.findings.map((f) => {
    const where = [f.where.names.join('; '), f.where.nvtx_range && `NVTX ${f.where.nvtx_range}`,
      f.where.call_site && `called by ${f.where.call_site}`].filter(Boolean).join(' | ');
    return el('div', { class: f.cost_ns === 0 && f.saving_ns === 0 ? 'finding correctness' : 'finding' },
      el('div', { class: 'rule', text: f.rule }),
      el('div', { class: 'what', text: f.what }),
      el('div', { class: 'numbers' },
        el('span', { text: `cost now: ${f.cost_ns ? ns(f.cost_ns) : '-'}` }),
        f.saving_ns === null
          ? el('span', { class: 'saving unknown', text: 'estimated saving: unknown', title: 'the link model has no numbers for this path; --system FILE gives them' })
          : el('span', { class: 'saving', text: `estimated saving: ${ns(f.saving_ns)}` })),
      el('div', { class: 'fix', text: f.fix }),
      el('details', {}, el('summary', { text: 'where and how estimated' }),
        el('p', { text: where || 'no location recorded' }),
        el('p', { text: `rows: ${f.where.rows.map((r) => `${r.table}:${r.id}`).join(' ') || 'none'}` }),
        el('p', { text: `estimate: ${f.estimate}` })));
  });
  const unknown = data.findings.filter((f) => f.saving_ns === null).length;
  return section('diagnoses', 'Diagnoses',
    el('p', { text: `${data.findings.length} finding(s), largest estimated saving first; ${ns(total)} in all (savings can overlap)` +
      (unknown ? `; ${unknown} with no estimate (the link model lacks their path).` : '.') }),
    ...cards);
}

// Each row's share of the traced time, drawn as a bar.
function share(value, whole) {
  const percent = whole > 0 ? Math.min(100, (100 * value) / whole) : 0;
  return el('div', { class: 'share' },
    el('div', { class: 'track' }, el('div', { class: 'bar', style: `width: ${percent.toFixed(1)}%` })),
    el('span', { text: `${percent.toFixed(1)}%` }));
}

function whereTheTimeWent(s) {
  if (!s.time.length) return empty('Nothing was timed.');
  const rows = s.time.map((t) => el('tr', {}, el('td', { text: t.what }), el('td', { text: t.side }),
    el('td', { class: 'num', text: ns(t.ns) }), el('td', {}, share(t.ns, s.span_ns))));
  return el('table', { class: 'time' },
    el('thead', {}, el('tr', {}, ['what', 'on', 'time', 'share of the traced time'].map((c) => el('th', { text: c })))),
    el('tbody', {}, rows));
}

function summary() {
  const s = data.summary;
  const card = (value, label) => el('div', { class: 'card' }, el('div', { class: 'value', text: value }), el('div', { class: 'label', text: label }));
  const cards = [card(ns(s.span_ns), 'traced time'), card(String(s.kernels), `kernel launches, ${ns(s.kernel_ns)} on the GPU`),
    card(String(s.copies), 'copies'), card(String(s.memsets), 'memsets'),
    ...(s.migrations ? [card(String(s.migrations), 'unified-memory migrations')] : []), card(String(s.allocations), 'allocations'),
    ...s.devices.map((d) => card(`${s.span_ns ? (100 * d.busy_ns / s.span_ns).toFixed(1) : 0}%`, `GPU ${d.device} busy (${ns(d.busy_ns)})`))];
  const paths = s.paths.length
    ? table(['path', 'transfers', 'bytes', 'GPU time', 'achieved', 'peak'],
      s.paths.map((p) => [p.path, p.count, p.bytes, p.time_ns, p.gbps, p.peak_gbps]),
      { bytes, 'GPU time': ns, achieved: gbps, peak: gbps })
    : empty('No copies.');
  const kernelTraffic = data.kernel_traffic.length
    ? [el('h3', { text: 'Kernel loads and stores over a path' }),
      el('p', { class: 'note', text: 'Bytes kernels read or wrote in another GPU\'s memory (peer access) or in pinned host memory, which no copy moved: exact with apptracer record --exact, else a bound (each pointer argument reaching to its allocation\'s end).' }),
      table(['path', 'kind', 'kernels', 'bytes', 'bytes are'],
        data.kernel_traffic.map((k) => [k.path, k.kind, k.kernels, k.bytes, k.bytes_are]), { bytes })]
    : [];
  return section('summary', 'Summary', el('div', { class: 'cards' }, cards),
    el('h3', { text: 'Where the time went' }),
    el('p', { class: 'note', text: 'GPU and host times overlap (the host waits while the GPU works): each is a share of the traced time.' }),
    whereTheTimeWent(s),
    el('h3', { text: 'Bytes moved per path' }), paths, ...kernelTraffic);
}

// `apptracer diff` of this trace (A) with another (B): its tables as it prints them.
function comparison() {
  const c = data.comparison;
  return section('comparison', 'Comparison',
    el('p', { text: `A: ${c.a}, B: ${c.b}. Differences are B minus A, largest change first (apptracer diff A B prints the same tables).` }),
    ...c.notes.map((note) => el('p', { class: 'note', text: note })),
    ...c.tables.flatMap((t) => [el('h3', { text: t.name.replaceAll('_', ' ') }),
      t.rows.length ? dataTable(t.columns, t.rows) : empty('nothing to compare')]));
}

function kernels() {
  if (!data.kernels.length) return section('kernels', 'Top kernels', empty('No kernels.'));
  return section('kernels', 'Top kernels',
    barChart(data.kernels.map((k) => k.name), data.kernels.map((k) => k.total_ns), 'GPU time', ns),
    table(['kernel', 'launches', 'GPU time', 'mean'], data.kernels.map((k) => [k.name, k.count, k.total_ns, k.mean_ns]),
      { 'GPU time': ns, mean: ns }));
}

function transfers() {
  if (!data.transfers.length) return section('transfers', 'Transfers', empty('No timed copies.'));
  return section('transfers', 'Transfers',
    el('p', { class: 'note', text: 'Each copy\'s bandwidth against its size; the dashed line is its path\'s peak (from the link model).' }),
    transferChart(data.transfers),
    table(['copy', 'path', 'bytes', 'GPU time', 'achieved', 'peak'],
      data.transfers.slice(0, 50).map((t) => [t.id, t.path, t.bytes, t.time_ns, t.gbps, t.peak_gbps]),
      { bytes, 'GPU time': ns, achieved: gbps, peak: gbps }));
}

function memory() {
  if (!data.memory.length) return section('memory', 'Memory in use', empty('No allocations.'));
  return section('memory', 'Memory in use', lineChart(data.memory, 'bytes held', bytes, true));
}

function timeline() {
  const t = data.timeline;
  if (!t.lanes.length) return section('timeline', 'Timeline', empty('No GPU work.'));
  const trace = data.overview.trace;
  return section('timeline', 'Timeline',
    el('p', { class: 'note', text: `GPU work per stream, unified-memory migrations and the host's synchronizations, from the first GPU work ` +
      `(${t.start_ms.toFixed(3)} ms) to the last (${t.end_ms.toFixed(3)} ms); the trace ran ${t.trace_end_ms.toFixed(3)} ms. ` +
      'Neighbouring bars of one kind are merged.' }),
    timelineChart(t.lanes, t.start_ms, t.end_ms), perfetto());
}

// Every call, flow and counter: `apptracer timeline`'s Perfetto file, carried
// in the page when small enough (opened in ui.perfetto.dev by postMessage, its
// documented way, or saved), else the command that writes it.
function perfetto() {
  const trace = data.overview.trace;
  const origin = 'https://ui.perfetto.dev';
  const command = el('p', { class: 'perfetto' }, 'Every call, flow and counter in Perfetto: run ',
    el('code', { text: `apptracer timeline ${trace} -o timeline.pftrace` }), ', open ',
    el('a', { href: origin, target: '_blank', rel: 'noopener', text: 'ui.perfetto.dev' }),
    ' and drop timeline.pftrace on it (or "Open trace file").');
  const embedded = data.perfetto.base64;
  if (!embedded) return command;
  const name = `${trace.split('/').pop().replace(/\.db$/, '')}.pftrace`;
  const open = el('button', { type: 'button', text: 'Open the full timeline in Perfetto' });
  open.addEventListener('click', () => {
    const buffer = Uint8Array.from(atob(embedded), (c) => c.charCodeAt(0)).buffer;
    const ui = window.open(origin);
    const ping = setInterval(() => ui.postMessage('PING', origin), 100);
    const ready = (event) => {
      if (event.origin !== origin || event.data !== 'PONG') return;
      clearInterval(ping);
      window.removeEventListener('message', ready);
      ui.postMessage({ perfetto: { buffer, title: trace, fileName: name } }, origin);
    };
    window.addEventListener('message', ready);
  });
  return el('div', { class: 'perfetto toolbar' }, open,
    el('a', { href: `data:application/octet-stream;base64,${embedded}`, download: name, text: `save ${name}` }),
    el('span', { class: 'note', text: ` (opens ${origin} in a new tab and hands it the timeline; nothing else leaves the page)` }),
    command);
}

function nvtx() {
  if (!data.nvtx.length) return section('nvtx', 'NVTX ranges', empty('No NVTX ranges in this trace.'));
  return section('nvtx', 'NVTX ranges',
    barChart(data.nvtx.map((r) => r.name), data.nvtx.map((r) => r.total_ns), 'time in range', ns),
    table(['range', 'count', 'time', 'GPU time of work issued in it'], data.nvtx.map((r) => [r.name, r.count, r.total_ns, r.gpu_ns]),
      { time: ns, 'GPU time of work issued in it': ns }));
}

function analyses() {
  const parts = [];
  for (const t of data.analyses) {
    parts.push(el('h3', { text: t.name.replaceAll('_', ' ') }));
    parts.push(t.rows.length ? dataTable(t.columns, t.rows) : empty('nothing to show'));
  }
  if (data.bandwidth.length) parts.push(el('h3', { text: 'copy bandwidth over time' }), lineChart(data.bandwidth, 'GB/s', (v) => Number(v).toFixed(1)));
  if (data.queue.length) parts.push(el('h3', { text: 'queue length over time' }), lineChart(data.queue, 'operations queued', (v) => v, true));
  return section('analyses', 'Analyses (Holistic Trace Analysis)', ...parts);
}

function whatif() {
  if (!data.whatif.length) {
    return section('whatif', 'What-if', empty('No what-if results in this trace (apptracer whatif TRACE --system system.json stores them).'));
  }
  return section('whatif', 'What-if', ...data.whatif.flatMap((t) => [el('h3', { text: t.name }), dataTable(t.columns, t.rows)]));
}

function render() {
  const root = document.getElementById('report');
  const graph = graphSection(data.dvdg);
  root.replaceChildren(...[header(), nav(), summary(), diagnoses(), data.comparison && comparison(), kernels(), transfers(),
    memory(), timeline(), nvtx(), analyses(), section('dvdg', 'Data flow (DVDG)', graph.node), whatif()].filter(Boolean));
  const cy = graph.start();
  // What the browser test (tests/report/browser_test.cjs) checks the page against.
  window.apptracerReport = { charts: charts.length, chartObjects: charts, graphNodes: cy ? cy.nodes().length : 0,
    graphEdges: cy ? cy.edges().length : 0, findings: data.findings.length, cy };
  document.body.dataset.ready = '1';
}

render();
