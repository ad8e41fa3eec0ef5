// The report in a real browser: headless Chromium (Debian's package, driven
// by playwright-core from the report's own node_modules) opens the report of
// each bundled trace (with --system SYSTEM) from a file:// URL, 1400 px wide,
// with the network cut off, and
//  * no console error, page error or network request happens;
//  * as it opens, the page is at most 6,000 px tall: the first screen (the
//    top 1,000 px) shows the steady-state step (or the whole run's numbers
//    where the program has no steps) and the findings, those `apptracer
//    diagnose` shows by default in its order; every other section is a
//    collapsed <details>; an unknown saving does not look like a real one;
//  * opened, the memory section has a plot by owner and the live set at the
//    peak, and the what-if section the predictions on SYSTEM;
//  * tables read in human units (no `_ns` heading), sort by a clicked
//    heading and never make the page scroll sideways (each fits its box or
//    scrolls inside it);
//  * every plot's canvas has pixels drawn on it, no two tick labels of an
//    axis overlap or read the same; the timeline starts at the steady steps
//    or the program's first GPU work, and the page carries the full Perfetto
//    timeline (`apptracer timeline`'s file) to open in ui.perfetto.dev or
//    save;
//  * the DVDG has nodes, a screenshot of it is not blank, and clicking a
//    value lists what produced it;
//  * the first trace's report with --compare SECOND shows, right after the
//    step, `apptracer diff`'s rows that changed and none that did not.
// Screenshots are kept in OUT_DIR (NAME-first-screen.png: what a reader sees
// on opening). Exits 77 (skipped) only when Chromium is not installed.
//
//   node browser_test.cjs NODE_MODULES APPTRACER OUT_DIR SYSTEM TRACE...
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const [nodeModules, apptracer, outDir, system, ...traces] = process.argv.slice(2);
const executable = process.env.APPTRACER_CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(executable)) {
  console.log(`SKIPPED: no Chromium at ${executable}; install Debian's chromium package (scripts/setup.sh does)`);
  process.exit(77);
}
const { chromium } = require(path.resolve(nodeModules, 'playwright-core'));

const failures = [];
const checked = [];  // the pages opened
const expect = (condition, what) => { if (!condition) failures.push(what); };

// Painted pixels of a PNG (base64), counted by the page itself.
async function paintedPixels(page, png) {
  return page.evaluate(async (data) => {
    const image = new Image();
    image.src = `data:image/png;base64,${data}`;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0);
    const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let i = 0; i < pixels.length; i += 4) {
      if (pixels[i] < 240 || pixels[i + 1] < 240 || pixels[i + 2] < 240) painted++;
    }
    return painted;
  }, png.toString('base64'));
}

// Axes whose tick labels repeat one another ("0.1, 0.1"), as "chart N axis ID: LABELS".
async function repeatedTicks(page) {
  return page.evaluate(() => window.apptracerReport.chartObjects.flatMap((chart, index) =>
    Object.values(chart.scales).map((scale) => {
      const labels = scale.ticks.map((t) => String(t.label)).filter((l) => l !== '');
      return new Set(labels).size === labels.length ? null : `chart ${index} axis ${scale.id}: ${labels.join('|')}`;
    }).filter(Boolean)));
}

// Pairs of tick labels of one axis that overlap, as "LABEL/LABEL" (the
// chart's own label positions and fonts, measured on a canvas).
async function overlappingTicks(page) {
  return page.evaluate(() => {
    const context = document.createElement('canvas').getContext('2d');
    const overlaps = [];
    window.apptracerReport.chartObjects.forEach((chart, index) => {
      for (const scale of Object.values(chart.scales)) {
        const horizontal = scale.isHorizontal();
        const extents = scale.getLabelItems().filter((item) => String(item.label) !== '').map((item) => {
          context.font = item.font.string;
          const rotated = item.options.rotation !== 0;
          const along = horizontal && !rotated ? context.measureText(String(item.label)).width : item.font.lineHeight;
          const at = item.options.translation[horizontal ? 0 : 1];
          const from = horizontal && !rotated && item.options.textAlign === 'left' ? at
            : horizontal && !rotated && item.options.textAlign === 'right' ? at - along : at - along / 2;
          return { label: String(item.label), from, to: from + along };
        }).sort((x, y) => x.from - y.from);
        for (let i = 1; i < extents.length; i++) {
          if (extents[i].from < extents[i - 1].to - 0.5) {
            overlaps.push(`chart ${index} axis ${scale.id}: ${extents[i - 1].label}/${extents[i].label}`);
          }
        }
      }
    });
    return overlaps;
  });
}

