// Each `apptracer` subcommand lives in its own file and adds itself to the
// command line here. A command's callback returns the process exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzer/output_options.h"
#include "analyzer/trace/step_window.h"

namespace apptracer {

// Set by a subcommand's callback; main returns it.
using CommandResult = std::function<int()>;

// Every option declared with input_files, of every command.
inline std::vector<const CLI::Option*>& input_file_options() {
  static std::vector<const CLI::Option*> options;
  return options;
}

// Declares `option` as naming files the command reads (its traces, system
// files): main passes what it names to declare_command_inputs (output_file.h),
// so nothing the command writes can replace one of them. Returns `option`.
inline CLI::Option* input_files(CLI::Option* option) {
  input_file_options().push_back(option);
  return option;
}

// Declares --steps A-B and --steady on a command that can look at part of a
// trace; the command applies what they chose with Trace::limit_to_steps
// (analyzer/trace/step_window.h) when selection->any().
inline std::shared_ptr<trace::StepSelection> step_options(CLI::App* command) {
  auto selection = std::make_shared<trace::StepSelection>();
  auto* steps = command->add_option_function<std::string>(
      "--steps",
      [selection](const std::string& text) {
        try {
          selection->numbers = trace::parse_step_numbers(text);
        } catch (const std::invalid_argument& error) {
          throw CLI::ValidationError(error.what());
        }
      },
      "Look only at these steps (numbered as `stats --report steps` lists them): A-B or N");
  steps->type_name("A-B");
  command->add_flag("--steady", selection->steady, "Look only at the steady steps: every step after start-up")
      ->excludes(steps);
  return selection;
}

// Declares --untraced-step MS on a command that prices savings per step:
// the program's step time measured without tracing (its own log, a timer).
// Tracing slows the program's own host code between CUDA calls by an amount
// no measurement of the machine predicts (it follows the program's cache
// behaviour); given the untraced step, the savings of changes that remove
// host time (a CUDA graph) are priced against it. Nanoseconds once parsed.
inline std::shared_ptr<std::optional<int64_t>> untraced_step_option(CLI::App* command) {
  auto step_ns = std::make_shared<std::optional<int64_t>>();
  command
      ->add_option_function<double>(
          "--untraced-step",
          [step_ns](double ms) {
            if (!(ms > 0) || ms > 1e9)
              throw CLI::ValidationError("--untraced-step: give the step's time in ms, e.g. 4.2");
            *step_ns = static_cast<int64_t>(ms * 1e6 + 0.5);
          },
          "The program's steady step measured without tracing, in ms (its own log or timer): savings "
          "per step are priced against it instead of the traced step less what tracing is known to add")
      ->type_name("MS");
  return step_ns;
}

// The groups `apptracer --help` lists the commands in. A command's group says
// which output options it takes (output_options.h); the command table in
// main puts each command in one, and a test holds every command to its
// group's options.
inline constexpr const char* kPrintsResults =
    "Commands that print results (--format table|csv|json, -o FILE, -f/--force)";
inline constexpr const char* kWritesFiles = "Commands that write files (-o FILE, -f/--force)";

void add_record_command(CLI::App& app, CommandResult& result);
void add_info_command(CLI::App& app, CommandResult& result);
void add_stats_command(CLI::App& app, CommandResult& result);
void add_timeline_command(CLI::App& app, CommandResult& result);
void add_query_command(CLI::App& app, CommandResult& result);
void add_merge_command(CLI::App& app, CommandResult& result);
void add_dvdg_command(CLI::App& app, CommandResult& result);
void add_links_command(CLI::App& app, CommandResult& result);
void add_whatif_command(CLI::App& app, CommandResult& result);
void add_diff_command(CLI::App& app, CommandResult& result);

void add_diagnose_command(CLI::App& app, CommandResult& result);
void add_report_command(CLI::App& app, CommandResult& result);
void add_schema_command(CLI::App& app, CommandResult& result);

}  // namespace apptracer
