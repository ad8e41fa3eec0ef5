// The report in a real browser: headless Chromium (Debian's package, driven
// by playwright-core from the report's own node_modules) opens the report of
// each bundled trace from a file:// URL with the network cut off, and
//  * no console error, page error or network request happens;
//  * the diagnoses are listed, every plot's canvas has pixels drawn on it;
//  * the DVDG has nodes, a screenshot of it is not blank, and clicking a
//    value lists what produced it.
// Screenshots are kept in OUT_DIR. Exits 77 (skipped) only when Chromium is
// not installed.
//
//   node browser_test.cjs NODE_MODULES APPTRACER OUT_DIR TRACE...
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const [nodeModules, apptracer, outDir, ...traces] = process.argv.slice(2);
const executable = process.env.APPTRACER_CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(executable)) {
  console.log(`SKIPPED: no Chromium at ${executable}; install Debian's chromium package (scripts/setup.sh does)`);
  process.exit(77);
}
const { chromium } = require(path.resolve(nodeModules, 'playwright-core'));

const failures = [];
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

async function check(browser, trace) {
  const name = path.basename(trace, '.db');
  const html = path.join(outDir, `${name}.html`);
  execFileSync(apptracer, ['report', trace, '-o', html, '--force'], { stdio: 'inherit' });
  const page = await browser.newPage();
  const problems = [];
  page.on('console', (message) => { if (message.type() === 'error') problems.push(`console: ${message.text()}`); });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => { if (!request.url().startsWith('file:') && !request.url().startsWith('data:')) problems.push(`network: ${request.url()}`); });
  await page.goto(`file://${html}`);
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60000 });
  await page.waitForTimeout(500);  // the graph layout and last paints

  const state = await page.evaluate(() => ({
    report: { charts: window.apptracerReport.charts, findings: window.apptracerReport.findings,
      graphNodes: window.apptracerReport.graphNodes },
    findings: document.querySelectorAll('.finding').length,
    rules: [...document.querySelectorAll('.finding .rule')].map((e) => e.textContent),
    sections: [...document.querySelectorAll('main > section')].map((s) => s.id),
    canvases: [...document.querySelectorAll('.plot canvas')].map((c) => {
      const pixels = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let painted = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
      return painted;
    }),
    graphNodes: Number(document.getElementById('graph')?.dataset.nodes || 0),
  }));
  console.log(`${name}: ${JSON.stringify({ ...state, canvases: state.canvases.length })}`);
  expect(problems.length === 0, `${name}: ${problems.join('; ')}`);
  expect(state.findings > 0 && state.findings === state.report.findings, `${name}: diagnoses listed (${state.findings})`);
  expect(state.sections[0] === 'diagnoses', `${name}: diagnoses come first (${state.sections})`);
  for (const id of ['summary', 'kernels', 'transfers', 'memory', 'timeline', 'nvtx', 'analyses', 'dvdg', 'whatif'])
    expect(state.sections.includes(id), `${name}: section ${id}`);
  expect(state.canvases.length >= 3 && state.canvases.length === state.report.charts,
    `${name}: every chart has a canvas (${state.canvases.length} of ${state.report.charts})`);
  state.canvases.forEach((painted, i) => expect(painted > 500, `${name}: plot ${i} is drawn (${painted} pixels)`));
  expect(state.graphNodes > 0 && state.graphNodes === state.report.graphNodes, `${name}: DVDG nodes (${state.graphNodes})`);

  const graph = page.locator('#graph');
  await graph.scrollIntoViewIfNeeded();
  const shot = await graph.screenshot({ path: path.join(outDir, `${name}-graph.png`) });
  const painted = await paintedPixels(page, shot);
  expect(painted > 2000, `${name}: the graph screenshot is not blank (${painted} pixels)`);
  // Click the last value drawn: the panel says what produced it.
  const target = await page.evaluate(() => {
    const cy = window.apptracerReport.cy;
    const node = cy.nodes().last();
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
    const vectorAdd = states.vector_add;
    if (vectorAdd) {
      expect(vectorAdd.rules.includes('pageable_copy') && vectorAdd.rules.includes('sync_copy'),
        `vector_add: its pageable synchronous copies are diagnosed (${vectorAdd.rules})`);
    }
    const um = states.um_bandwidth_h100;
    if (um) expect(um.rules.includes('um_on_demand_migration'), `um_bandwidth_h100: on-demand migration (${um.rules})`);
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  for (const failure of failures) console.log(`FAIL ${failure}`);
  console.log(`${traces.length - new Set(failures.map((f) => f.split(':')[0])).size} passed, ${new Set(failures.map((f) => f.split(':')[0])).size} failed`);
  process.exit(failures.length ? 1 : 0);
})().catch((error) => {
  console.log(`FAIL ${error.stack || error}`);
  process.exit(1);
});
