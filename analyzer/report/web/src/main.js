// `apptracer report`: renders the JSON the analyzer embedded in the page
// (analyzer/report/report_data.cpp). The first screen is the steady-state
// step, what changed against another run (--compare) and the findings
// `apptracer diagnose` shows; every other section is collapsed below it and
// drawn when opened. Everything runs offline: the libraries are bundled into
// this script at build time.
import { el, ns, bytes, gbps, table, dataTable, section, empty, collapsible, collapsibles } from './dom.js';
import { charts, barChart, lineChart, memoryChart, transferChart, timelineChart } from './charts.js';
import { graphSection } from './graph.js';

const data = JSON.parse(document.getElementById('report-data').textContent);

function header() {
  const o = data.overview;
  const gpus = o.devices.map((d) => `GPU ${d.id} ${d.name}${d.numa_node >= 0 ? ` (NUMA node ${d.numa_node})` : ''}`).join(', ');
  return el('header', {},
    el('h1', { text: `apptracer report: ${o.trace}` }),
    el('p', { class: 'meta', text: `${o.command_line || 'command unknown'} | host ${o.host || '?'}, ${gpus || 'no GPU recorded'}, ` +
      `trace ${o.status || '?'}, tracer ${o.tracer_version || '?'}` }),
    el('p', { class: 'meta', text: `savings estimated from ${data.link_model}; ${o.time_origin}` }));
}

const sectionNames = [['step', 'Step'], ['comparison', 'Changes'], ['diagnoses', 'Findings'], ['more-findings', 'More findings'],
  ['memory', 'Memory'], ['whole-run', 'Whole run'], ['kernels', 'Kernels'], ['modules', 'Modules'], ['transfers', 'Transfers'], ['timeline', 'Timeline'],
  ['whatif', 'What-if'], ['nvtx', 'NVTX'], ['analyses', 'Analyses'], ['dvdg', 'Data flow']];

// Links to the sections present; following one opens it.
function nav(present) {
  return el('nav', {}, sectionNames.filter(([id]) => present.has(id)).map(([id, text]) => {
    const link = el('a', { href: `#${id}`, text });
    link.addEventListener('click', () => { const target = document.getElementById(id); if (target.tagName === 'DETAILS') target.open = true; });
    return link;
  }));
}

const card = (value, label, title) => el('div', { class: 'card', ...(title ? { title } : {}) },
  el('div', { class: 'value', text: value }), el('div', { class: 'label', text: label }));

const count = (n) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

// The steady-state step: what one step takes and issues, and how the steps
// were found; without steps, the whole run and why none were found.
function step() {
  const s = data.step;
  if (!s.found) {
    return section('step', 'The run (no steps)',
      el('p', { class: 'note', text: `${s.why}: the numbers and findings are the whole run's.` }),
      el('div', { class: 'cards' }, card(ns(s.span_ns), 'traced time'),
        ...s.devices.map((d) => card(`${d.busy_pct.toFixed(1)}%`, `GPU ${d.device} busy (${ns(d.busy_ns)})`)),
        card(String(s.launches), 'kernel launches'), card(String(s.copies), 'copies'),
        ...(s.memsets ? [card(String(s.memsets), 'memsets')] : [])));
  }
  return section('step', 'The steady-state step', ...s.processes.map((p) => el('div', { class: 'process' },
    s.processes.length > 1 ? el('h3', { text: `process ${p.pid}` }) : null,
    el('div', { class: 'cards' },
      card(ns(p.median_wall_ns), 'median step time'),
      card(`${p.gpu_busy_pct.toFixed(1)}%`, `GPU busy in it (${ns(p.median_gpu_busy_ns)})`),
      card(count(p.launches), 'kernel launches per step'),
      card(count(p.copies), 'copies per step'),
      ...(p.memsets ? [card(count(p.memsets), 'memsets per step')] : []),
      card(ns(p.host_gap_ns), 'GPUs idle per step', 'the part of a step no GPU of the process ran anything'),
      card(`${p.steady_steps} of ${p.steps}`, 'steady steps', `the first ${p.steps - p.steady_steps} are start-up`)),
    el('p', { class: 'note', text: `Steps found from ${p.found_from}; start-up before the first steady step took ${ns(p.startup_ns)}. ` +
      'Medians over the steady steps.' }))));
}

