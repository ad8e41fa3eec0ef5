// The writer and the program's threads never wait on each other without a
// bound. The cycle that hung a real training run, rebuilt on CPU: CUPTI's
// worker hands a completed activity buffer over while holding its own lock,
// and turning it into records waits at the record-memory cap for the writer;
// a writer that asked CUPTI for activity in place waited for that lock.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "capture/activity_flusher.h"
#include "launch_records.h"
#include "store/writer.h"

namespace apptracer {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Record thread_record() {
  Record r{};
  r.type = RecordType::Thread;
  return r;
}

// Fills two chunks (the smallest cap) and one record more.
constexpr int kPastTheCap = 2 * RecordBuffers::kChunkRecords + 1;

// Appends on a thread of its own, ended before the buffers are (a thread's
// buffer is handed back when it exits).
void append_on_a_thread(RecordBuffers& buffers, int count) {
  std::thread([&] {
    for (int i = 0; i < count; ++i) {
      Record r = thread_record();
      buffers.append(r);
    }
  }).join();
}

TEST(RecordBuffersStallTest, AProducerAtTheCapGivesUpOnceTheWriterShowsNoProgress) {
  RecordBuffers buffers(1, 200'000'000);
  int reported = 0;
  buffers.set_stall_reporter([&](uint64_t) { ++reported; });
  auto start = Clock::now();
  append_on_a_thread(buffers, kPastTheCap);
  EXPECT_LT(seconds_since(start), 2.0) << "waited past the stall limit";
  EXPECT_EQ(buffers.stalls(), 1u);
  EXPECT_EQ(reported, 1);
  EXPECT_GE(buffers.dropped_records(), 1u);

  // Stalled: later records are dropped at once, not after another wait of
  // the 0.2 s stall limit (a loaded machine may take a while to start a thread).
  start = Clock::now();
  append_on_a_thread(buffers, 100);
  EXPECT_LT(seconds_since(start), 0.15);
  EXPECT_EQ(buffers.stalls(), 1u) << "one stall, reported once";

  // The writer frees a chunk: records are stored again.
  buffers.drain([](const Record*, size_t) {});
  uint64_t dropped = buffers.dropped_records();
  append_on_a_thread(buffers, 1);
  EXPECT_EQ(buffers.dropped_records(), dropped);
}

TEST(RecordBuffersStallTest, AProducerWaitsAsLongAsTheWriterMakesProgress) {
  RecordBuffers buffers(1, 300'000'000);
  std::atomic<bool> producer_done{false};
  std::thread producer([&] {
    for (int i = 0; i < kPastTheCap; ++i) {
      Record r = thread_record();
      buffers.append(r);
    }
    producer_done = true;
  });
  // A slow pass: working, freeing nothing, for three stall limits.
  auto start = Clock::now();
  while (seconds_since(start) < 0.9) {
    buffers.note_progress("writing rows");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(producer_done) << "the producer waits for a working writer";
  buffers.drain([](const Record*, size_t) {});
  producer.join();
  EXPECT_EQ(buffers.dropped_records(), 0u);
  EXPECT_EQ(buffers.stalls(), 0u);
}

// A writer whose rows wait for GPU activity asks for it; "CUPTI" here is a
// lock its worker holds while appending far past the cap.
class WriterStallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "writer-stall-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    remove_files();
    config_.output = path_;
    config_.flush_period_ms = 10;
    config_.stall_ms = 2000;
  }
  void TearDown() override { remove_files(); }
  void remove_files() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }

  // CUPTI's worker, holding the activity lock: a launch whose GPU times
  // have not come (the writer asks for them), then `count` records.
  static void deliver_activity(std::mutex& cupti_lock, RecordBuffers& buffers, int count) {
    std::lock_guard<std::mutex> lock(cupti_lock);
    Record launch{};
    launch.type = RecordType::Kernel;
    launch.correlation_id = launch.own_correlation_id = 7;
    launch.kernel.device = -1;
    launch.kernel.launch_kind = LaunchKind::Driver;
    buffers.append(launch);
    for (int i = 0; i < count; ++i) {
      Record r = thread_record();
      buffers.append(r);
    }
  }

  // Runs CUPTI's worker far past the cap; the seconds it took.
  static double worker_seconds(std::mutex& cupti_lock, RecordBuffers& buffers) {
    auto start = Clock::now();
    std::thread(deliver_activity, std::ref(cupti_lock), std::ref(buffers), 20 * kPastTheCap).join();
    return seconds_since(start);
  }

  std::string path_;
  Config config_;
  AllocationRegistry registry_;
  StringTable strings_;
};