async function check(browser, trace, compareWith) {
  const name = path.basename(trace, '.db') + (compareWith ? '-compared' : '');
  const html = path.join(outDir, `${name}.html`);
  const options = compareWith ? ['--compare', compareWith] : ['--system', system];
  execFileSync(apptracer, ['report', trace, '-o', html, '--force', ...options], { stdio: 'inherit' });
  checked.push(name);
  const page = await browser.newPage();
  const problems = [];
  page.on('console', (message) => { if (message.type() === 'error') problems.push(`console: ${message.text()}`); });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => { if (!request.url().startsWith('file:') && !request.url().startsWith('data:')) problems.push(`network: ${request.url()}`); });
  await page.goto(`file://${html}`);
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60000 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(outDir, `${name}-first-screen.png`) });

  // As it opens: short, the step and the findings on the first screen.
  const opening = await page.evaluate(() => {
    const top = (selector) => { const e = document.querySelector(selector); return e ? e.getBoundingClientRect().top : null; };
    return {
      height: document.documentElement.scrollHeight,
      viewport: window.innerHeight,
      sections: [...document.querySelectorAll('main > section')].map((s) => s.id),
      details: [...document.querySelectorAll('main > details.section')].map((d) => d.id),
      open: [...document.querySelectorAll('main > details.section')].filter((d) => d.open).map((d) => d.id),
      memoryFindingShown: [...document.querySelectorAll('#diagnoses .finding .rule')].some((e) => / memory_/.test(e.textContent)),
      stepTop: top('#step'),
      stepText: document.querySelector('#step')?.innerText || '',
      firstFindingTop: top('#diagnoses .finding'),
      rules: [...document.querySelectorAll('#diagnoses .finding .rule')].map((e) => e.textContent.replace(/^\d+\. /, '')),
      comparisonAfter: document.querySelector('#comparison')?.previousElementSibling?.id,
      comparison: [...document.querySelectorAll('#comparison h3')].map((h) => ({ name: h.textContent,
        rows: [...h.nextElementSibling.querySelectorAll('tbody tr')].map((r) => [r.cells[1].textContent, r.cells[2].textContent]) })),
    };
  });
  console.log(`${name} as it opens: ${JSON.stringify({ ...opening, stepText: opening.stepText.slice(0, 80), comparison: opening.comparison.length })}`);
  expect(opening.height <= 6000, `${name}: the page opens at most 6,000 px tall (${opening.height} px)`);
  expect(opening.sections[0] === 'step' && opening.sections[opening.sections.length - 1] === 'diagnoses' &&
    opening.sections.length === (compareWith ? 3 : 2), `${name}: the step, then (--compare) what changed, then the findings (${opening.sections})`);
  expect(opening.stepTop !== null && opening.stepTop < opening.viewport && opening.firstFindingTop !== null &&
    (compareWith || opening.firstFindingTop < opening.viewport),
    `${name}: the first screen shows the step (at ${opening.stepTop} px) and the findings (at ${opening.firstFindingTop} px)`);
  expect(/median step time/.test(opening.stepText) || /no steps/.test(opening.stepText),
    `${name}: the step's numbers, or why there are none (${opening.stepText.slice(0, 120)})`);
  for (const id of ['memory', 'whole-run', 'kernels', 'transfers', 'timeline', 'nvtx', 'analyses', 'dvdg', 'whatif'])
    expect(opening.details.includes(id), `${name}: collapsible section ${id} (${opening.details})`);
  // Memory opens with a memory finding on the first screen; nothing else does.
  expect(JSON.stringify(opening.open) === JSON.stringify(opening.memoryFindingShown ? ['memory'] : []),
    `${name}: sections below the findings collapsed (open: ${opening.open})`);
  // The findings are diagnose's default list, in its order.
  const diagnosed = JSON.parse(execFileSync(apptracer, ['diagnose', trace, '--format', 'json',
    ...(compareWith ? [] : ['--system', system])]).toString());
  expect(JSON.stringify(opening.rules) === JSON.stringify(diagnosed.findings.map((f) => f.rule)),
    `${name}: the findings diagnose shows, in its order (${opening.rules} against ${diagnosed.findings.map((f) => f.rule)})`);
  if (compareWith) {
    expect(opening.comparisonAfter === 'step', `${name}: what changed comes right after the step (after ${opening.comparisonAfter})`);
    const tables = JSON.parse(execFileSync(apptracer, ['diff', trace, compareWith, '--format', 'json']).toString());
    const shown = Object.fromEntries(opening.comparison.map((t) => [t.name.replaceAll(' ', '_'), t.rows]));
    let rows = 0;
    for (const [table, all] of Object.entries(tables)) {
      const listed = (shown[table] || []).map(([row]) => row);
      const order = all.map((r) => r.name).filter((n) => listed.includes(n));
      expect(JSON.stringify(order) === JSON.stringify(listed), `${name}: comparison ${table} shows diff's rows in its order (${listed})`);
      expect((shown[table] || []).every(([, change]) => change !== 'same'), `${name}: comparison ${table} shows no unchanged row`);
      rows += listed.length;
    }
    expect(rows > 0, `${name}: the comparison shows what changed`);
  }

  // Opened: every section drawn.
  await page.evaluate(() => {
    window.apptracerReport.openAll();
    for (const details of document.querySelectorAll('details')) details.open = true;
  });
  await page.waitForTimeout(1500);  // the graph layout and last paints
  const state = await page.evaluate(() => ({
    report: { charts: window.apptracerReport.charts, findings: window.apptracerReport.findings,
      graphNodes: window.apptracerReport.graphNodes },
    findings: document.querySelectorAll('#diagnoses .finding').length,
    rules: [...document.querySelectorAll('.finding .rule')].map((e) => e.textContent.replace(/^\d+\. /, '')),
    canvases: [...document.querySelectorAll('.plot canvas')].map((c) => {
      const pixels = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let painted = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
      return painted;
    }),
    graphNodes: Number(document.getElementById('graph')?.dataset.nodes || 0),
    timeRows: [...document.querySelectorAll('#whole-run table.time tbody tr')].map((r) => r.cells[0].textContent),
    paths: [...document.querySelectorAll('#whole-run table.sortable tbody tr')].map((r) => r.cells[0].textContent),
    headings: [...document.querySelectorAll('th')].map((th) => th.textContent),
    savingColors: [...document.querySelectorAll('.finding .saving')].map((e) =>
      `${e.classList.contains('unknown') ? 'unknown' : 'known'} ${getComputedStyle(e).color}`),
    lanes: window.apptracerReport.chartObjects.flatMap((c) => (c.canvas.closest('#timeline') ? c.data.labels : [])),
    timelineStart: window.apptracerReport.chartObjects.find((c) => c.canvas.closest('#timeline'))?.scales.x.min,
    dataTimelineStart: JSON.parse(document.getElementById('report-data').textContent).timeline.start_ms,
    perfetto: [...document.querySelectorAll('#timeline a')].map((a) => a.href).includes('https://ui.perfetto.dev/') &&
      document.querySelector('#timeline code')?.textContent.startsWith('apptracer timeline '),
    memoryPlots: document.querySelectorAll('#memory .plot canvas').length,
    memoryOwners: [...document.querySelectorAll('#memory h4')].filter((h) => h.textContent.startsWith('Live at the peak'))
      .map((h) => h.nextElementSibling.querySelectorAll('tbody tr').length),
    whatifRows: [...(document.querySelector('#whatif > .body > .table-wrap')?.querySelectorAll('tbody tr') || [])].map((r) => r.cells[0].textContent),
    pageWidth: document.documentElement.scrollWidth,
    viewportWidth: window.innerWidth,
    // Tables wider than their box, unless the box scrolls them.
    overflowing: [...document.querySelectorAll('table')].filter((t) => {
      const box = t.parentElement;
      const scrolls = getComputedStyle(box).overflowX === 'auto' && box.getBoundingClientRect().right <= window.innerWidth;
      return t.getBoundingClientRect().width > box.clientWidth + 1 && !scrolls;
    }).map((t) => t.closest('[id]')?.id),
  }));
  console.log(`${name}: ${JSON.stringify({ ...state, canvases: state.canvases.length })}`);
  expect(problems.length === 0, `${name}: ${problems.join('; ')}`);
  expect(state.findings > 0 && state.findings === state.report.findings, `${name}: findings listed (${state.findings})`);
  expect(state.timeRows.length >= 3, `${name}: where the time went (${state.timeRows})`);
  expect(state.memoryPlots >= 1 && state.memoryOwners.length >= 1 && state.memoryOwners.every((n) => n > 0),
    `${name}: memory by owner and the live set at the peak (${state.memoryPlots} plot(s), ${state.memoryOwners} row(s))`);
  if (!compareWith) {
    expect(state.whatifRows.length >= 4 && state.whatifRows.some((changes) => changes.startsWith('--pin')),
      `${name}: the what-if predictions on ${path.basename(system)} (${state.whatifRows})`);
  }
  expect(state.pageWidth <= state.viewportWidth, `${name}: nothing makes the page scroll sideways (${state.pageWidth} px)`);
  expect(state.overflowing.length === 0, `${name}: tables fit their box or scroll inside it (${state.overflowing})`);
  expect(!state.headings.some((h) => /_ns\b|_ns_/.test(h)), `${name}: headings in words (${state.headings.filter((h) => h.includes('_ns'))})`);
  const known = new Set(state.savingColors.filter((c) => c.startsWith('known')).map((c) => c.slice(6)));
  for (const unknown of state.savingColors.filter((c) => c.startsWith('unknown')))
    expect(!known.has(unknown.slice(8)) && unknown.slice(8) !== 'rgb(27, 127, 59)', `${name}: an unknown saving looks unlike a real one (${state.savingColors})`);
  expect(Math.abs(state.timelineStart - state.dataTimelineStart) < 1e-9 && state.dataTimelineStart > 0,
    `${name}: the timeline starts where the data says (${state.timelineStart} ms, the work at ${state.dataTimelineStart} ms)`);
  expect(state.perfetto, `${name}: how to open the timeline in Perfetto`);
  // The timeline carried in the page is the one `apptracer timeline` writes.
  const pftrace = path.join(outDir, `${name}.pftrace`);
  execFileSync(apptracer, ['timeline', trace, '-o', pftrace, '--force'], { stdio: 'ignore' });
  const carried = await page.evaluate(() => document.querySelector('#timeline a[download]')?.href || '');
  expect(carried === `data:application/octet-stream;base64,${fs.readFileSync(pftrace).toString('base64')}`,
    `${name}: the page carries apptracer timeline's file (${carried.length} characters)`);
  expect(await page.locator('#timeline button', { hasText: 'Perfetto' }).count() === 1, `${name}: a button opens Perfetto`);
  const repeated = await repeatedTicks(page);
  expect(repeated.length === 0, `${name}: repeated tick labels: ${repeated.slice(0, 3).join('; ')}`);
  const overlaps = await overlappingTicks(page);
  expect(overlaps.length === 0, `${name}: overlapping tick labels: ${overlaps.slice(0, 5).join('; ')}`);

  // Clicking a heading sorts by it: the first column of whole numbers of a
  // table of several rows, clicked twice (descending, then ascending).
  const sorted = await page.evaluate(() => {
    for (const table of document.querySelectorAll('table.sortable')) {
      const rows = [...table.tBodies[0].rows];
      if (rows.length < 2) continue;
      const headings = table.tHead.rows[0].cells;
      for (let column = 0; column < headings.length; column++) {
        if (!rows.every((r) => /^-?\d+$/.test(r.cells[column].textContent))) continue;
        headings[column].click();
        headings[column].click();
        return { heading: headings[column].textContent, sort: headings[column].getAttribute('aria-sort'),
          values: [...table.tBodies[0].rows].map((r) => Number(r.cells[column].textContent)) };
      }
    }
    return null;
  });
  expect(sorted && sorted.sort === 'ascending' && sorted.values.every((v, i) => i === 0 || v >= sorted.values[i - 1]),
    `${name}: a clicked heading sorts (${JSON.stringify(sorted)})`);
  expect(state.canvases.length >= 3 && state.canvases.length === state.report.charts,
    `${name}: every chart has a canvas (${state.canvases.length} of ${state.report.charts})`);
  state.canvases.forEach((painted, i) => expect(painted > 500, `${name}: plot ${i} is drawn (${painted} pixels)`));
  expect(state.graphNodes > 0 && state.graphNodes === state.report.graphNodes, `${name}: DVDG nodes (${state.graphNodes})`);

  const graph = page.locator('#graph');
  await graph.scrollIntoViewIfNeeded();
  const shot = await graph.screenshot({ path: path.join(outDir, `${name}-graph.png`) });
  const painted = await paintedPixels(page, shot);
  expect(painted > 2000, `${name}: the graph screenshot is not blank (${painted} pixels)`);
  // Click the last value drawn, zoomed to (a graph of hundreds of values is
  // drawn fitted, its nodes too small to hit): the panel says what produced it.
  const target = await page.evaluate(() => {
    const cy = window.apptracerReport.cy;
    const node = cy.nodes().last();
    cy.zoom(1);
    cy.center(node);
    const box = cy.container().getBoundingClientRect();
    return { x: box.left + node.renderedPosition('x'), y: box.top + node.renderedPosition('y'), id: node.id() };
  });
  await page.mouse.click(target.x, target.y);
  const why = await page.locator('#why').innerText();
  expect(why.includes(target.id) && /Produced by|Nothing produced/.test(why), `${name}: clicking ${target.id} explains it: ${why.slice(0, 200)}`);
  await page.screenshot({ path: path.join(outDir, `${name}.png`), fullPage: true });
  await page.close();
  return state;
}