// What changed against trace B: the rows of `apptracer diff`'s tables that
// moved beyond the threshold.
function comparison() {
  const c = data.comparison;
  const parts = [];
  const quiet = [];
  for (const t of c.tables) {
    const title = t.name.replaceAll('_', ' ');
    if (!t.rows.length) { quiet.push(`${title} (${t.unchanged} unchanged row(s))`); continue; }
    parts.push(el('h3', { text: title }), dataTable(t.columns, t.rows),
      t.unchanged ? el('p', { class: 'note', text: `${t.unchanged} unchanged row(s) left out.` }) : null);
  }
  return section('comparison', 'What changed',
    el('p', { text: `A: ${c.a}, B: ${c.b}. B minus A, largest change first; rows within ${c.threshold_pct}% ` +
      `(times within ${ns(c.time_floor_ns)}) are left out (apptracer diff A B lists every row).` }),
    ...c.notes.map((note) => el('p', { class: 'note', text: note })),
    ...parts,
    quiet.length ? el('p', { class: 'note', text: `Nothing changed in ${quiet.join(', ')}.` }) : null,
    parts.length ? null : empty('Nothing changed beyond the threshold.'));
}

// A finding's saving as diagnose prints it: per step where it is about the
// steps, bytes off the peak for memory.
function saving(f) {
  if (f.correctness) return el('span', { class: 'saving correctness', text: 'wrong results: fix first' });
  if (f.saving_bytes !== null) return el('span', { class: 'saving', text: `saving: ${bytes(f.saving_bytes)} of memory at the peak` });
  if (f.saving_ns === null) {
    return el('span', { class: 'saving unknown', text: 'estimated saving: unknown',
      title: 'the link model has no numbers for this path; --system FILE gives them' });
  }
  const text = f.steps > 0 ? `${ns(f.saving_per_step_ns)} per step (${ns(f.saving_ns)} over ${f.steps} steps)` : ns(f.saving_ns);
  return el('span', { class: 'saving', text: `estimated saving: ${text}` });
}

function cost(f) {
  if (!f.cost_ns) return null;
  return el('span', { text: `cost now: ${f.steps > 0 ? `${ns(f.cost_ns / f.steps)} per step` : ns(f.cost_ns)}` });
}

function findingCard(f, number) {
  // Kernel names shortened as diagnose prints them; whole in --json.
  const where = [(f.where.short_names ?? f.where.names).join('; '), f.where.nvtx_range && `NVTX ${f.where.nvtx_range}`,
    f.where.call_site && `called by ${f.where.call_site}`].filter(Boolean).join(' | ');
  return el('div', { class: f.correctness ? 'finding correctness' : 'finding' },
    el('div', { class: 'what' }, el('span', { class: 'rule', text: `${number}. ${f.rule}` }), ' ', f.what),
    // Where in the user's model, on the card: what a framework user looks for first.
    f.where.framework ? el('div', { class: 'place', text: `in ${f.where.framework}` }) : null,
    el('div', { class: 'numbers' }, saving(f), cost(f),
      f.overlaps.length ? el('span', { class: 'note', text: `overlaps ${f.overlaps.join(', ')}: do not add their savings` }) : null),
    el('div', { class: 'fix', text: f.fix }),
    el('details', {}, el('summary', { text: 'where and how estimated' }),
      el('p', { text: where || 'no location recorded' }),
      el('p', { text: `estimate: ${f.estimate}` }),
      f.details ? dataTable(f.details.columns, f.details.short_rows ?? f.details.rows) : null,
      el('p', { text: `rows: ${f.where.rows.map((r) => `${r.table}:${r.id}`).join(' ') || 'none'}` })));
}

