// "did you mean 'stats'?" for a mistyped command, as git and nsys say it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace apptracer {

// The command of `names` that `typed` most likely meant (a prefix of it, or
// at most two edits away), or "" when none is close.
std::string closest_command(const std::string& typed, const std::vector<std::string>& names);

// "'stat' is not a command; did you mean 'stats'?" when `error` is about a
// word `app` did not expect that is close to one of its commands, else "".
std::string command_suggestion(const CLI::App& app, const CLI::Error& error);

}  // namespace apptracer
