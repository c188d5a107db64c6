// The thread-safety contract of runtime.h, tested: N sessions of one model on N threads; sessions
// created and freed concurrently; one session handed between threads; double frees refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "onnxc/runtime.h"
#include "session_check.h"
#include "tiny_model.h"
#include "tiny_reference.h"

namespace {

using ::testing::HasSubstr;

constexpr int kThreads = 4;

TEST(RuntimeThreads, SessionsOnSeparateThreadsMatchTheReference) {
  ModelPtr model;
  ASSERT_EQ(onnxc_model_from_desc(onnxc_model_tiny(), &model.m), ONNXC_OK) << onnxc_last_error();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      SessionPtr s;  // created and freed on this thread while the others run
      ASSERT_EQ(onnxc_session_create(model.m, nullptr, &s.s), ONNXC_OK) << onnxc_last_error();
      for (int i = 0; i < 25; i++) run_and_check(s.s, TinyCase(1 + (t + i) % 3, 2 + i % 5, static_cast<float>(t)));
    });
  }
  for (auto &th : threads) th.join();
}

TEST(RuntimeThreads, ModelFreedWhileSessionsRunOnOtherThreads) {
  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(onnxc_model_tiny(), &model), ONNXC_OK);
  std::vector<SessionPtr> sessions(kThreads);
  for (auto &s : sessions) ASSERT_EQ(onnxc_session_create(model, nullptr, &s.s), ONNXC_OK);
  onnxc_model_free(model);  // the sessions' references keep it alive
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; i++) run_and_check(sessions[static_cast<size_t>(t)].s, TinyCase(2, 3 + t));
    });
  for (auto &th : threads) th.join();
}

// One session, used by one thread at a time, passed along a chain of threads: each thread checks the
// outputs the previous one left, then runs with its own shape.
TEST(RuntimeThreads, OneSessionHandedBetweenThreads) {
  ModelPtr model;
  SessionPtr s;
  ASSERT_EQ(onnxc_model_from_desc(onnxc_model_tiny(), &model.m), ONNXC_OK);
  ASSERT_EQ(onnxc_session_create(model.m, nullptr, &s.s), ONNXC_OK);
  std::mutex m;
  std::condition_variable cv;
  int turn = 0;
  int64_t last_seq = -1;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; round++) {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return turn % kThreads == t; });
        if (last_seq >= 0) {  // the previous holder's outputs are still there
          onnxc_tensor z;
          ASSERT_EQ(onnxc_session_get_output_by_name(s.s, "z", &z), ONNXC_OK);
          EXPECT_EQ(dims_of(z), (std::vector<int64_t>{2, last_seq}));
        }
        last_seq = 1 + (turn % 6);
        run_and_check(s.s, TinyCase(2, last_seq));
        ++turn;
        cv.notify_all();
      }
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(turn, 5 * kThreads);
}

TEST(RuntimeFree, SessionFreedTwiceIsRefused) {
  ModelPtr model;
  ASSERT_EQ(onnxc_model_from_desc(onnxc_model_tiny(), &model.m), ONNXC_OK);
  onnxc_session *s = nullptr;
  ASSERT_EQ(onnxc_session_create(model.m, nullptr, &s), ONNXC_OK);
  onnxc_session_free(s);
  onnxc_session_free(s);  // refused, not a crash
  EXPECT_THAT(onnxc_last_error(), HasSubstr("onnxc_session_free"));
  EXPECT_THAT(onnxc_last_error(), HasSubstr("not a live session (freed twice?)"));
  // The model is untouched: a new session still runs.
  SessionPtr again;
  ASSERT_EQ(onnxc_session_create(model.m, nullptr, &again.s), ONNXC_OK);
  run_and_check(again.s, TinyCase(1, 3));
}

TEST(RuntimeFree, ModelFreedTwiceDoesNotTakeASessionsReference) {
  onnxc_model *model = nullptr;
  ASSERT_EQ(onnxc_model_from_desc(onnxc_model_tiny(), &model), ONNXC_OK);
  SessionPtr s;
  ASSERT_EQ(onnxc_session_create(model, nullptr, &s.s), ONNXC_OK);
  onnxc_model_free(model);
  onnxc_model_free(model);  // would have dropped the session's reference: refused instead
  EXPECT_THAT(onnxc_last_error(), HasSubstr("onnxc_model_free"));
  EXPECT_THAT(onnxc_last_error(), HasSubstr("not a live model (freed twice?)"));
  run_and_check(s.s, TinyCase(2, 2));  // the session's model is still alive
}

TEST(RuntimeFree, ForeignPointersAreRefused) {
  int not_a_handle = 0;
  onnxc_session_free(reinterpret_cast<onnxc_session *>(&not_a_handle));
  EXPECT_THAT(onnxc_last_error(), HasSubstr("not a live session"));
  onnxc_model_free(reinterpret_cast<onnxc_model *>(&not_a_handle));
  EXPECT_THAT(onnxc_last_error(), HasSubstr("not a live model"));
}

// Many create/run/free cycles: under LeakSanitizer (the sanitizer build) any leak fails the test.
TEST(RuntimeFree, CreateRunFreeCycles) {
  for (int i = 0; i < 200; i++) {
    onnxc_model *model = nullptr;
    onnxc_session *s = nullptr;
    ASSERT_EQ(onnxc_model_from_desc(onnxc_model_tiny(), &model), ONNXC_OK);
    ASSERT_EQ(onnxc_session_create(model, nullptr, &s), ONNXC_OK);
    run_and_check(s, TinyCase(1 + i % 2, 1 + i % 4));
    if (i % 2) onnxc_model_free(model);  // either order
    onnxc_session_free(s);
    if (!(i % 2)) onnxc_model_free(model);
  }
}

}  // namespace