function diagnoses() {
  const more = data.more_findings.length;
  const notes = data.diagnosis_notes.map((note) => el('p', { class: 'note', text: note }));
  if (!data.findings.length) {
    return section('diagnoses', 'Findings', ...notes, empty('No findings: nothing crossed a rule\'s threshold.'));
  }
  return section('diagnoses', 'Findings', ...notes,
    el('p', { text: `${data.findings.length + more} finding(s) as apptracer diagnose lists them: correctness first, then the largest ` +
      `estimated saving, start-up last (then minor ones: saving less per step than steps vary, one-offs, or memory a GPU with room to spare does not need)${more ? `; the first ${data.findings.length} here, ${more} more below` : ''}.` }),
    ...data.findings.map((f, i) => findingCard(f, i + 1)));
}

function moreFindings() {
  const n = data.findings.length;
  return collapsible('more-findings', `${data.more_findings.length} more findings`, 'smaller savings (apptracer diagnose --all)',
    () => data.more_findings.map((f, i) => findingCard(f, n + i + 1)));
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
  return el('div', { class: 'table-wrap' }, el('table', { class: 'time' },
    el('thead', {}, el('tr', {}, ['what', 'on', 'time', 'share of the traced time'].map((c) => el('th', { text: c })))),
    el('tbody', {}, rows)));
}

// Rows whose achieved bandwidth is above their path's peak are marked, and
// why is said under the table, once per path.
function abovePeakNotes(rows) {
  const reasons = new Map();
  for (const r of rows) if (r.above_peak && !reasons.has(r.path)) reasons.set(r.path, r.above_peak);
  return [...reasons].map(([path, reason]) => el('p', { class: 'note above-peak', text: `* ${path}: ${reason}.` }));
}
const achieved = (r) => (r.above_peak ? `${gbps(r.gbps)} *` : gbps(r.gbps));

function wholeRun() {
  const s = data.summary;
  const cards = [card(ns(s.span_ns), 'traced time'), card(String(s.kernels), `kernel launches, ${ns(s.kernel_ns)} on the GPU`),
    card(String(s.copies), 'copies'), card(String(s.memsets), 'memsets'),
    ...(s.migrations ? [card(String(s.migrations), 'unified-memory migrations')] : []), card(String(s.allocations), 'allocations'),
    ...s.devices.map((d) => card(`${s.span_ns ? (100 * d.busy_ns / s.span_ns).toFixed(1) : 0}%`, `GPU ${d.device} busy (${ns(d.busy_ns)})`))];
  const paths = s.paths.length
    ? [table(['path', 'transfers', 'bytes', 'GPU time', 'achieved', 'peak'],
      s.paths.map((p) => [p.path, p.count, p.bytes, p.time_ns, achieved(p), p.peak_gbps]),
      { bytes, 'GPU time': ns, peak: gbps }), ...abovePeakNotes(s.paths)]
    : [empty('No copies.')];
  const kernelTraffic = data.kernel_traffic.length
    ? [el('h3', { text: 'Kernel loads and stores over a path' }),
      el('p', { class: 'note', text: 'Bytes kernels read or wrote in another GPU\'s memory (peer access) or in pinned host memory, which no copy moved: exact with apptracer record --exact, else a bound (each pointer argument reaching to its allocation\'s end).' }),
      table(['path', 'kind', 'kernels', 'bytes', 'bytes are'],
        data.kernel_traffic.map((k) => [k.path, k.kind, k.kernels, k.bytes, k.bytes_are]), { bytes })]
    : [];
  return collapsible('whole-run', 'The whole run: where the time went', 'start-up included; bytes moved per path',
    () => [el('div', { class: 'cards' }, cards),
      el('h3', { text: 'Where the time went' }),
      el('p', { class: 'note', text: 'GPU and host times overlap (the host waits while the GPU works): each is a share of the traced time.' }),
      whereTheTimeWent(s),
      el('h3', { text: 'Bytes moved per path' }), ...paths, ...kernelTraffic]);
}

function kernels() {
  return collapsible('kernels', 'Top kernels', `${data.kernels.length} kernel name(s) by GPU time`, () => (data.kernels.length
    ? [barChart(data.kernels.map((k) => k.short_name), data.kernels.map((k) => k.total_ns), 'GPU time', ns),
      table(['#', 'kernel', 'launches', 'GPU time', 'mean'], data.kernels.map((k, i) => [i + 1, k.short_name, k.count, k.total_ns, k.mean_ns]),
        { 'GPU time': ns, mean: ns })]
    : [empty('No kernels.')]));
}

