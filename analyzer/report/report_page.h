// The report as one self-contained HTML page: style, data and script inline.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace apptracer::report {

std::string report_html(const nlohmann::json& data, const std::string& title);

}  // namespace apptracer::report
