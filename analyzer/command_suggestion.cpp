#include "analyzer/command_suggestion.h"

#include <algorithm>

namespace apptracer {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_command(const std::string& typed, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = 3;  // more than two edits is another word
  for (const std::string& name : names) {
    bool prefix = typed.size() >= 3 && name.compare(0, typed.size(), typed) == 0;
    size_t distance = prefix ? 1 : edit_distance(typed, name);
    if (distance < best_distance) best = name, best_distance = distance;
  }
  return best;
}

std::string command_suggestion(const CLI::App& app, const CLI::Error& error) {
  // A word that is no command is left over: "A subcommand is required", or
  // "The following arguments were not expected".
  if (error.get_name() != "RequiredError" && error.get_name() != "ExtrasError") return "";
  std::vector<std::string> left = app.remaining();
  if (left.empty()) return "";
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands({})) names.push_back(command->get_name());
  std::string meant = closest_command(left.front(), names);
  if (meant.empty()) return "";
  return "'" + left.front() + "' is not a command; did you mean '" + meant + "'?";
}

}  // namespace apptracer
