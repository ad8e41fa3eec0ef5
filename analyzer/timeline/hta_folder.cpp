#include "analyzer/timeline/hta_folder.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "analyzer/output_file.h"
#include "analyzer/timeline/chrome_json_writer.h"
#include "analyzer/timeline/threaded_sink.h"

namespace apptracer {

namespace {

// One process's file.
struct ProcessFile {
  std::unique_ptr<OutputFile> file;
  std::unique_ptr<ChromeJsonWriter> writer;
  TimelineRank rank;
  size_t tracks = 0;  // handed to its writer so far
};

// Hands each process's tracks, slices and counter values to its own writer,
// the tracks numbered as that writer was handed them.
class ProcessSplitSink : public TimelineSink {
 public:
  explicit ProcessSplitSink(std::map<int64_t, ProcessFile>& files) : files_(files) {}

  void source(const TimelineSource& source) override {
    for (auto& [process, file] : files_) {
      TimelineSource own;
      own.rank = file.rank;
      for (const TimelineDevice& device : source.devices) {
        if (device.process == process) own.devices.push_back(device);
      }
      file.writer->source(own);
    }
  }

  void track(const TimelineTrack& track) override {
    ProcessFile& file = files_.at(track.process);
    tracks_.push_back({&file, file.tracks++});
    file.writer->track(track);
  }

  void slice(const TimelineSlice& slice) override {
    auto [file, index] = tracks_[slice.track];
    own_slice_ = slice;  // assigned, not made: its strings' and lists' memory reused
    own_slice_.track = index;
    file->writer->slice(own_slice_);
  }

  void counter(const TimelineCounter& counter) override {
    auto [file, index] = tracks_[counter.track];
    TimelineCounter own = counter;
    own.track = index;
    file->writer->counter(own);
  }

  void finish() override {
    for (auto& [process, file] : files_) file.writer->finish();
  }

 private:
  std::map<int64_t, ProcessFile>& files_;
  std::vector<std::pair<ProcessFile*, size_t>> tracks_;  // by the timeline's track index
  TimelineSlice own_slice_;  // each slice as its process's file numbers its track
};

bool is_trace_file(const std::string& name) {
  auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".json") || ends_with(".gz");
}

void make_directory(const std::string& directory) {
  if (mkdir(directory.c_str(), 0777) == 0 || errno == EEXIST) {
    struct stat info {};
    if (stat(directory.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return;
    throw std::runtime_error(directory + ": exists and is not a directory; name a directory for --hta");
  }
  throw std::runtime_error(directory + ": cannot create the directory (" + std::strerror(errno) + ")");
}

// Another trace file in the folder would be read by HTA as a rank of this job.
void check_no_other_traces(const std::string& directory, const std::set<std::string>& ours) {
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    std::string name = entry.path().filename().string();
    if (is_trace_file(name) && !ours.count(name)) {
      throw std::runtime_error(directory + ": holds " + name +
                               ", which HTA would read as a rank too; choose a new or empty folder");
    }
  }
}

}  // namespace

HtaFolder write_hta_folder(trace::Trace& trace, const std::string& trace_path,
                           const std::string& directory, bool force, Progress& progress,
                           const TimelineContent& content) {
  const std::vector<trace::TraceProcess>& processes = trace.processes().list;
  std::map<int64_t, TimelineRank> ranks = process_ranks(trace);
  std::set<int64_t> distinct;
  for (const auto& [process, rank] : ranks) distinct.insert(rank.rank);
  HtaFolder folder;
  folder.ranks_by_order = ranks.size() != processes.size() || distinct.size() != processes.size();
  std::map<int64_t, ProcessFile> files;
  std::set<std::string> names;
  for (size_t i = 0; i < processes.size(); ++i) {
    int64_t process = processes[i].process_id;
    TimelineRank rank = folder.ranks_by_order
                            ? TimelineRank{"", static_cast<int64_t>(i), static_cast<int64_t>(processes.size())}
                            : ranks.at(process);
    files[process].rank = rank;
    names.insert("rank" + std::to_string(rank.rank) + ".json");
  }
  make_directory(directory);
  check_no_other_traces(directory, names);
  for (auto& [process, file] : files) {
    std::string path = directory + "/rank" + std::to_string(file.rank.rank) + ".json";
    file.file = std::make_unique<OutputFile>(path, std::vector<std::string>{trace_path}, force);
    file.writer = std::make_unique<ChromeJsonWriter>(file.file->stream(),
                                                     ChromeJsonTimes::WholeMicroseconds);
    folder.files.push_back(path);
  }
  ProcessSplitSink sink(files);
  ThreadedSink threaded(sink);
  folder.counts = stream_timeline(trace, threaded, progress, content);
  for (auto& [process, file] : files) file.file->commit();
  return folder;
}

}  // namespace apptracer
