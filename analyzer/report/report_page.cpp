#include "analyzer/report/report_page.h"

#include <stdexcept>

#include "analyzer/report/report_assets.h"

namespace apptracer::report {

namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

std::string html_escaped(std::string text) {
  replace_all(text, "&", "&amp;");
  replace_all(text, "<", "&lt;");
  replace_all(text, ">", "&gt;");
  replace_all(text, "\"", "&quot;");
  return text;
}

// Inside <script> nothing may read as "</script": "<\/" means "</" in JSON and JS strings.
std::string script_safe(std::string text) {
  replace_all(text, "</", "<\\/");
  return text;
}

void fill(std::string& page, const std::string& placeholder, const std::string& value) {
  size_t at = page.find(placeholder);
  if (at == std::string::npos) throw std::logic_error("report page template lacks " + placeholder);
  page.replace(at, placeholder.size(), value);
}

}  // namespace

std::string report_html(const nlohmann::json& data, const std::string& title) {
  std::string page = kReport_page;
  // Filled in this order so no inserted text is searched for the next placeholder.
  fill(page, "{{TITLE}}", html_escaped(title));
  fill(page, "{{STYLE}}", kReport_style);
  std::string script = script_safe(kReport_script);
  std::string json = script_safe(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  size_t data_at = page.find("{{DATA}}");
  size_t script_at = page.find("{{SCRIPT}}");
  if (data_at == std::string::npos || script_at == std::string::npos || script_at < data_at)
    throw std::logic_error("report page template lacks {{DATA}} before {{SCRIPT}}");
  page.replace(script_at, 10, script);
  page.replace(data_at, 8, json);
  return page;
}

}  // namespace apptracer::report
