// Runs the real `apptracer` binary, as a user would, and captures what it says.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace apptracer::dvdg {

struct CommandOutput {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `arguments` is appended to the binary path as shell words; `environment`
// (like "PATH=/x") is set for that one command.
inline CommandOutput run_apptracer(const std::string& arguments,
                                   const std::string& environment = "") {
  // Per process: ctest runs the tests of this binary in parallel processes.
  std::string base = ::testing::TempDir() + "apptracer_" + std::to_string(getpid());
  std::string out_path = base + "_stdout.txt";
  std::string err_path = base + "_stderr.txt";
  std::string command = environment + " " + std::string(APPTRACER_BIN) + " " + arguments + " >" +
                        out_path + " 2>" + err_path;
  int status = std::system(command.c_str());
  CommandOutput output;
  output.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  output.out = read_file(out_path);
  output.err = read_file(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return output;
}

}  // namespace apptracer::dvdg
