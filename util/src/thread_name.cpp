#include "wirezip/util/thread_name.hpp"

#include <pthread.h>

#include <algorithm>
#include <array>

namespace wirezip::threads {

namespace {
constexpr std::size_t kLongestName = 15;  // the kernel's TASK_COMM_LEN, less the terminator
}

void name_thread(std::jthread& thread, std::string_view name) {
  std::array<char, kLongestName + 1> text{};
  std::copy_n(name.begin(), std::min(name.size(), kLongestName), text.begin());
  pthread_setname_np(thread.native_handle(), text.data());
}

std::string thread_name(std::jthread& thread) {
  std::array<char, kLongestName + 1> text{};
  if (pthread_getname_np(thread.native_handle(), text.data(), text.size()) != 0) return {};
  return text.data();
}

}  // namespace wirezip::threads