TEST_F(WriterStallTest, AWriterThatOnlyAsksForActivityKeepsDrainingWhileTheFlushWaits) {
  RecordBuffers buffers(1, uint64_t{config_.stall_ms} * 1'000'000);
  std::mutex cupti_lock;
  std::atomic<int> flushes{0};
  ActivityFlusher flusher(
      [&](bool) {
        std::lock_guard<std::mutex> lock(cupti_lock);
        ++flushes;
      },
      nullptr);
  Writer writer(buffers, registry_, strings_, config_);
  writer.set_activity_request([&](bool forced) { flusher.request(forced); });
  writer.start();
  flusher.start();
  EXPECT_LT(worker_seconds(cupti_lock, buffers), 1.5) << "the worker waited for a writer stuck behind it";
  EXPECT_EQ(buffers.dropped_records(), 0u);
  EXPECT_EQ(buffers.stalls(), 0u);
  // Once the worker lets go, the flush the writer asked for is served.
  auto released = Clock::now();
  while (flushes == 0 && seconds_since(released) < 5) std::this_thread::yield();
  EXPECT_GE(flushes, 1);
  flusher.stop();
  writer.finish("complete");
}

// A writer whose activity asks are counted.
class ActivityAsksTest : public WriterStallTest {
 protected:
  void start_writer(int period_ms) {
    config_.flush_period_ms = period_ms;
    buffers_ = std::make_unique<RecordBuffers>(1, uint64_t{config_.stall_ms} * 1'000'000);
    writer_ = std::make_unique<Writer>(*buffers_, registry_, strings_, config_);
    writer_->set_activity_request([this](bool) { ++asks_; });
    writer_->start();
  }

  // On a thread of the program's, `bursts` times: a launch whose GPU times
  // never come and the rest of a chunk, which wakes the writer; then a pause.
  void launch_in_bursts(uint32_t bursts, std::chrono::milliseconds pause) {
    std::thread([&] {
      for (uint32_t burst = 0; burst < bursts; ++burst) {
        Record launch = testing::launch_record(7 + burst, 0, 1 + burst);
        buffers_->append(launch);
        for (int i = 1; i < RecordBuffers::kChunkRecords; ++i) {
          Record r = thread_record();
          buffers_->append(r);
        }
        std::this_thread::sleep_for(pause);
      }
    }).join();
  }

  std::unique_ptr<RecordBuffers> buffers_;
  std::unique_ptr<Writer> writer_;
  std::atomic<int> asks_{0};
};

TEST_F(ActivityAsksTest, AtMostFourTimesAPeriodHoweverOftenTheWriterPasses) {
  start_writer(100);
  auto start = Clock::now();
  // Past the two-chunk cap unless the writer passes after (nearly) every burst.
  launch_in_bursts(200, std::chrono::milliseconds(1));
  double seconds = seconds_since(start);
  writer_->finish("complete");
  EXPECT_EQ(buffers_->dropped_records(), 0u) << "the writer passed as the chunks filled";
  EXPECT_GE(asks_, 1) << "the launch waiting for its GPU times was asked for";
  EXPECT_LE(asks_, seconds / 0.025 + 2) << "asked more often than four times a period";
}

TEST_F(ActivityAsksTest, OnePutOffForBeingTooSoonIsMadeOnceDueWithoutWaitingForMoreRecords) {
  // A long period, so that a loaded machine's late wake-ups stay far inside
  // the gap between the put-off ask's due time and the next pass.
  start_writer(1000);  // asks at most every 250 ms
  auto start = Clock::now();
  // The second burst's ask is too soon after the first's.
  launch_in_bursts(2, std::chrono::milliseconds(5));
  // Then nothing: the next pass would come a period later.
  while (asks_ < 2 && seconds_since(start) < 0.75) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_GE(asks_, 2) << "the put-off ask waited for the writer's period";
  writer_->finish("complete");
}

TEST_F(WriterStallTest, AProducerBehindAWriterThatWaitsForItGivesUpAfterTheStallLimit) {
  config_.stall_ms = 300;
  RecordBuffers buffers(1, uint64_t{config_.stall_ms} * 1'000'000);
  std::mutex cupti_lock;
  // The cycle itself: this writer asks in place, and waits for the lock.
  Writer writer(buffers, registry_, strings_, config_);
  writer.set_activity_request([&](bool) { std::lock_guard<std::mutex> lock(cupti_lock); });
  std::string stage;
  buffers.set_stall_reporter([&](uint64_t) { stage = buffers.consumer_stage(); });
  writer.start();
  EXPECT_LT(worker_seconds(cupti_lock, buffers), 3.0) << "the program was held past the stall limit";
  EXPECT_EQ(buffers.stalls(), 1u);
  EXPECT_GT(buffers.dropped_records(), 0u);
  EXPECT_FALSE(stage.empty()) << "the stall report names what the writer was doing";
  writer.finish("complete");
}

}  // namespace
}  // namespace apptracer
