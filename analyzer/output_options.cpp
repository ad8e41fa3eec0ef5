#include "analyzer/output_options.h"

#include <algorithm>

namespace apptracer {

namespace {

// Every command's output options, for resolve_output_options.
std::vector<std::shared_ptr<OutputOptions>>& declared_outputs() {
  static std::vector<std::shared_ptr<OutputOptions>> outputs;
  return outputs;
}

std::vector<const CLI::Option*>& comma_holding_options() {
  static std::vector<const CLI::Option*> options;
  return options;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string format_names(const std::vector<FileFormat>& formats) {
  std::string names;
  for (const FileFormat& format : formats) names += (names.empty() ? "" : "|") + format.name;
  return names;
}

std::string extensions_of(const std::string& name, const std::vector<FileFormat>& formats) {
  for (const FileFormat& format : formats) {
    if (format.name != name || format.extensions.empty()) continue;
    std::string list;
    for (const std::string& extension : format.extensions) list += (list.empty() ? "" : " or ") + extension;
    return list;
  }
  return "";
}

CLI::Option* add_force(CLI::App* command, OutputOptions& options) {
  return command->add_flag("-f,--force", options.force, "Replace the output file if it exists");
}

void add_format(CLI::App* command, OutputOptions& options, const std::string& help) {
  std::vector<std::string> names;
  for (const FileFormat& format : options.formats) names.push_back(format.name);
  command->add_option("--format", options.format_given, help)
      ->check(CLI::IsMember(names))
      ->type_name("FORMAT");
}

std::shared_ptr<OutputOptions> declare(CLI::App* command) {
  auto options = std::make_shared<OutputOptions>();
  options->command = command;
  declared_outputs().push_back(options);
  return options;
}

void resolve(OutputOptions& options) {
  const std::string named = format_named_by(options.path, options.formats);
  std::string given = options.format_given;
  if (!options.alias_given.empty()) {
    if (!given.empty() && given != options.alias_given) {
      throw UsageError("--" + options.alias_given + " and --format " + given +
                       " disagree; give one of them");
    }
    given = options.alias_given;
  }
  if (!given.empty() && !named.empty() && given != named) {
    throw UsageError("-o " + options.path + " names a " + named + " file but --format is " + given +
                     "; drop --format or give -o the extension " + extensions_of(given, options.formats));
  }
  options.format = !given.empty() ? given : !named.empty() ? named : options.default_format;
  if (options.format.empty() && !options.path.empty() && !options.formats.empty()) {
    throw UsageError("-o " + options.path + ": say which format with --format " +
                     format_names(options.formats) + " (or give the file its extension)");
  }
}

}  // namespace

const std::vector<FileFormat>& result_formats() {
  static const std::vector<FileFormat> formats{
      {"table", {".txt"}}, {"csv", {".csv"}}, {"json", {".json"}}};
  return formats;
}

std::string format_named_by(const std::string& path, const std::vector<FileFormat>& formats) {
  for (const FileFormat& format : formats) {
    for (const std::string& extension : format.extensions) {
      if (ends_with(path, extension)) return format.name;
    }
  }
  return "";
}

std::shared_ptr<OutputOptions> printed_results(CLI::App* command) {
  std::shared_ptr<OutputOptions> options = declare(command);
  options->formats = result_formats();
  options->default_format = "table";
  add_format(command, *options,
             "table (aligned, for people), csv or json (default: from -o's extension, else table)");
  for (const char* alias : {"json", "csv"}) {
    command->add_flag_callback(std::string("--") + alias,
                               [raw = options.get(), alias] { raw->alias_given = alias; },
                               std::string("Same as --format ") + alias);
  }
  options->output_option =
      command->add_option("-o,--output", options->path,
                          "Write the results to FILE instead of standard output ('-': standard output)")
          ->type_name("FILE");
  options->force_option = add_force(command, *options);
  return options;
}

std::shared_ptr<OutputOptions> written_files(CLI::App* command, const std::string& output_help,
                                             const std::vector<FileFormat>& formats,
                                             bool has_default_format) {
  std::shared_ptr<OutputOptions> options = declare(command);
  options->formats = formats;
  if (!formats.empty()) {
    if (has_default_format) options->default_format = formats.front().name;
    std::string help = "What to write: " + format_names(formats) + " (default: from -o's extension";
    help += has_default_format ? ", else " + formats.front().name + ")" : ")";
    add_format(command, *options, help);
  }
  options->output_option = command->add_option("-o,--output", options->path, output_help)->type_name("FILE");
  options->force_option = add_force(command, *options);
  return options;
}

void resolve_output_options() {
  for (const std::shared_ptr<OutputOptions>& options : declared_outputs()) {
    if (options->command->parsed()) resolve(*options);
  }
}

PrintedOutput::PrintedOutput(const OutputOptions& options, const std::vector<std::string>& inputs)
    : file_(options.path.empty() ? "-" : options.path, inputs, options.force) {}

CLI::Option* values_hold_commas(CLI::Option* option) {
  comma_holding_options().push_back(option);
  return option;
}

void accept_comma_lists(CLI::App& app) {
  const std::vector<const CLI::Option*>& exceptions = comma_holding_options();
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    for (CLI::Option* option : command->get_options([](CLI::Option*) { return true; })) {
      bool repeats = option->get_items_expected_max() > 1 && option->nonpositional();
      bool excepted = std::find(exceptions.begin(), exceptions.end(), option) != exceptions.end();
      if (repeats && !excepted) option->delimiter(',');
    }
  }
}

}  // namespace apptracer