(async () => {
  fs.mkdirSync(outDir, { recursive: true });
  const profile = fs.mkdtempSync(path.join(outDir, 'profile-'));
  // A fresh profile directory (Playwright's --user-data-dir), removed afterwards.
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: executable,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run',
      '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
  try {
    const states = {};
    for (const trace of traces) states[path.basename(trace, '.db')] = await check(browser, trace);
    if (traces.length >= 2) await check(browser, traces[0], traces[1]);
    const vectorAdd = states.vector_add;
    if (vectorAdd) {
      expect(vectorAdd.rules.includes('pageable_copy') && vectorAdd.rules.includes('sync_copy'),
        `vector_add: its pageable synchronous copies are diagnosed (${vectorAdd.rules})`);
    }
    const um = states.um_bandwidth_h100;
    if (um) {
      expect(um.rules.includes('um_on_demand_migration'), `um_bandwidth_h100: on-demand migration (${um.rules})`);
      expect(um.lanes.some((l) => l.includes('unified-memory migrations')), `um_bandwidth_h100: migrations in the timeline (${um.lanes})`);
      expect(um.paths.some((p) => p.includes('unified-memory migrations')), `um_bandwidth_h100: migrations in bytes moved per path (${um.paths})`);
    }
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  for (const failure of failures) console.log(`FAIL ${failure}`);
  const failed = new Set(failures.map((f) => f.split(':')[0])).size;
  console.log(`${checked.length - failed} passed, ${failed} failed`);
  process.exit(failures.length ? 1 : 0);
})().catch((error) => {
  console.log(`FAIL ${error.stack || error}`);
  process.exit(1);
});
