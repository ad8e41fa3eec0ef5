// The DVDG, drawn with Cytoscape.js and laid out top-down by dagre: values
// are boxes, each edge is labelled with the operation that read its source
// and wrote its target. Zoom with the wheel, pan by dragging, "one node per
// allocation" collapses the versions of each memory region, and clicking a
// value lists the operations that produced it (like `apptracer dvdg --why`).
import cytoscape from 'cytoscape';
import dagre from 'cytoscape-dagre';
import { el, empty } from './dom.js';

cytoscape.use(dagre);

const style = [
  { selector: 'node', style: { shape: 'round-rectangle', 'background-color': '#e8eefc', 'border-width': 1,
    'border-color': '#2f6fde', label: 'data(label)', 'text-wrap': 'wrap', 'text-valign': 'center',
    'font-size': 9, width: 'label', height: 'label', padding: '6px' } },
  { selector: 'node[?host]', style: { 'background-color': '#fdf1e7', 'border-color': '#e8743b' } },
  { selector: 'node[?uninitialized]', style: { 'border-color': '#b3261e', 'border-width': 3 } },
  { selector: 'edge', style: { width: 1.2, 'line-color': '#8a94a6', 'target-arrow-color': '#8a94a6',
    'target-arrow-shape': 'triangle', 'curve-style': 'bezier', label: 'data(label)', 'font-size': 8,
    'text-background-color': '#fff', 'text-background-opacity': 0.8, 'text-background-padding': 1 } },
  { selector: 'edge[kind = "carry"]', style: { 'line-style': 'dotted' } },
  { selector: 'edge[kind = "migration"]', style: { 'line-style': 'dashed', 'line-color': '#2f6fde' } },
  { selector: '.why', style: { 'border-color': '#19a979', 'border-width': 3, 'line-color': '#19a979',
    'target-arrow-color': '#19a979' } },
  { selector: '.chosen', style: { 'background-color': '#19a979', color: '#fff' } },
];

// Kernel names can be long C++ signatures: edges show the start of them.
function short(name) {
  return name.length > 36 ? `${name.slice(0, 33)}...` : name;
}

function elements(dvdg, collapsed) {
  if (!collapsed) {
    return [
      ...dvdg.values.map((v) => ({ data: { id: v.id, label: v.label, host: !v.device_memory,
        uninitialized: v.uninitialized, location: v.location } })),
      ...dvdg.edges.map((e, i) => ({ data: { id: `e${i}`, source: e.source, target: e.target,
        kind: e.kind, op: e.op, label: short(dvdg.ops[e.op].name) } })),
    ];
  }
  // One node per memory region: its versions folded together.
  const regions = new Map();
  const region = new Map();
  for (const v of dvdg.values) {
    const id = `loc${v.location}`;
    region.set(v.id, id);
    const entry = regions.get(id) || { id, name: v.location_name, versions: 0, host: !v.device_memory };
    entry.versions++;
    regions.set(id, entry);
  }
  const edges = new Map();
  for (const e of dvdg.edges) {
    const source = region.get(e.source);
    const target = region.get(e.target);
    if (source === target) continue;
    const key = `${source}>${target}`;
    const entry = edges.get(key) || { source, target, ops: new Set(), kind: e.kind };
    entry.ops.add(short(dvdg.ops[e.op].name));
    edges.set(key, entry);
  }
  return [
    ...[...regions.values()].map((r) => ({ data: { id: r.id, host: r.host,
      label: `${r.name}\n${r.versions} version(s)` } })),
    ...[...edges.values()].map((e, i) => ({ data: { id: `c${i}`, source: e.source, target: e.target,
      kind: e.kind, label: [...e.ops].slice(0, 2).join(', ') + (e.ops.size > 2 ? ', ...' : '') } })),
  ];
}

export function graphSection(dvdg) {
  const wrap = el('div');
  if (!dvdg.values.length) {
    wrap.append(empty('No values: the trace has no copies, memsets or kernels with known arguments.'));
    return { node: wrap, start: () => null, cy: () => null };
  }
  const note = dvdg.total_values > dvdg.values.length
    ? `Showing the first ${dvdg.values.length} of ${dvdg.total_values} values (repeated iterations folded; ` +
      `${dvdg.graph_values} in the full graph). The page draws at most ${dvdg.limit}: ` +
      'use `apptracer dvdg TRACE --svg FILE` with --nvtx/--from/--to/--alloc filters for the rest.'
    : `${dvdg.values.length} values, ${dvdg.edges.length} edges (repeated iterations folded into the first).`;
  const container = el('div', { id: 'graph' });
  const why = el('div', { id: 'why' }, el('p', { class: 'note', text: 'Click a value to see the operations that produced it.' }));
  const collapse = el('button', { type: 'button', text: 'One node per allocation' });
  const fit = el('button', { type: 'button', text: 'Fit' });
  const zoomIn = el('button', { type: 'button', text: 'Zoom in' });
  const zoomOut = el('button', { type: 'button', text: 'Zoom out' });
  wrap.append(el('p', { class: 'note', text: note }), el('div', { class: 'toolbar' }, collapse, fit, zoomIn, zoomOut),
    el('div', { id: 'graph-wrap' }, container, why));

  let cy = null;
  let collapsed = false;
  const layout = () => cy.layout({ name: 'dagre', rankDir: 'TB', nodeSep: 20, rankSep: 50 }).run();
  const showWhy = (node) => {
    cy.elements().removeClass('why chosen');
    node.addClass('chosen');
    const producers = node.predecessors();
    producers.addClass('why');
    const ops = new Map();
    producers.edges().forEach((e) => {
      const op = e.data('op');
      if (op !== undefined) ops.set(op, dvdg.ops[op]);
    });
    why.replaceChildren(el('h3', { text: node.id() }), el('pre', { text: node.data('label') }));
    if (collapsed) {
      why.append(el('p', { class: 'note', text: 'Regions upstream of this one are highlighted; switch collapsing off for operations.' }));
      return;
    }
    if (!ops.size) {
      why.append(el('p', { text: 'Nothing produced it: it is what the region held when first used.' }));
      return;
    }
    why.append(el('p', { text: `Produced by ${ops.size} operation(s), in program order:` }),
      el('ol', {}, [...ops.entries()].sort((a, b) => Number(a[0]) - Number(b[0]))
        .map(([id, op]) => el('li', { text: `op ${id}: ${op.name}` }))));
  };
  const draw = () => {
    cy.elements().remove();
    cy.add(elements(dvdg, collapsed));
    layout();
    container.dataset.nodes = String(cy.nodes().length);
    container.dataset.edges = String(cy.edges().length);
  };
  const start = () => {
    cy = cytoscape({ container, style, wheelSensitivity: 0.3, minZoom: 0.05, maxZoom: 4 });
    cy.on('tap', 'node', (event) => showWhy(event.target));
    draw();
    collapse.addEventListener('click', () => {
      collapsed = !collapsed;
      collapse.classList.toggle('on', collapsed);
      draw();
    });
    fit.addEventListener('click', () => cy.fit());
    zoomIn.addEventListener('click', () => cy.zoom({ level: cy.zoom() * 1.3, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }));
    zoomOut.addEventListener('click', () => cy.zoom({ level: cy.zoom() / 1.3, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }));
    return cy;
  };
  return { node: wrap, start, cy: () => cy };
}