// PyTorch's modules and ops (where the trace names them): the work each
// issued, by GPU time, as apptracer stats --report modules and ops list it.
function modules() {
  const m = data.modules;
  return collapsible('modules', 'Modules and ops', `the ${m.modules.rows.length} module(s) and ${m.ops.rows.length} op(s) with the most GPU time`,
    () => [...(m.note ? [el('p', { class: 'note', text: m.note })] : []),
      el('h3', { text: 'Modules (forward, backward, or a named scope such as the optimizer\'s step)' }),
      dataTable(m.modules.columns, m.modules.rows),
      el('h3', { text: 'Ops' }), dataTable(m.ops.columns, m.ops.rows)]);
}

function transfers() {
  return collapsible('transfers', 'Transfers', 'each copy\'s bandwidth against its path\'s peak', () => (data.transfers.length
    ? [el('p', { class: 'note', text: 'Each copy\'s bandwidth against its size; the dashed line is its path\'s peak (the link model\'s rate for a 1 GiB copy).' }),
      transferChart(data.transfers), ...abovePeakNotes(data.transfers),
      table(['copy', 'path', 'bytes', 'GPU time', 'achieved', 'peak'],
        data.transfers.slice(0, 50).map((t) => [t.id, t.path, t.bytes, t.time_ns, achieved(t), t.peak_gbps]),
        { bytes, 'GPU time': ns, peak: gbps })]
    : [empty('No timed copies.')]));
}

const ms = (v) => (v === null ? '' : `${v.toFixed(3)} ms`);

// The pieces live at the peak: the largest shown, the rest one click away.
const kLiveShown = 10;
// Where framework context was recorded, the module and op that made each piece.
const madeIn = (p) => [p.producer_module, p.producer_op].filter(Boolean).join(' · ');
function livePieces(d) {
  const context = d.live.some((p) => madeIn(p));
  const rows = (list) => table(['owner', 'piece', 'bytes', 'producer', ...(context ? ['module · op'] : []), 'producer NVTX', 'step', 'allocated', 'first use', 'last use', 'freed'],
    list.map((p) => [p.owner, p.row, p.bytes, p.producer ?? 'nothing wrote it', ...(context ? [madeIn(p)] : []), p.producer_nvtx ?? '', p.producer_step,
      p.allocated_ms, p.first_use_ms, p.last_use_ms, p.freed_ms]),
    { bytes, allocated: ms, 'first use': ms, 'last use': ms, freed: ms });
  const rest = d.live.slice(kLiveShown);
  const unlisted = d.live_pieces - d.live.length;
  return [rows(d.live.slice(0, kLiveShown)),
    rest.length ? el('details', {}, el('summary', { text: `${rest.length} smaller piece(s)` }), rows(rest)) : null,
    unlisted ? el('p', { class: 'note', text: `${unlisted} smaller piece(s) left out (apptracer stats TRACE --report memory lists them all).` }) : null];
}

function memoryDevice(d) {
  return [
    el('div', { class: 'cards' },
      card(bytes(d.peak_bytes), `peak in use, at ${d.peak_ms.toFixed(1)} ms${d.peak_step !== null ? ` (step ${d.peak_step})` : ''}`),
      card(bytes(d.peak_live_bytes), 'most in use less allocator caches'),
      card(bytes(d.peak_if_freed_at_last_use), 'peak if freed at last use', 'every piece ended at its last use, one never used never made'),
      card(bytes(d.peak_if_cache_released_between_steps), 'peak if caches were released each step', 'a lower bound')),
    memoryChart(d, data.timeline.trace_end_ms),
    el('h4', { text: 'Owners at the peak' }),
    table(['owner', 'bytes', 'pieces'], d.at_peak.map((o) => [o.owner, o.bytes, o.pieces]), { bytes }),
    el('h4', { text: 'Live at the peak, largest first' }),
    ...livePieces(d)];
}

