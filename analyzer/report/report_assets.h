// The report page's template, style and bundled JavaScript (Chart.js,
// Cytoscape.js with dagre, and web/src), generated at build time from
// web/ by embed_assets.cmake.
#pragma once

namespace apptracer::report {

extern const char* const kReport_page;    // web/src/page.html: {{TITLE}} {{STYLE}} {{DATA}} {{SCRIPT}}
extern const char* const kReport_style;   // web/src/page.css
extern const char* const kReport_script;  // the esbuild bundle of web/src/main.js

}  // namespace apptracer::report