// GPUs shown; host memory (pinned, mapped) one click away.
function memoryDevices(devices) {
  return devices.flatMap((d) => {
    const title = `${d.device}${d.pid ? ` of process ${d.pid}` : ''}: peak ${bytes(d.peak_bytes)}`;
    if (d.device === 'host') return [el('details', { class: 'device' }, el('summary', { text: `${title} (pinned and mapped host memory)` }), ...memoryDevice(d))];
    return [el('h3', { text: title }), ...memoryDevice(d)];
  });
}

// Open when a finding of the first screen is about memory.
function memory() {
  const devices = data.memory.devices;
  const open = data.findings.some((f) => f.rule.startsWith('memory_'));
  const peak = devices.length ? devices.reduce((a, b) => (b.peak_bytes > a.peak_bytes ? b : a)) : null;
  return collapsible('memory', 'Memory', peak ? `peak ${bytes(peak.peak_bytes)} on ${peak.device}, by owner` : 'no allocations',
    () => (devices.length
      ? [el('p', { class: 'note', text: 'Memory in use per device, stacked by owner (program, framework tensors and cache, ' +
        'NCCL/MPI, cuBLAS/cuDNN and other library workspaces, pinned host), the peak marked; what was live then, who produced it and when it was ' +
        'first and last used. Times in ms from the start of the trace.' }), ...memoryDevices(devices)]
      : [empty('No allocations.')]), { open });
}

function timeline() {
  const t = data.timeline;
  const span = t.steady_steps ? 'the steady steps' : 'the program\'s GPU work';
  return collapsible('timeline', 'Timeline', `GPU work per stream over ${span}`, () => (t.lanes.length
    ? [el('p', { class: 'note', text: `GPU work per stream, unified-memory migrations and the host's synchronizations over ${span}, ` +
      `${t.start_ms.toFixed(3)} ms to ${t.end_ms.toFixed(3)} ms (start-up before it is left out: the Perfetto timeline has everything); ` +
      `the trace ran ${t.trace_end_ms.toFixed(3)} ms. Neighbouring bars of one kind are merged.` }),
      timelineChart(t.lanes, t.start_ms, t.end_ms), perfetto()]
    : [empty('No GPU work.'), perfetto()]));
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
  return collapsible('nvtx', 'NVTX ranges', `${data.nvtx.length} range name(s)`, () => (data.nvtx.length
    ? [barChart(data.nvtx.map((r) => r.name), data.nvtx.map((r) => r.total_ns), 'time in range', ns),
      table(['range', 'count', 'time', 'GPU time of work issued in it'], data.nvtx.map((r) => [r.name, r.count, r.total_ns, r.gpu_ns]),
        { time: ns, 'GPU time of work issued in it': ns })]
    : [empty('No NVTX ranges in this trace.')]));
}

function analyses() {
  return collapsible('analyses', 'Analyses (Holistic Trace Analysis)', 'the whole run\'s temporal, idle, kernel, launch, overlap, bandwidth and queue tables', () => {
    const parts = [];
    for (const t of data.analyses) {
      parts.push(el('h3', { text: t.name.replaceAll('_', ' ') }));
      if (t.name === 'memory_bandwidth') {
        parts.push(el('p', { class: 'note', text: 'mean: bytes over the copies\' GPU time; p95 over busy time: the rate the copies ran at or below ' +
          'for 95% of their GPU time. Both are GPU-timed: a pageable copy\'s leaves out the CPU\'s staging, and can exceed its path\'s peak (Transfers says why).' }));
      }
      parts.push(t.rows.length ? dataTable(t.columns, t.rows) : empty('nothing to show'));
    }
    if (data.bandwidth.length) {
      parts.push(el('h3', { text: 'copy bandwidth over time' }),
        el('p', { class: 'note', text: 'Bytes copied in each 1/200 of the trace over that time, idle time included: an average, far below a copy\'s own rate.' }),
        lineChart(data.bandwidth, 'GB/s (average per bin)', gbps));
    }
    if (data.queue.length) parts.push(el('h3', { text: 'queue length over time' }), lineChart(data.queue, 'operations queued', (v) => String(v), true));
    return parts;
  });
}

// Each what-if's predicted run and its first phases (the steady steps
// where the trace has steps, then NVTX ranges or periods: the whole run
// includes start-up, which no change shortens).
function whatifRuns(w) {
  const ok = w.scenarios.filter((s) => !s.error);
  const phases = ok.length ? ok[0].phases.slice(0, 3) : [];
  const failed = w.scenarios.length > ok.length;
  const rows = w.scenarios.map((s) => [s.changes || 'none (the baseline: as recorded, on this machine\'s paths)',
    s.error ? null : s.predicted_ns, s.error ? null : s.baseline_ns - s.predicted_ns,
    ...phases.map((p) => (s.error ? null : s.phases.find((q) => q.name === p.name)?.predicted_ns ?? null)),
    ...(failed ? [s.error ? `failed: ${s.error}` : ''] : [])]);
  const phaseHeadings = phases.map((p) => `${p.name} (${p.count}, recorded ${ns(p.recorded_ns)})`);
  const format = { 'predicted run': ns, 'saved against the baseline': ns };
  for (const heading of phaseHeadings) format[heading] = ns;
  return [el('p', { text: `The trace replayed on ${w.system}; recorded on ${w.recorded_on} in ${ns(w.recorded_ns)}. ` +
      'Each what-if is apptracer whatif TRACE --system FILE with its changes; the phase columns are their predicted lengths.' }),
    table(['what-if', 'predicted run', 'saved against the baseline', ...phaseHeadings, ...(failed ? ['note'] : [])], rows, format),
    ...ok.map((s) => el('details', {},
      el('summary', { text: `apptracer whatif --system ... ${s.changes}: its tables` }),
      ...s.tables.flatMap((t) => [el('h4', { text: t.name.replaceAll('_', ' ') }), dataTable(t.columns, t.rows)]),
      ...s.notes.map((note) => el('p', { class: 'note', text: note }))))];
}

function whatif() {
  const w = data.whatif;
  const blurb = w.runs ? `${w.runs.scenarios.length} prediction(s) on ${w.runs.system}` : 'give --system FILE to predict';
  return collapsible('whatif', 'What-if', blurb, () => [
    ...(w.runs ? whatifRuns(w.runs)
      : [empty('No system file: apptracer report TRACE --system FILE replays the trace on that machine as recorded, with pinned ' +
        'buffers and with copies overlapped (apptracer links -o FILE measures one; examples/h200.system.json is an H200\'s).')]),
    ...(w.stored.length ? [el('h3', { text: 'Stored in the trace (apptracer whatif --store)' }),
      ...w.stored.flatMap((t) => [el('h4', { text: t.name }), dataTable(t.columns, t.rows)])] : [])]);
}

function dvdg() {
  const graph = graphSection(data.dvdg);
  return { graph, node: collapsible('dvdg', 'Data flow (DVDG)', `${data.dvdg.total_values} value(s) after folding repeated iterations`,
    () => [graph.node], { shown: () => graph.start() }) };
}

function render() {
  const root = document.getElementById('report');
  const graph = dvdg();
  const parts = [step(), data.comparison && comparison(), diagnoses(), data.more_findings.length && moreFindings(), memory(),
    wholeRun(), kernels(), data.modules && modules(), transfers(), timeline(), whatif(), nvtx(), analyses(), graph.node].filter(Boolean);
  root.replaceChildren(header(), nav(new Set(parts.map((p) => p.id))), ...parts);
  // What the browser test (tests/report/browser_test.cjs) checks the page
  // against; openAll() draws every collapsed section.
  window.apptracerReport = {
    get charts() { return charts.length; },
    chartObjects: charts,
    get cy() { return graph.graph.cy(); },
    get graphNodes() { const cy = graph.graph.cy(); return cy ? cy.nodes().length : 0; },
    get graphEdges() { const cy = graph.graph.cy(); return cy ? cy.edges().length : 0; },
    findings: data.findings.length,
    openAll() { for (const c of collapsibles) { c.details.open = true; c.fill(); } },
  };
  document.body.dataset.ready = '1';
}

render();
